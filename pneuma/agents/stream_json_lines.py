"""One line of Claude Code's stream-json: writing one (a user turn), and
reading one an agent wrote: the fast path for the hottest line (a stream
delta, matched whole by one pattern) and the shape check that every other
line passes before a handler sees it. ``pneuma.agents.stream_json.StreamJsonBridge`` uses both; a line that
fails is skipped with a warning, and the session stays as it was
(docs/security.md, "Bad input")."""

from __future__ import annotations

import json
import re
from typing import Any

# Containers inside containers an agent line may nest. Real lines stay far
# below; the session encodes what the bridge emits, and a deeper value
# would raise RecursionError there, after the session's state had changed.
MAX_DEPTH = 100
PREVIEW_CHARS = 200  # how much of a skipped line the warning shows

raw_decode = json.JSONDecoder().raw_decode
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def encode(message: dict[str, Any]) -> str:
    """One stream-json line: compact JSON, newline-terminated."""
    return _dumps(message) + "\n"


def text_of(message: dict[str, Any]) -> str:
    """The text blocks of an assistant or user message, joined."""
    return " ".join(
        block.get("text", "")
        for block in message.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text"
    ).strip()


def user_line(text: str, images: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """The message that carries one user turn to the agent."""
    content: str | list[dict[str, Any]] = text
    if images:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for image in images:
            blocks.append(
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": image["media_type"],
                        "data": image["data"],
                    },
                }
            )
        content = blocks
    return {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": None,
        "session_id": "",
    }

# How the CLI starts every stream_event line (compact JSON, this key order).
STREAM_PREFIX = '{"type":"stream_event","event":'
# What follows the event on such a line: more members whose values are
# strings without escapes, null, booleans or integers, then the end.
# (``[0-9]``, not ``\d``: on str patterns ``\d`` also takes other scripts' digits.)
JSON_SPACE = " \t\r\n"
_JSON_CHAR = r'[^"\\\x00-\x1f]'  # a string character that needs no escape
_JSON_STR = rf'"{_JSON_CHAR}*"'  # a string without escapes
# a string, escapes allowed
_JSON_ESC_STR = rf'"{_JSON_CHAR}*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{{4}}){_JSON_CHAR}*)*"'
_JSON_FLAT = rf'(?:{_JSON_STR}|null|true|false|-?(?:0|[1-9][0-9]*))'
FLAT_TAIL = re.compile(rf'(?:,{_JSON_STR}:{_JSON_FLAT})*\}}[ \t\r\n]*')
PARENT = re.compile(rf',"parent_tool_use_id":({_JSON_FLAT})')
# The hottest line of all, whole: a content_block_delta (text, thinking,
# tool input or signature: a two-member delta whose second value is a
# string) in the CLI's compact shape, with a flat tail, up to and with its
# newline. Group 1 is the event's JSON text, group 2 the last
# parent_tool_use_id's (None: absent). The tail may not repeat "type" or
# "event" (json.loads would let the repeat win); the two kinds of tail
# member are disjoint, so a line that does not match fails fast. Matching
# this one pattern checks the line's syntax exactly as json.loads would
# (for this shape) and costs about half of raw_decode + the tail pattern.
DELTA_LINE = re.compile(
    r'\{"type":"stream_event","event":'
    rf'(\{{"type":"content_block_delta","index":(?:0|[1-9][0-9]*),'
    rf'"delta":\{{"type":{_JSON_STR},{_JSON_STR}:{_JSON_ESC_STR}\}}\}})'
    rf'(?:,"parent_tool_use_id":(null|{_JSON_STR})'  # any other value: the general path skips it
    rf'|,(?!"(?:type|event|parent_tool_use_id)"){_JSON_STR}:{_JSON_FLAT})*+'
    r'\}[ \t\r]*(?:\n|\Z)'
)


# -- the shape of an agent line -------------------------------------------------
#
# A line is handled only when every field a handler reads has the type it
# expects: a line of any other shape is skipped before anything reaches
# the session, so its status, seq and history stay as they were.

NOT_JSON = "is not JSON"
# A \uD800-\uDFFF escape: a lone surrogate, or half of a pair (checked on the value).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_OPT_STR = (str, type(None))
_OPT_INT = (int, type(None))
_OPT_NUMBER = (int, float, type(None))
_OPT_LIST = (list, type(None))
_OPT_DICT = (dict, type(None))
_OPT_BOOL = (bool, type(None))
# type -> (dotted path, allowed types) for each field its handler reads; a
# missing field is fine (handlers read with .get), a present one must fit.
_FIELDS: dict[str, tuple[tuple[str, tuple[type, ...]], ...]] = {
    "stream_event": (("event", (dict,)), ("parent_tool_use_id", _OPT_STR)),
    "assistant": (("message", (dict,)), ("message.id", (str,)), ("message.content", _OPT_LIST),
                  ("error", _OPT_STR), ("parent_tool_use_id", _OPT_STR)),
    "user": (("message", _OPT_DICT), ("message.content", (str, list, type(None))),
             ("parent_tool_use_id", _OPT_STR)),
    "system": (("subtype", _OPT_STR), ("session_id", _OPT_STR), ("model", _OPT_STR),
               ("cwd", _OPT_STR), ("tools", _OPT_LIST), ("permissionMode", _OPT_STR),
               ("slash_commands", _OPT_LIST), ("claude_code_version", _OPT_STR),
               ("status", _OPT_STR), ("error_status", _OPT_INT)),
    "result": (("subtype", _OPT_STR), ("is_error", _OPT_BOOL), ("result", _OPT_STR),
               ("duration_ms", _OPT_NUMBER), ("num_turns", _OPT_INT),
               ("total_cost_usd", _OPT_NUMBER), ("usage", _OPT_DICT)),
    "control_request": (("request_id", _OPT_STR), ("request", _OPT_DICT),
                        ("request.subtype", _OPT_STR), ("request.input", _OPT_DICT),
                        ("request.tool_name", _OPT_STR), ("request.description", _OPT_STR),
                        ("request.tool_use_id", _OPT_STR)),
    "control_response": (("response", _OPT_DICT), ("response.request_id", _OPT_STR),
                         ("response.subtype", _OPT_STR), ("response.response", _OPT_DICT),
                         ("response.error", _OPT_STR)),
    "control_cancel_request": (("request_id", _OPT_STR),),
}
# The fields of a tool_result block in a user line (see _on_user).
_TOOL_RESULT_FIELDS = (("tool_use_id", _OPT_STR), ("content", (str, list, type(None))),
                       ("is_error", _OPT_BOOL))


def wrong_field(kind: str, message: dict[str, Any]) -> str | None:
    """The first field of ``message`` whose type its handler does not
    expect (its dotted path), or None."""
    wrong = _wrong_in(message, _FIELDS.get(kind, ()))
    if wrong is None and kind == "user":
        inner = message.get("message")
        content = inner.get("content") if isinstance(inner, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                wrong = _wrong_in(block, _TOOL_RESULT_FIELDS)
                if wrong is not None:
                    return f"message.content[].{wrong}"
    return wrong


def _wrong_in(message: dict[str, Any], fields: tuple[tuple[str, tuple[type, ...]], ...]) -> str | None:
    for path, types in fields:
        *parents, name = path.split(".")
        holder: Any = message
        for key in parents:
            holder = holder.get(key) if isinstance(holder, dict) else None
        # Absent (or its parent is, or is not an object, which is reported
        # for the parent): fine. Present: it must fit.
        if isinstance(holder, dict) and name in holder and not isinstance(holder[name], types):
            return path
    return None


def parse_line(raw: str | bytes) -> tuple[dict[str, Any] | None, str]:
    """The message on one line, or None and why it is skipped."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode()  # strict: json.loads(bytes) would let UTF-8 surrogates through
        except UnicodeDecodeError:
            return None, NOT_JSON + " (not UTF-8)"
    else:
        text = raw
        if not text.isascii():
            try:
                text.encode()
            except UnicodeEncodeError:
                return None, "is not valid Unicode (a lone surrogate)"
    try:
        message = json.loads(text)
    except ValueError:
        return None, NOT_JSON
    except RecursionError:
        return None, f"is nested deeper than {MAX_DEPTH} levels"
    if not isinstance(message, dict):
        return None, "is not an object"
    # Cheap tests first: a line with fewer brackets than MAX_DEPTH cannot
    # nest deeper, and only an escape can make a surrogate here.
    surrogates = _SURROGATE_ESCAPE.search(text) is not None
    if surrogates or text.count("{") + text.count("[") > MAX_DEPTH:
        problem = _bad_value(message, surrogates)
        if problem is not None:
            return None, problem
    return message, ""


def _bad_value(value: Any, surrogates: bool) -> str | None:
    """Whether ``value`` nests deeper than MAX_DEPTH or (``surrogates``)
    holds a string with a lone surrogate, which no UTF-8 frame can carry."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
            if surrogates and any(_SURROGATE.search(key) for key in item):
                return "is not valid Unicode (a lone surrogate)"
        elif isinstance(item, list):
            children = item
        else:
            if surrogates and isinstance(item, str) and _SURROGATE.search(item):
                return "is not valid Unicode (a lone surrogate)"
            continue
        if depth > MAX_DEPTH:
            return f"is nested deeper than {MAX_DEPTH} levels"
        stack.extend((child, depth + 1) for child in children)
    return None


def line_text(raw: str | bytes) -> str:
    return raw.decode(errors="replace") if isinstance(raw, bytes) else raw


def preview(raw: str | bytes) -> str:
    """The first PREVIEW_CHARS characters of a line, quoted with repr: a
    control character or a lone surrogate cannot garble the log."""
    text = line_text(raw[: PREVIEW_CHARS * 4] if isinstance(raw, bytes) else raw[:PREVIEW_CHARS])
    return repr(text[:PREVIEW_CHARS]) + (" …" if len(raw) > PREVIEW_CHARS else "")
