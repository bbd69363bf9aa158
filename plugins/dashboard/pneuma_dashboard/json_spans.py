"""Where each value of a JSON text is: a small reader that keeps the
character span of every value and member, so a layout edit can change a
tile's four numbers in the file's own text and leave everything else of it
(indentation, key order, the agent's line breaks) as it was, and so a
problem can name the line a tile starts on.

It reads what ``json.loads`` reads (the values themselves come from
``json``'s own string and number scanners); it is not a second parser of
meaning, only of position.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SPACE = re.compile(r"[ \t\n\r]*")
_LITERALS = {"true": True, "false": False, "null": None}


@dataclass
class Node:
    """One JSON value at ``text[start:end]``; ``members`` for an object
    (key -> node, in file order), ``items`` for an array."""

    start: int
    end: int
    value: object = None
    members: dict[str, Node] = field(default_factory=dict)
    items: list[Node] = field(default_factory=list)


def parse_spans(text: str) -> Node:
    """The span tree of ``text``; raises ``json.JSONDecodeError`` (with
    the line and column) where the text is not JSON."""
    node, end = _value(text, _skip(text, 0))
    end = _skip(text, end)
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return node


def line_of(text: str, offset: int) -> int:
    """The 1-based line of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1


def _skip(text: str, pos: int) -> int:
    found = _SPACE.match(text, pos)
    return found.end() if found else pos


def _value(text: str, pos: int) -> tuple[Node, int]:
    if pos >= len(text):
        raise json.JSONDecodeError("Expecting value", text, pos)
    char = text[pos]
    if char == "{":
        return _object(text, pos)
    if char == "[":
        return _array(text, pos)
    if char == '"':
        value, end = scanstring(text, pos + 1)
        return Node(pos, end, value), end
    for word, literal in _LITERALS.items():
        if text.startswith(word, pos):
            return Node(pos, pos + len(word), literal), pos + len(word)
    number = _NUMBER.match(text, pos)
    if number:
        return Node(pos, number.end(), json.loads(number.group())), number.end()
    raise json.JSONDecodeError("Expecting value", text, pos)


def _object(text: str, pos: int) -> tuple[Node, int]:
    node = Node(pos, pos, {})
    pos = _skip(text, pos + 1)
    if text.startswith("}", pos):
        node.end = pos + 1
        node.value = {}
        return node, pos + 1
    values: dict[str, object] = {}
    while True:
        if not text.startswith('"', pos):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
        key, pos = scanstring(text, pos + 1)
        pos = _skip(text, pos)
        if not text.startswith(":", pos):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
        child, pos = _value(text, _skip(text, pos + 1))
        node.members[key] = child  # a repeated key: the last wins, as in json.loads
        values[key] = child.value
        pos = _skip(text, pos)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
            continue
        if text.startswith("}", pos):
            node.end, node.value = pos + 1, values
            return node, pos + 1
        raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)


def _array(text: str, pos: int) -> tuple[Node, int]:
    node = Node(pos, pos, [])
    pos = _skip(text, pos + 1)
    if text.startswith("]", pos):
        node.end = pos + 1
        return node, pos + 1
    while True:
        child, pos = _value(text, pos)
        node.items.append(child)
        pos = _skip(text, pos)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
            continue
        if text.startswith("]", pos):
            node.end, node.value = pos + 1, [item.value for item in node.items]
            return node, pos + 1
        raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)


_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def node_at(root: Node, path: str) -> Node | None:
    """The deepest node of ``root`` on ``path`` (``tiles[3].spec.mark``):
    where a problem at that path is, or as near to it as the text goes."""
    node = root
    for key, index in _STEP.findall(path if path.startswith((".", "[")) else "." + path):
        child = node.items[int(index)] if index and int(index) < len(node.items) else node.members.get(key)
        if child is None:
            break
        node = child
    return node
