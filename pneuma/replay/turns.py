"""A conversation's turns as Replay plays them (docs/sharing.md, "Replay").

A turn is one of the person's messages and what the agent answered until
the next one. Its checkpoint (the workspace before the turn, and after it:
docs/checkpoints.md) is the ``turn_checkpoint`` row the log holds for that
message, found by the message's client id, else by its time, as the chat
finds it (pneuma/web/lib/rewind.js). Fields are read by SQLite's JSON
functions, so a long conversation's bodies are not decoded here.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

TEXT_LIMIT = 20_000  # of one message as Replay shows it; the chat has the whole of it
TOOLS_LIMIT = 50  # tool names kept per turn
CHANGES_LIMIT = 20  # of a turn's changes in the mode's terms (docs/checkpoints.md)


@dataclass(slots=True)
class ReplayTurn:
    """One turn as Replay shows it."""

    index: int
    text: str
    client_msg_id: str | None
    timestamp: float | None
    ref: str | None = None
    replies: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "text": self.text, "clientMsgId": self.client_msg_id,
                "timestamp": self.timestamp, "ref": self.ref, "replies": self.replies,
                "tools": self.tools, "changes": self.changes}


_ROWS = """
SELECT kind,
       json_extract(body, '$.content'), json_extract(body, '$.client_msg_id'),
       json_extract(body, '$.timestamp'), json_extract(body, '$.ref'),
       json_extract(body, '$.user_timestamp'), json_extract(body, '$.message.content'),
       json_extract(body, '$.changes')
  FROM messages
 WHERE session_id = ? AND kind IN ('user_message', 'assistant', 'turn_checkpoint',
                                   'turn_described')
       AND json_valid(body)
 ORDER BY id
"""


def conversation_turns(db: sqlite3.Connection, conversation_id: str) -> list[ReplayTurn]:
    """The turns of ``conversation_id``, oldest first, each with its
    checkpoint's ref when one was recorded, and what it changed in the
    mode's terms when that was described (``turn_described``)."""
    turns: list[ReplayTurn] = []
    by_client: dict[str, ReplayTurn] = {}
    by_time: dict[float, ReplayTurn] = {}
    described: dict[str, list[dict[str, Any]]] = {}
    for kind, content, client_id, stamp, ref, user_stamp, blocks, changes in db.execute(
            _ROWS, (conversation_id,)):
        if kind == "turn_described":
            if isinstance(ref, str):
                described[ref] = _changes(changes)
            continue
        if kind == "user_message":
            turn = ReplayTurn(len(turns) + 1, _cut(content if isinstance(content, str) else ""),
                              client_id if isinstance(client_id, str) else None,
                              float(stamp) if isinstance(stamp, (int, float)) else None)
            turns.append(turn)
            if turn.client_msg_id:
                by_client[turn.client_msg_id] = turn
            if turn.timestamp is not None:
                by_time[turn.timestamp] = turn
        elif kind == "turn_checkpoint" and isinstance(ref, str):
            found = by_client.get(client_id) if isinstance(client_id, str) else None
            if found is None and isinstance(user_stamp, (int, float)):
                found = by_time.get(float(user_stamp))
            if found is not None:
                found.ref = ref
        elif kind == "assistant" and turns:
            _add_reply(turns[-1], blocks)
    for turn in turns:
        if turn.ref is not None:
            turn.changes = described.get(turn.ref, [])
    return turns


def _changes(text: Any) -> list[dict[str, Any]]:
    """A described turn's changes as Replay lists them: where and what."""
    try:
        parsed = json.loads(text) if isinstance(text, str) else []
    except ValueError:
        return []
    return [{"where": c.get("where"), "what": c.get("what")}
            for c in (parsed if isinstance(parsed, list) else [])[:CHANGES_LIMIT]
            if isinstance(c, dict)]


def _add_reply(turn: ReplayTurn, blocks: Any) -> None:
    try:
        parsed = json.loads(blocks) if isinstance(blocks, str) else []
    except ValueError:
        return
    said = []
    for block in parsed if isinstance(parsed, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            said.append(block["text"])
        elif block.get("type") == "tool_use" and len(turn.tools) < TOOLS_LIMIT:
            turn.tools.append(str(block.get("name") or ""))
    text = "\n\n".join(s for s in said if s.strip())
    if text:
        turn.replies.append(_cut(text))


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + "…"
