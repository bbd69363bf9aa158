"""A conversation's branches, in ``conversation.db`` beside its messages
(docs/conversations.md, "Branches").

Rewinding the conversation to before one of the person's messages never
edits the log (it is append-only): the messages before that point are
copied into a new conversation, the branch, which goes on from there; the
old conversation stays whole and can be switched back to. Two tables keep
what that needs:

    branches(id, parent_id, forked_at_message, forked_at_row, first_message,
             created, pending_fork, note_pending)
    agent_points(conversation_id, message_key, point)

``branches`` names each branch's parent and the parent's message it went
back before; ``first_message`` is the branch's own first message (the
edited one), ``pending_fork`` the agent's place the branch's first turn
forks from (a ``pneuma.core.backend.AgentPoint`` as JSON), ``note_pending``
whether that turn still has to tell the agent that the files were not
rewound with it. ``agent_points`` keeps, for each of the person's messages,
where the agent's own conversation stood just before it (message key ''
is where it stood after the newest turn): what a later rewind forks from.

Functions here take the log's writer connection (``ConversationLog.run``).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from pneuma.core.backend import AgentPoint
from pneuma.server import conversations as catalogue

SCHEMA = """
CREATE TABLE IF NOT EXISTS branches (
    id TEXT PRIMARY KEY,              -- the branch (a conversation's id)
    parent_id TEXT NOT NULL,          -- the conversation it was forked from
    forked_at_message TEXT NOT NULL,  -- the parent's message it went back before (its key)
    forked_at_row INTEGER NOT NULL,   -- that message's row in the log
    first_message TEXT,               -- the branch's own first message (its key), once sent
    created REAL NOT NULL,            -- unix seconds
    pending_fork TEXT,                -- JSON AgentPoint the first turn forks from
    note_pending INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS agent_points (
    conversation_id TEXT NOT NULL,
    message_key TEXT NOT NULL,        -- a person's message; '' after the newest turn
    point TEXT NOT NULL,              -- JSON AgentPoint
    PRIMARY KEY (conversation_id, message_key)
);
"""

TIP = ""  # the message key of "after the newest turn"


@dataclass(slots=True)
class Branch:
    """One branch as stored."""

    id: str
    parent_id: str
    forked_at_message: str
    forked_at_row: int
    first_message: str | None
    created: float
    pending_fork: AgentPoint | None
    note_pending: bool


@dataclass(slots=True)
class UserMessageRow:
    """One of the person's messages in the log."""

    row: int
    key: str


def message_key(message: dict[str, Any]) -> str:
    """What names one of the person's messages: the page's client id, or
    (a message sent without one) its time in milliseconds."""
    client_id = message.get("client_msg_id")
    if isinstance(client_id, str) and client_id:
        return client_id
    stamp = message.get("timestamp")
    return f"ts:{round(float(stamp) * 1000)}" if isinstance(stamp, (int, float)) else ""


def ensure_tables(db: sqlite3.Connection) -> None:
    with db:
        db.executescript(SCHEMA)


def _point(text: str | None) -> AgentPoint | None:
    if not text:
        return None
    try:
        data = json.loads(text)
        return AgentPoint(str(data["backend"]), str(data["agent_session_id"]), str(data["at"]))
    except (ValueError, KeyError, TypeError):
        return None


def _point_text(point: AgentPoint | None) -> str | None:
    if point is None:
        return None
    return json.dumps({"backend": point.backend, "agent_session_id": point.agent_session_id,
                       "at": point.at})


# --- the agent's points ---------------------------------------------------------

def save_point(db: sqlite3.Connection, conversation_id: str, key: str, point: AgentPoint) -> None:
    with db:
        db.execute("INSERT OR REPLACE INTO agent_points (conversation_id, message_key, point)"
                   " VALUES (?, ?, ?)", (conversation_id, key, _point_text(point)))


def load_point(db: sqlite3.Connection, conversation_id: str, key: str) -> AgentPoint | None:
    row = db.execute("SELECT point FROM agent_points WHERE conversation_id = ? AND message_key = ?",
                     (conversation_id, key)).fetchone()
    return _point(row[0]) if row else None


# --- the person's messages --------------------------------------------------------

def user_messages(db: sqlite3.Connection, conversation_id: str) -> list[UserMessageRow]:
    """The person's messages of one conversation, oldest first (their keys
    read by SQLite: a long conversation's texts are not decoded here)."""
    found = []
    rows = db.execute(
        "SELECT id, json_extract(body, '$.client_msg_id'), json_extract(body, '$.timestamp')"
        " FROM messages WHERE session_id = ? AND kind = 'user_message' AND json_valid(body)"
        " ORDER BY id", (conversation_id,))
    for row_id, client_id, stamp in rows:
        key = message_key({"client_msg_id": client_id, "timestamp": stamp})
        if key:
            found.append(UserMessageRow(row_id, key))
    return found


def find_user_message(db: sqlite3.Connection, conversation_id: str, *,
                      client_msg_id: str | None = None,
                      timestamp_ms: float | None = None) -> UserMessageRow | None:
    """The person's message named by its client id, or by its time (to the
    millisecond, as a page holds it)."""
    for message in user_messages(db, conversation_id):
        if client_msg_id is not None and message.key == client_msg_id:
            return message
        if timestamp_ms is not None and message.key == f"ts:{round(timestamp_ms)}":
            return message
    if timestamp_ms is None:
        return None
    # A message with a client id, named by its time (as a page holds it).
    for row_id, client_id, stamp in db.execute(
            "SELECT id, json_extract(body, '$.client_msg_id'), json_extract(body, '$.timestamp')"
            " FROM messages WHERE session_id = ? AND kind = 'user_message' AND json_valid(body)"
            " ORDER BY id", (conversation_id,)):
        if isinstance(stamp, (int, float)) and abs(stamp * 1000 - timestamp_ms) < 1:
            return UserMessageRow(row_id, message_key({"client_msg_id": client_id, "timestamp": stamp}))
    return None


# --- branches -------------------------------------------------------------------------

def rows_before(db: sqlite3.Connection, conversation_id: str, row: int) -> int:
    """How many messages of the conversation come before ``row``."""
    found = db.execute("SELECT COUNT(*) FROM messages WHERE session_id = ? AND id < ?",
                       (conversation_id, row)).fetchone()
    return int(found[0])


def make_branch(db: sqlite3.Connection, parent_id: str, branch_id: str, at: UserMessageRow,
                title: str, first_row: int) -> Branch:
    """Fork ``parent_id`` just before its message ``at``: a new listed
    conversation holding copies of the messages before it (the parent's
    rows are not touched), the agent's points of those messages, and the
    branch's record. One transaction. The copies take the row ids from
    ``first_row`` on (kept for them by the session: ``rows_before`` many)."""
    now = time.time()
    pending = load_point(db, parent_id, at.key)
    next_row = first_row
    with db:
        db.execute(
            "INSERT INTO messages (id, session_id, seq, kind, message_id, body)"
            " SELECT ? + ROW_NUMBER() OVER (ORDER BY id) - 1, ?, seq, kind, message_id, body"
            " FROM messages WHERE session_id = ? AND id < ? ORDER BY id",
            (next_row, branch_id, parent_id, at.row))
        db.execute("INSERT INTO conversations (id, title, created, updated, agent_session_id)"
                   " VALUES (?, ?, ?, ?, NULL)", (branch_id, title, now, now))
        kept = [m.key for m in user_messages(db, branch_id)]
        if kept:
            marks = ",".join("?" * len(kept))
            db.execute("INSERT OR REPLACE INTO agent_points (conversation_id, message_key, point)"
                       f" SELECT ?, message_key, point FROM agent_points WHERE conversation_id = ?"
                       f" AND message_key IN ({marks})", (branch_id, parent_id, *kept))
        db.execute("INSERT INTO branches (id, parent_id, forked_at_message, forked_at_row,"
                   " first_message, created, pending_fork, note_pending)"
                   " VALUES (?, ?, ?, ?, NULL, ?, ?, 1)",
                   (branch_id, parent_id, at.key, at.row, now, _point_text(pending)))
    return Branch(branch_id, parent_id, at.key, at.row, None, now, pending, True)


def get_branch(db: sqlite3.Connection, branch_id: str) -> Branch | None:
    row = db.execute("SELECT id, parent_id, forked_at_message, forked_at_row, first_message,"
                     " created, pending_fork, note_pending FROM branches WHERE id = ?",
                     (branch_id,)).fetchone()
    if row is None:
        return None
    return Branch(row[0], row[1], row[2], row[3], row[4], row[5], _point(row[6]), bool(row[7]))


def first_turn_taken(db: sqlite3.Connection, branch_id: str, key: str) -> None:
    """The branch's first turn went to the agent: its fork and note are used up."""
    with db:
        db.execute("UPDATE branches SET pending_fork = NULL, note_pending = 0,"
                   " first_message = COALESCE(first_message, ?) WHERE id = ?", (key, branch_id))


def family(db: sqlite3.Connection, conversation_id: str) -> list[Branch | str]:
    """Every version of ``conversation_id``'s conversation: its first one
    (a plain id) and each branch forked from it or from a branch of it,
    oldest first."""
    root = conversation_id
    walked = {root}
    while (branch := get_branch(db, root)) is not None and branch.parent_id not in walked:
        root = branch.parent_id
        walked.add(root)
    seen = {root}
    members: list[Branch | str] = [root]
    frontier = [root]
    while frontier:
        parent = frontier.pop(0)
        for (child,) in db.execute("SELECT id FROM branches WHERE parent_id = ? ORDER BY created",
                                   (parent,)).fetchall():
            found = get_branch(db, child)
            if found is not None and found.id not in seen:
                seen.add(found.id)
                members.append(found)
                frontier.append(found.id)
    return members


def hidden_versions(db: sqlite3.Connection, current: str) -> set[str]:
    """The conversations the list of conversations leaves out: of each
    conversation that has versions, every version but one (the current
    one, else the one the person wrote in last). The chat's "N versions"
    reaches the others."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'branches'"
                  ).fetchone() is None:
        return set()
    parents = dict(db.execute("SELECT id, parent_id FROM branches").fetchall())
    if not parents:
        return set()
    updated = {c.id: c.updated for c in catalogue.listed(db, {})}

    def root(conversation_id: str) -> str:
        seen = {conversation_id}
        while conversation_id in parents and parents[conversation_id] not in seen:
            conversation_id = parents[conversation_id]
            seen.add(conversation_id)
        return conversation_id

    families: dict[str, list[str]] = {}
    for member in set(parents) | set(parents.values()):
        if member in updated:
            families.setdefault(root(member), []).append(member)
    hidden: set[str] = set()
    for members in families.values():
        shown = current if current in members else max(members, key=lambda m: updated[m])
        hidden.update(m for m in members if m != shown)
    return hidden


def listing(db: sqlite3.Connection, current: str) -> dict[str, Any]:
    """``GET /api/conversation/branches``: the versions of the current
    conversation, and where they split from what the chat shows
    (``splits``: at a message key of the current one, the other versions
    that go on differently from there)."""
    members = family(db, current)
    listed = {c.id for c in catalogue.listed(db, {})}
    branches = []
    by_id: dict[str, Branch] = {}
    for member in members:
        if isinstance(member, Branch):
            by_id[member.id] = member
        member_id = member if isinstance(member, str) else member.id
        if member_id not in listed:
            continue  # deleted from the list of conversations
        preview = catalogue.last_message(db, member_id)
        branches.append({
            "id": member_id,
            "parentId": member.parent_id if isinstance(member, Branch) else None,
            "forkedAtMessage": member.forked_at_message if isinstance(member, Branch) else None,
            "firstMessage": member.first_message if isinstance(member, Branch) else None,
            "createdAt": member.created if isinstance(member, Branch) else _created(db, member_id),
            "lastMessagePreview": preview["text"] if preview else "",
            "current": member_id == current,
        })
    present = {str(b["id"]) for b in branches}
    return {"current": current, "branches": branches,
            "splits": _splits(db, current, by_id, present)}


def _created(db: sqlite3.Connection, conversation_id: str) -> float:
    row = db.execute("SELECT created FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
    return float(row[0]) if row else 0.0


def _splits(db: sqlite3.Connection, current: str, by_id: dict[str, Branch],
            present: set[str]) -> list[dict[str, Any]]:
    """Where the chat marks "N versions": at each message of the current
    conversation that another version replaced, the versions there."""
    keys = {m.key for m in user_messages(db, current)}
    versions: dict[str, list[str]] = {}
    for branch in by_id.values():
        if branch.id == current or branch.id not in present:
            continue
        if branch.forked_at_message in keys:
            versions.setdefault(branch.forked_at_message, []).append(branch.id)
    me = by_id.get(current)
    if me is not None and me.first_message in keys:
        others = [me.parent_id] if me.parent_id in present else []
        others += [b.id for b in by_id.values() if b.id != current and b.id in present
                   and b.parent_id == me.parent_id and b.forked_at_message == me.forked_at_message]
        if others:
            versions.setdefault(me.first_message, []).extend(others)
    return [{"messageId": key, "versions": ids} for key, ids in versions.items()]
