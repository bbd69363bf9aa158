"""The conversation as an append-only log: ``W/.pneuma/conversation.db``.

One row per message of the conversation (what a reloaded tab shows: user
messages, assistant messages, tool results, results, errors, notes), kept
as the exact JSON text that was broadcast, written once as it happens and
never re-encoded. An assistant message the agent sends block by block is one
row, updated in place as blocks arrive (its id is the row's key).

Why SQLite in WAL mode rather than a JSONL file (both were measured, see
docs/performance.md): the log needs in-place updates of the message being
streamed, and pages read backwards from any point for a tab that scrolls
up; JSONL needs either rewrites or an index of its own for both.

Durability: a message is committed, in the event loop, before it is
broadcast (``synchronous=NORMAL``: the commit is a write to the WAL, about
50 µs, no fsync), so a kill -9 of Pneuma loses nothing a tab was shown. The
fsyncs happen at checkpoints, which run in a worker thread every few
seconds (``checkpoint``) and at close, so a power loss loses at most the
last few seconds, and a slow disk never stalls a streaming reply. Reads
(pages for a tab that scrolls up) use a second connection in a worker
thread: WAL readers never block the writer.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pneuma.server import conversations as catalogue
from pneuma.server.conversations import Conversation

log = logging.getLogger(__name__)

LOG_FILE = "conversation.db"
# The log's side files while it is open (or after a kill -9).
LOG_SIDE_FILES = (LOG_FILE + "-wal", LOG_FILE + "-shm")
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,     -- order in the workspace's log, never reused
    session_id TEXT NOT NULL,   -- the conversation it belongs to
    seq INTEGER NOT NULL,       -- the broadcast's seq (of its last update)
    kind TEXT NOT NULL,         -- the message's "type"
    message_id TEXT,            -- an assistant message's id (updated in place)
    body TEXT NOT NULL          -- the message as broadcast, JSON
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages (session_id, id);
"""


@dataclass(slots=True)
class LoggedMessage:
    """A message of the log as the session keeps it in its window."""

    row_id: int
    message_id: str | None
    text: str


@dataclass(slots=True)
class LogTail:
    """What a session needs of its conversation when it starts."""

    messages: list[LoggedMessage]  # the newest, oldest first, within the byte budget
    first_row_id: int | None  # the conversation's first message (None: empty)
    next_row_id: int  # the id the next message of the workspace gets


@dataclass(slots=True)
class LogPage:
    """Older messages, for a tab that scrolls up."""

    texts: list[str]
    first_row_id: int | None  # the oldest message in ``texts``
    has_more: bool


class ConversationLogError(Exception):
    """The log could not be opened (a damaged file, a read-only folder)."""


class ConversationLog:
    """The append-only log of one workspace (all its conversations).

    Writes (``append``, ``replace``) and start-up reads happen in one
    thread, the event loop's; ``read_page`` and ``checkpoint`` in any
    thread, on a connection of their own."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._db = _connect(path)
        except sqlite3.Error as exc:
            raise ConversationLogError(f"{path}: {exc}") from exc
        self._reader: sqlite3.Connection | None = None
        self._reader_lock = threading.Lock()
        # The writer connection is used from the event loop, and closed from
        # a worker thread at exit: SQLite crashes the process (not an
        # exception) when a connection is closed while another thread is
        # using it, so each use and the close hold this lock. Uncontended,
        # as it almost always is, it costs well under a microsecond.
        self._db_lock = threading.RLock()
        self._closed = False
        self.writes = 0  # since the last checkpoint

    @classmethod
    def open(cls, state_dir: Path) -> ConversationLog:
        """The workspace's log, created when missing. A file that is not a
        log (damaged, or written by something else) is moved aside to
        ``conversation.db.corrupt`` with a warning and a new log started:
        the agent's own session still resumes, only the chat shown is lost."""
        state_dir.mkdir(parents=True, exist_ok=True)
        path = state_dir / LOG_FILE
        try:
            return cls(path)
        except ConversationLogError as exc:
            if not path.exists():
                raise
            backup = path.with_name(LOG_FILE + ".corrupt")
            path.replace(backup)
            for side in LOG_SIDE_FILES:
                (state_dir / side).unlink(missing_ok=True)
            log.warning("%s was unreadable (%s); moved it to %s", path, exc.__cause__, backup.name)
            return cls(path)

    # --- start-up ---

    def is_empty(self, session_id: str) -> bool:
        row = self._db.execute("SELECT 1 FROM messages WHERE session_id = ? LIMIT 1",
                               (session_id,)).fetchone()
        return row is None

    def import_messages(self, session_id: str, messages: Iterable[tuple[int, str | None, str, str]]
                        ) -> int:
        """Add ``(seq, message_id, kind, text)`` rows in one transaction (the
        conversation of an older ``history.json``); returns how many."""
        next_id = self._next_row_id()
        rows = [(next_id + i, session_id, seq, kind, message_id, _storable(text))
                for i, (seq, message_id, kind, text) in enumerate(messages)]
        with self._db:
            self._db.executemany(
                "INSERT INTO messages (id, session_id, seq, kind, message_id, body)"
                " VALUES (?, ?, ?, ?, ?, ?)", rows)
        self.writes += len(rows)
        return len(rows)

    def tail(self, session_id: str, max_bytes: int) -> LogTail:
        """The newest messages of ``session_id`` that fit in ``max_bytes``
        (at least one), and where the conversation and the log stand."""
        db = self._db
        first = db.execute("SELECT MIN(id) FROM messages WHERE session_id = ?",
                           (session_id,)).fetchone()[0]
        newest_first: list[LoggedMessage] = []
        used = 0
        if first is not None:
            cursor = db.execute(
                "SELECT id, message_id, body FROM messages WHERE session_id = ?"
                " ORDER BY id DESC", (session_id,))
            for row_id, message_id, body in cursor:
                if newest_first and used + len(body) > max_bytes:
                    break
                newest_first.append(LoggedMessage(row_id, message_id, body))
                used += len(body)
            cursor.close()
        newest_first.reverse()
        return LogTail(newest_first, first, self._next_row_id())

    def _next_row_id(self) -> int:
        return (self._db.execute("SELECT MAX(id) FROM messages").fetchone()[0] or 0) + 1

    # --- while serving ---

    def append(self, session_id: str, row_id: int, seq: int, kind: str,
               message_id: str | None, text: str) -> None:
        """Add a message (as broadcast), committed when this returns."""
        self._write("INSERT INTO messages (id, session_id, seq, kind, message_id, body)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (row_id, session_id, seq, kind, message_id, _storable(text)))

    def replace(self, row_id: int, seq: int, text: str) -> None:
        """A message that grew (an assistant message's next block)."""
        self._write("UPDATE messages SET seq = ?, body = ? WHERE id = ?",
                    (seq, _storable(text), row_id))

    def _write(self, sql: str, params: tuple[object, ...]) -> None:
        try:
            with self._db_lock:
                if self._closed:
                    return  # a message after the exit began: the log is already at rest
                with self._db:
                    self._db.execute(sql, params)
        except (sqlite3.Error, OSError) as exc:
            # A full disk: the chat goes on (in memory), the log says why.
            log.warning("conversation log: could not write a message: %s", exc)
            return
        self.writes += 1

    def read_page(self, session_id: str, before: int, max_bytes: int, max_count: int) -> LogPage:
        """Messages of ``session_id`` older than row ``before``, newest
        last, within ``max_bytes`` (at least one) and ``max_count``. For a
        worker thread (its own connection)."""
        with self._reader_lock:
            if self._closed:
                raise ConversationLogError("the conversation log is closed")
            reader = self._reader_connection()
            rows = reader.execute(
                "SELECT id, body FROM messages WHERE session_id = ? AND id < ?"
                " ORDER BY id DESC LIMIT ?", (session_id, before, max_count + 1)).fetchall()
        texts: list[str] = []
        used = 0
        oldest: int | None = None
        for row_id, body in rows[:max_count]:
            if texts and used + len(body) > max_bytes:
                break
            texts.append(body)
            used += len(body)
            oldest = row_id
        texts.reverse()
        return LogPage(texts, oldest, len(texts) < len(rows))

    # --- the list of conversations (pneuma.server.conversations) ---
    #
    # Rare writes (a new conversation, a title, a rename), committed at
    # once in the event loop like the messages.

    def list_conversations(self) -> list[Conversation]:
        """Every conversation, most recently updated first; conversations
        of an older log that has no list yet are listed first."""
        with self._db_lock:
            self._check_open()
            catalogue.adopt_unlisted(self._db)
            return catalogue.listed(self._db)

    def get_conversation(self, conversation_id: str) -> Conversation | None:
        with self._db_lock:
            self._check_open()
            row = self._db.execute(
                "SELECT id, title, created, updated, agent_session_id FROM conversations"
                " WHERE id = ?", (conversation_id,)).fetchone()
        return Conversation(*row[:4], agent_session_id=row[4]) if row is not None else None

    def ensure_conversation(self, conversation_id: str,
                            agent_session_id: str | None = None) -> Conversation:
        """The conversation ``conversation_id``, listed now if it was not
        (a new one, or one of an older log); an ``agent_session_id`` given
        fills in one the list does not know yet (a ``session.json`` from
        before the list)."""
        with self._db_lock:
            self._check_open()
            catalogue.adopt_unlisted(self._db)
            found = self.get_conversation(conversation_id)
            if found is None:
                now = time.time()
                found = Conversation(conversation_id, "", now, now,
                                     agent_session_id=agent_session_id)
                with self._db:
                    self._db.execute("INSERT INTO conversations (id, title, created, updated,"
                                     " agent_session_id) VALUES (?, ?, ?, ?, ?)",
                                     (conversation_id, "", now, now, agent_session_id))
            elif found.agent_session_id is None and agent_session_id is not None:
                self.update_conversation(conversation_id, agent_session_id=agent_session_id)
                found.agent_session_id = agent_session_id
            return found

    def update_conversation(self, conversation_id: str, *, title: str | None = None,
                            updated: float | None = None,
                            agent_session_id: str | None | object = catalogue.KEEP) -> None:
        """Change what is given of one conversation's entry."""
        sets: list[str] = []
        params: list[object] = []
        if title is not None:
            sets.append("title = ?")
            params.append(title)
        if updated is not None:
            sets.append("updated = ?")
            params.append(updated)
        if agent_session_id is not catalogue.KEEP:
            sets.append("agent_session_id = ?")
            params.append(agent_session_id)
        if not sets:
            return
        with self._db_lock:
            if self._closed:
                return
            with self._db:
                self._db.execute(f"UPDATE conversations SET {', '.join(sets)} WHERE id = ?",
                                 (*params, conversation_id))

    def delete_conversation(self, conversation_id: str) -> None:
        """Remove a conversation: its entry and every message of it."""
        with self._db_lock:
            self._check_open()
            with self._db:
                self._db.execute("DELETE FROM messages WHERE session_id = ?", (conversation_id,))
                self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
        self.writes += 1

    def checkpoint(self) -> None:
        """Fold the WAL into the database, fsynced: what makes the log
        durable against a power loss. For a worker thread; a no-op when
        nothing was written since the last one."""
        if self.writes == 0:
            return
        self.writes = 0
        with self._reader_lock:
            if self._closed:
                return
            try:
                self._reader_connection().execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error as exc:
                log.warning("conversation log: checkpoint failed: %s", exc)

    def _check_open(self) -> None:
        if self._closed:
            raise ConversationLogError("the conversation log is closed")

    def _reader_connection(self) -> sqlite3.Connection:
        if self._reader is None:
            self._reader = sqlite3.connect(self.path, check_same_thread=False)
        return self._reader

    def close(self) -> None:
        """Checkpoint and close (idempotent): one file at rest, no WAL."""
        with self._reader_lock, self._db_lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._reader is not None:
                    self._reader.close()
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._db.close()
            except sqlite3.Error:
                log.exception("closing the conversation log failed")


def _storable(text: str) -> str:
    """``text`` as SQLite can store it (UTF-8). A lone surrogate (an agent's
    ``"\\ud800"``) has no UTF-8 form: written as its JSON escape instead,
    which reads back as the same string (JSON text has such characters only
    inside strings)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _connect(path: Path) -> sqlite3.Connection:
    # The conversation is the owner's alone; SQLite gives its -wal and -shm
    # files the database file's permissions, so create that one 0600.
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        # NORMAL: a commit is in the WAL (safe from a process crash) without
        # an fsync; checkpoints, in a worker thread, do the fsyncs.
        db.execute("PRAGMA synchronous=NORMAL")
        # Never checkpoint in the event loop's commits (an fsync there).
        db.execute("PRAGMA wal_autocheckpoint=0")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"written by a newer Pneuma (log format {version}, this one reads {SCHEMA_VERSION})")
        # The list of conversations is a table beside the messages (no new
        # format version: a Pneuma that predates it ignores the table).
        db.executescript(_SCHEMA + catalogue.TABLE_SCHEMA)
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    except BaseException:
        db.close()
        raise
    # isolation_level=None plus explicit `with db` blocks: sqlite3's context
    # manager commits, but only if a transaction was opened; open them.
    db.isolation_level = "DEFERRED"
    return db
