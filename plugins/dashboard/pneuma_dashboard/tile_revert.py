"""One tile's change of a turn undone on its own (the review's Revert):
the tile's text in dashboard.json put back as it was before the turn (or
taken out, for a tile the turn added; put back after the tile it followed,
for one it removed), every other character of the file as it is now, so the
turn's other changes and the person's edits since stay.

Data files and the whole board are reverted as files (the host's default).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from pneuma.api import Change, TurnFiles, text_of
from pneuma_dashboard.board import BOARD_FILE
from pneuma_dashboard.json_spans import Node, parse_spans

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9:._/@#=+-]")


def change_id(*parts: str) -> str:
    """A change id made of ``parts`` (a tile's id may hold any character)."""
    return _UNSAFE_ID.sub("_", ":".join(parts))[:200]


def revert(files: TurnFiles, change: Change, current: Mapping[str, bytes | None]) -> Mapping[str, bytes | None]:
    answer: dict[str, bytes | None] = {}
    for path in change.files:
        now_text, before_text = text_of(current.get(path)), text_of(files.before(path))
        if path != BOARD_FILE or now_text is None or before_text is None or not change.id.startswith(
                ("tile:", "board:title")):
            answer[path] = files.before(path)
            continue
        try:
            text = _revert_in_text(change.id, parse_spans(before_text), before_text, parse_spans(now_text), now_text)
            json.loads(text)
        except json.JSONDecodeError:
            raise ValueError(f"{BOARD_FILE} is not valid JSON now; revert the whole file instead") from None
        answer[path] = text.encode("utf-8")
    return answer


def _tiles(root: Node) -> list[Node]:
    tiles = root.members.get("tiles") if isinstance(root.value, dict) else None
    return [n for n in (tiles.items if tiles else []) if isinstance(n.value, dict)]


def _key(node: Node) -> str:
    """The change id of the tile ``node`` is."""
    value = node.value
    return change_id("tile", str(value.get("id"))) if isinstance(value, dict) else ""


def _find(nodes: list[Node], wanted: str) -> Node | None:
    return next((n for n in nodes if _key(n) == wanted), None)


def _revert_in_text(wanted: str, before: Node, before_text: str, now: Node, now_text: str) -> str:
    if wanted == "board:title":
        old, new = before.members.get("title"), now.members.get("title")
        if new is None:
            return now_text
        return now_text[:new.start] + (before_text[old.start:old.end] if old else '""') + now_text[new.end:]
    old_tile, new_tile = _find(_tiles(before), wanted), _find(_tiles(now), wanted)
    if old_tile is not None and new_tile is not None:
        return now_text[:new_tile.start] + before_text[old_tile.start:old_tile.end] + now_text[new_tile.end:]
    if new_tile is not None:
        return _without(now_text, _tiles(now), new_tile)
    if old_tile is not None:
        return _with(now_text, now, before_text, _tiles(before), old_tile)
    return now_text


def _without(text: str, items: list[Node], node: Node) -> str:
    """``text`` without the tile ``node`` and the comma that joins it."""
    at = items.index(node)
    if at > 0:
        return text[:items[at - 1].end] + text[node.end:]
    if len(items) > 1:
        return text[:node.start] + text[items[1].start:]
    return text[:node.start] + text[node.end:]


def _with(text: str, now: Node, before_text: str, before_items: list[Node], node: Node) -> str:
    """``text`` with the removed tile back after the tile it followed."""
    tile_text = before_text[node.start:node.end]
    line_start = before_text.rfind("\n", 0, node.start) + 1
    indent = before_text[line_start:node.start] if before_text[line_start:node.start].isspace() else " "
    items = _tiles(now)
    position = before_items.index(node)
    after = next((found for n in reversed(before_items[:position]) if (found := _find(items, _key(n)))), None)
    if after is not None:
        return text[:after.end] + ",\n" + indent + tile_text + text[after.end:]
    if items:
        return text[:items[0].start] + tile_text + ",\n" + indent + text[items[0].start:]
    array = now.members.get("tiles")
    if array is None:
        raise json.JSONDecodeError("no tiles array", text, 0)
    return text[:array.start] + "[" + tile_text + "]" + text[array.end:]
