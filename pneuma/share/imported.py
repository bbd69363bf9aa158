"""A shared file's conversation, kept as history in the workspace's
conversation log (docs/sharing.md, "Open a shared file").

The messages become rows of the log like any conversation's (the chat shows
them, `pneuma conversations list` lists them), after a note saying where
they came from. The agent never took part in them: it starts a fresh
session, and the person's first message there carries a summary of what was
said (the way a branch whose agent cannot fork is handed its earlier
messages, pneuma/server/conversation_rewind.py). The table beside the
messages says which conversations were imported and whether that summary is
still owed:

    shared_imports(conversation_id, source, title, imported, summary, summary_pending)
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from pneuma.server.conversation_log import ConversationLog
from pneuma.server.conversation_rewind import RECAP_CHARS
from pneuma.server.persistence import STATE_DIR, save_session
from pneuma.share.history import RecordedTurn
from pneuma.share.model import ShareData

SCHEMA = """
CREATE TABLE IF NOT EXISTS shared_imports (
    conversation_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,             -- the shared file's name
    title TEXT NOT NULL,
    imported REAL NOT NULL,           -- unix seconds
    summary TEXT NOT NULL,            -- what the agent's first turn is handed
    summary_pending INTEGER NOT NULL DEFAULT 1
);
"""
NOTE_CODE = "shared_history"


def import_conversation(workspace: Path, conversation_id: str, data: ShareData, *,
                        source_name: str, backend: str,
                        recorded: list[RecordedTurn] | None = None) -> int:
    """Write ``data``'s conversation into ``workspace``'s log as the
    conversation ``conversation_id`` and make it the one `pneuma run`
    resumes; ``recorded``: the checkpoints recorded for its turns, in order
    (pneuma/share/history.py). Returns the last seq used."""
    recorded = recorded or []
    rows = history_rows(data, source_name, turn_refs(data, [r.ref for r in recorded]),
                        {r.ref: (i, r) for i, r in enumerate(recorded)})
    log = ConversationLog.open(workspace / STATE_DIR)
    try:
        log.import_messages(conversation_id, rows)
        log.ensure_conversation(conversation_id)
        stamps = [m.at for m in data.conversation if m.at]
        log.update_conversation(conversation_id, title=_title(data),
                                updated=(max(stamps) / 1000 if stamps else time.time()))
        summary = agent_summary(data, source_name)
        log.run(lambda db: _mark(db, conversation_id, source_name, data.title, summary))
        log.checkpoint()
    finally:
        log.close()
    last_seq = len(rows)
    save_session(workspace, session_id=conversation_id, mode=data.mode, backend=backend,
                 agent_session_id=None, last_seq=last_seq)
    return last_seq


def turn_refs(data: ShareData, refs: list[str]) -> dict[int, str]:
    """Which message of the conversation (by index) each turn's checkpoint
    belongs to: the person's messages in order, each turn to the first one
    its message begins (a checkpoint keeps a message's first words); in
    order of the person's messages when that does not place them all."""
    users = [i for i, m in enumerate(data.conversation) if m.role == "user"]
    placed: dict[int, str] = {}
    turn = 0
    for index in users:
        if turn >= len(refs):
            break
        wanted = data.turns[turn].message.rstrip("…").strip()[:60] if turn < len(data.turns) else ""
        if wanted and not data.conversation[index].text.strip().startswith(wanted):
            continue
        placed[index] = refs[turn]
        turn += 1
    if len(placed) < min(len(refs), len(users)):
        placed = dict(zip(users, refs, strict=False))
    return placed


def history_rows(data: ShareData, source_name: str, refs: dict[int, str] | None = None,
                 turns: dict[str, tuple[int, RecordedTurn]] | None = None
                 ) -> list[tuple[int, str | None, str, str]]:
    """The log's rows (seq, message id, kind, text): a note, then each
    message, a person's followed by what a served turn logs for it: its
    checkpoint (``turn_checkpoint``: Rewind, Compare and Replay find the
    turn's checkpoint by it), the files it changed (``turn_changes``: the
    chat's "N files changed") and, as the shared file described it, its
    changes in the mode's terms (``turn_described``)."""
    refs, turns = refs or {}, turns or {}
    first_at = next((m.at for m in data.conversation if m.at), None)
    note = {"type": "system_note", "code": NOTE_CODE, "seq": 1,
            "text": f"History from the shared file {source_name}: read-only. Your agent starts "
                    "a fresh session and gets a summary of it with your first message.",
            "timestamp": (first_at / 1000) if first_at else time.time()}
    rows: list[tuple[int, str | None, str, str]] = [(1, None, "system_note", _text(note))]
    for index, message in enumerate(data.conversation):
        seq = len(rows) + 1
        stamp = (message.at / 1000) if message.at else None
        if message.role == "user":
            body: dict[str, Any] = {"type": "user_message", "content": message.text, "seq": seq,
                                    "client_msg_id": f"shared-{index}"}
            if stamp is not None:
                body["timestamp"] = stamp
            rows.append((seq, None, "user_message", _text(body)))
            if index in refs:
                rows.extend(_turn_rows(len(rows) + 1, refs[index], body, turns, data))
        elif message.role == "assistant":
            message_id = f"shared-{index}"
            text = message.text
            if message.tools:
                used = "; ".join(f"{t.name}: {t.summary}" if t.summary else t.name
                                 for t in message.tools)
                text = f"{text}\n\n_Tools: {used}_" if text else f"_Tools: {used}_"
            body = {"type": "assistant", "seq": seq, "message": {
                "id": message_id, "role": "assistant",
                "content": [{"type": "text", "text": text}]}}
            if stamp is not None:
                body["timestamp"] = stamp
            rows.append((seq, message_id, "assistant", _text(body)))
    return rows


def _turn_rows(seq: int, ref: str, message: dict[str, Any],
               turns: dict[str, tuple[int, RecordedTurn]], data: ShareData
               ) -> list[tuple[int, str | None, str, str]]:
    mark = {"type": "turn_checkpoint", "ref": ref, "seq": seq,
            "client_msg_id": message["client_msg_id"], "user_seq": seq - 1,
            "user_timestamp": message.get("timestamp")}
    rows: list[tuple[int, str | None, str, str]] = [(seq, None, "turn_checkpoint", _text(mark))]
    found = turns.get(ref)
    if found is None:
        return rows
    position, recorded = found
    changed = {"type": "turn_changes", "ref": ref, "changes": recorded.files_changed,
               "seq": seq + 1}
    rows.append((seq + 1, None, "turn_changes", _text(changed)))
    shared = data.turns[position] if position < len(data.turns) else None
    described = [c for c in (shared.changes if shared else [])
                 if isinstance(c, dict) and isinstance(c.get("id"), str)]
    if shared is not None and described:
        told = {"type": "turn_described", "ref": ref, "source": shared.source,
                "changes": described, "seq": seq + 2}
        rows.append((seq + 2, None, "turn_described", _text(told)))
    return rows


def agent_summary(data: ShareData, source_name: str) -> str:
    """What the agent's first turn in the workspace is handed: the shared
    conversation as text, its newest ``RECAP_CHARS``."""
    lines = []
    for message in data.conversation:
        who = "[person]" if message.role == "user" else "[agent]"
        if message.text.strip():
            lines.append(f"{who} {message.text.strip()}")
    said = "\n".join(lines)[-RECAP_CHARS:]
    return (f"This workspace was opened from a shared file ({source_name}). The conversation "
            "below happened before, in another agent session you did not take part in; the "
            "files are as that conversation left them. Read a file before relying on it.\n"
            f"{said}")


def _mark(db: sqlite3.Connection, conversation_id: str, source: str, title: str,
          summary: str) -> None:
    with db:
        db.executescript(SCHEMA)
        db.execute("INSERT OR REPLACE INTO shared_imports (conversation_id, source, title,"
                   " imported, summary, summary_pending) VALUES (?, ?, ?, ?, ?, 1)",
                   (conversation_id, source, title, time.time(), summary))


def take_pending_summary(db: sqlite3.Connection, conversation_id: str) -> str | None:
    """The summary still owed to the agent of an imported conversation (then
    no longer owed); None for any other conversation."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'shared_imports'"
                  ).fetchone() is None:
        return None
    row = db.execute("SELECT summary FROM shared_imports WHERE conversation_id = ? AND"
                     " summary_pending = 1", (conversation_id,)).fetchone()
    if row is None:
        return None
    with db:
        db.execute("UPDATE shared_imports SET summary_pending = 0 WHERE conversation_id = ?",
                   (conversation_id,))
    return str(row[0])


def imported_source(db: sqlite3.Connection, conversation_id: str) -> str | None:
    """The shared file a conversation was imported from, if it was."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'shared_imports'"
                  ).fetchone() is None:
        return None
    row = db.execute("SELECT source FROM shared_imports WHERE conversation_id = ?",
                     (conversation_id,)).fetchone()
    return str(row[0]) if row else None


def _title(data: ShareData) -> str:
    title = " ".join(data.title.split())
    return title[:200]


def _text(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))
