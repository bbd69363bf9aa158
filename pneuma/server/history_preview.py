"""A message too large for a page of history, as a preview.

A page of the conversation (docs/conversations.md, "A long conversation
opens at once") is bounded in bytes, but a single message can be larger
than a page (a tool result holding a whole file, a very long answer). Such
a message goes into the page as a preview: each long string in it cut
short, and ``preview {row, bytes}`` saying where the whole of it is; the
page asks for it (``history_message {row}``) when the person opens it.
"""

from __future__ import annotations

import json
from typing import Any

from pneuma.core.compact_json import dumps

# A message larger than this goes into a page as a preview.
MESSAGE_LIMIT = 24 * 1024
# How much of each long string the preview keeps.
PREVIEW_CHARS = 2000
# The fields a preview keeps when cutting its strings is not enough (a
# message of a great many short strings): what the page needs to place it.
_KEPT_FIELDS = ("type", "seq", "tool_use_id", "is_error", "parent_tool_use_id", "client_msg_id",
                "timestamp", "viewer_context")


def page_text(row_id: int, text: str) -> str:
    """``text`` (a logged message's JSON) as a page carries it."""
    if len(text) <= MESSAGE_LIMIT:
        return text
    try:
        message = json.loads(text)
    except ValueError:
        return text  # the log's own DAMAGED_TEXT is small: never here in practice
    if not isinstance(message, dict):
        return text
    marker = {"row": row_id, "bytes": len(text.encode("utf-8"))}
    cut = dumps({**_cut(message), "preview": marker})
    if len(cut) <= MESSAGE_LIMIT:
        return cut
    stub: dict[str, Any] = {k: message[k] for k in _KEPT_FIELDS if k in message}
    inner = message.get("message")
    if isinstance(inner, dict):
        stub["message"] = {"id": inner.get("id"), "role": inner.get("role"), "content": []}
    return dumps({**stub, "preview": marker})


def page_size(text: str) -> int:
    """The bytes ``text`` takes in a page (at most about ``MESSAGE_LIMIT``)."""
    return min(len(text), MESSAGE_LIMIT)


def _cut(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= PREVIEW_CHARS else value[:PREVIEW_CHARS] + "…"
    if isinstance(value, list):
        return [_cut(v) for v in value]
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    return value
