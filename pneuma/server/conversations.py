"""The conversations of a workspace: their list in ``conversation.db``.

A workspace holds several conversations (docs/conversations.md). Their
messages are the rows of the conversation log (``conversation_log``), whose
``session_id`` column names the conversation; this module keeps the list
beside them, in a table of the same database, so that everything a
conversation is moves as one file (a mode switch parks it whole):

    conversations(id, title, created, updated, agent_session_id)

``title`` comes from the person's first message (``TITLE_LENGTH``
characters) until they rename it; ``updated`` is the time of the person's
last message (or of the creation); ``agent_session_id`` is the agent's own
session (Claude Code's ``--resume`` id). Which conversation is the current
one is in ``session.json`` (``conversationId``): what resumes on a restart.

A log written before there was a list has rows but no entries: each
conversation found in it is listed on first open (``adopt_unlisted``),
titled from its first message, nothing else changed.

The read-only half (``read_conversations``) is for whoever wants to show a
workspace's conversations without serving it (``pneuma conversations
list``, a launcher): it imports neither aiohttp nor the server, writes
nothing, and works on a log never opened by a Pneuma that keeps a list.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pneuma.core.state_files import check_sqlite_files, read_state_bytes

STATE_DIR = ".pneuma"
LOG_FILE = "conversation.db"
SESSION_FILE = "session.json"
TITLE_LENGTH = 60
PREVIEW_LENGTH = 200

TABLE_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,        -- the conversation (messages.session_id)
    title TEXT NOT NULL,        -- '' until the person's first message
    created REAL NOT NULL,      -- unix seconds
    updated REAL NOT NULL,      -- the person's last message (or created)
    agent_session_id TEXT       -- the agent's own session, for --resume
);
"""

# "Leave this field as it is" for an update whose None means "forget it".
KEEP: Any = object()

# What a conversation's message count counts: what the person and the agent wrote.
COUNTED_KINDS = ("user_message", "assistant")


@dataclass(slots=True)
class Conversation:
    """One conversation as the list shows it."""

    id: str
    title: str
    created: float
    updated: float
    messages: int = 0
    agent_session_id: str | None = None

    def public(self, current: str | None = None) -> dict[str, Any]:
        """What a tab gets (no agent session id: nothing a page needs)."""
        data = {"id": self.id, "title": self.title, "created": self.created,
                "updated": self.updated, "messages": self.messages}
        if current is not None:
            data["current"] = self.id == current
        return data


@dataclass(slots=True)
class ConversationSummary:
    """A conversation as a launcher shows it (``read_conversations``)."""

    id: str
    title: str
    created: float
    updated: float
    messages: int
    current: bool
    last_message: dict[str, str] | None  # {"role": "user"|"assistant", "text": ...}

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def title_from(text: str) -> str:
    """A conversation's title from the person's message: its first
    ``TITLE_LENGTH`` characters, whitespace folded."""
    words = _storable(" ".join(text.split()))
    if len(words) <= TITLE_LENGTH:
        return words
    return words[:TITLE_LENGTH - 1].rstrip() + "…"


def clean_title(text: str) -> str:
    """A title the person typed: one line, at most 200 characters."""
    return _storable(" ".join(text.split())[:200])


def _storable(text: str) -> str:
    """``text`` without lone surrogates (no UTF-8 form, SQLite cannot store them)."""
    return text.encode("utf-8", "replace").decode("utf-8")


# --- on a connection (the log's writer, or a read-only one) ----------------

def has_table(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                      " AND name = 'conversations'").fetchone() is not None


def listed(db: sqlite3.Connection, counts: dict[str, int] | None = None) -> list[Conversation]:
    """The listed conversations, their message counts filled in (``counts``
    when already read), most recently updated first."""
    if counts is None:
        counts = message_counts(db)
    rows = db.execute("SELECT id, title, created, updated, agent_session_id FROM conversations"
                      " ORDER BY updated DESC, created DESC").fetchall()
    return [Conversation(id_, title, created, updated, counts.get(id_, 0), agent)
            for id_, title, created, updated, agent in rows]


def message_counts(db: sqlite3.Connection) -> dict[str, int]:
    marks = ",".join("?" * len(COUNTED_KINDS))
    return dict(db.execute(f"SELECT session_id, COUNT(*) FROM messages WHERE kind IN ({marks})"
                           " GROUP BY session_id", COUNTED_KINDS).fetchall())


def unlisted(db: sqlite3.Connection, table: bool = True) -> list[Conversation]:
    """Conversations that have messages in the log but no entry in the
    list (all of them in a log written before the list existed), as the
    list would hold them: titled from the first message, dated by the
    person's first and last messages."""
    query = "SELECT DISTINCT session_id FROM messages"
    if table:
        query += " WHERE session_id NOT IN (SELECT id FROM conversations)"
    found = []
    for (conversation_id,) in db.execute(query).fetchall():
        user_rows = db.execute(
            "SELECT body FROM messages WHERE session_id = ? AND kind = 'user_message'"
            " ORDER BY id", (conversation_id,))
        first = last = None
        title = ""
        for (body,) in user_rows:
            message = _decoded(body)
            if first is None:
                title = title_from(str(message.get("content") or ""))
                first = _timestamp(message)
            last = _timestamp(message) or last
        created = first or time.time()
        found.append(Conversation(conversation_id, title, created, last or created))
    return found


def adopt_unlisted(db: sqlite3.Connection) -> int:
    """List every conversation of the log that is not (the migration of a
    log from before the list); returns how many."""
    found = unlisted(db)
    if found:
        with db:
            db.executemany("INSERT INTO conversations (id, title, created, updated) VALUES (?,?,?,?)",
                           [(c.id, c.title, c.created, c.updated) for c in found])
    return len(found)


def last_message(db: sqlite3.Connection, conversation_id: str) -> dict[str, str] | None:
    """The newest message the person or the agent wrote, as a short preview."""
    rows = db.execute("SELECT kind, body FROM messages WHERE session_id = ?"
                      " AND kind IN ('user_message', 'assistant') ORDER BY id DESC LIMIT 5",
                      (conversation_id,))
    for kind, body in rows:
        message = _decoded(body)
        if kind == "user_message":
            text = str(message.get("content") or "")
            role = "user"
        else:
            inner = message.get("message")
            blocks = inner.get("content") if isinstance(inner, dict) else None
            text = " ".join(b.get("text", "") for b in blocks or ()
                            if isinstance(b, dict) and b.get("type") == "text")
            role = "assistant"
        text = " ".join(text.split())
        if text:
            return {"role": role, "text": text[:PREVIEW_LENGTH]}
    return None


def _decoded(body: str) -> dict[str, Any]:
    try:
        message = json.loads(body)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def _timestamp(message: dict[str, Any]) -> float | None:
    value = message.get("timestamp")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# --- read-only, from the workspace folder ------------------------------------

def current_conversation_id(workspace: Path) -> str | None:
    """The conversation a restart resumes (``session.json``), if any."""
    try:
        meta = json.loads(read_state_bytes(workspace / STATE_DIR / SESSION_FILE))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict):
        return None
    current = meta.get("conversationId") or meta.get("sessionId")
    return current if isinstance(current, str) else None


def read_conversations(workspace: Path, *, previews: bool = True) -> list[ConversationSummary]:
    """The workspace's conversations, most recently updated first, each
    with its message count and (``previews``) its last message; [] when
    the workspace has no conversation log. Read-only: opens the log
    read-only (beside a running ``pneuma run`` too: WAL readers never
    block it), writes nothing, migrates nothing. Raises ``sqlite3.Error``
    for a log it cannot read."""
    path = workspace / STATE_DIR / LOG_FILE
    if not os.path.lexists(path):
        return []
    check_sqlite_files(path, create_dirs=False)  # never a log through a link
    current = current_conversation_id(workspace)
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        table = has_table(db)
        counts = message_counts(db)
        found = listed(db, counts) if table else []
        for extra in unlisted(db, table):
            extra.messages = counts.get(extra.id, 0)
            found.append(extra)
        found.sort(key=lambda c: (c.updated, c.created), reverse=True)
        return [ConversationSummary(c.id, c.title, c.created, c.updated, c.messages,
                                    c.id == current,
                                    last_message(db, c.id) if previews else None)
                for c in found]
    finally:
        db.close()
