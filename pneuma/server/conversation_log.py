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

What can go wrong with the file, and what happens then
(docs/conversations.md, "When the log is damaged, locked or the disk is
full"): only real damage (not a database, a failed ``integrity_check``) moves
the file aside, under a name that never replaces an earlier backup, after
every readable row went into a fresh log (``log_recovery``); a log another
process holds is waited for, then refused (``ConversationLogLocked``); a
full disk or an I/O error opens it read-only. While saving is paused
(``paused``), messages wait in memory, in order, and ``resume_saving``
writes them once the disk takes them again.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pneuma.server import conversations as catalogue
from pneuma.server import log_file
from pneuma.server.conversations import Conversation
from pneuma.server.history_preview import page_text
from pneuma.server.log_file import (
    DAMAGED_TEXT,
    INSERT,
    LOG_FILE,
    LOG_SIDE_FILES,
    RECOVERING_FILE,
    SCHEMA_VERSION,  # noqa: F401 (part of this module's interface)
    WRITE_LOCK_WAIT_MS,  # noqa: F401
    Damaged,
    connect,
    connect_read_only,
    decoded,
    is_unsafe_path,
    memory_log,
    say_if_empty,
    write_fresh_log,
)
from pneuma.server.log_recovery import move_aside, read_damaged
from pneuma.server.saving_status import pause_reason

log = logging.getLogger(__name__)
_T = TypeVar("_T")

# Messages waiting in memory while saving is paused, at most this much
# text; beyond it the oldest waiting ones are given up (and counted).
PENDING_LIMIT_BYTES = 64 * 1024 * 1024
# SQLite's primary result codes that mean the file itself is damaged, or held.
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6


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


class ConversationLogRefused(ConversationLogError):
    """The log is there but must not be used now (held by another process,
    or written by a newer Pneuma): the start stops with this one line."""


class ConversationLogLocked(ConversationLogRefused):
    """Another process held the log for longer than ``LOCK_WAIT_SECONDS``."""


class ConversationLog:
    """The append-only log of one workspace (all its conversations).

    Writes (``append``, ``replace``) and start-up reads happen in one
    thread, the event loop's; ``read_page`` and ``checkpoint`` in any
    thread, on a connection of their own."""

    def __init__(self, path: Path, db: sqlite3.Connection | None = None, *,
                 paused: str | None = None) -> None:
        self.path = path
        if db is None:
            try:
                db = connect(path)
            except (sqlite3.Error, Damaged) as exc:
                raise ConversationLogError(f"{path}: {exc}") from exc
        self._db = db
        # Why messages wait in memory instead of being written (None: they
        # are written as they come); ``_read_only``: ``_db`` cannot write.
        self.paused = paused
        self._read_only = paused is not None
        self._pending: dict[tuple[str, int], tuple[str, list[object]]] = {}
        self._pending_bytes = 0
        self.given_up = 0  # waiting messages dropped past PENDING_LIMIT_BYTES
        # Called (in the event loop) when saving pauses, with the reason.
        self.on_pause: Callable[[str], None] | None = None
        self._checkpoint_failing = False
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
        """The workspace's log, created when missing.

        A damaged file (not a database, or a failed ``integrity_check``) is
        recovered: its readable rows go into a fresh log and the file is
        kept as ``conversation.db.corrupt-<time>``. A log another process
        holds raises ``ConversationLogLocked`` after a bounded wait. A full
        disk or an I/O error gives a log open read-only (``paused``): what
        it holds is shown, new messages wait in memory."""
        state_dir.mkdir(parents=True, exist_ok=True)
        path = state_dir / LOG_FILE
        say_if_empty(path)
        try:
            return cls(path, connect(path))
        except Damaged as exc:
            return cls._recovered(path, str(exc))
        except (sqlite3.Error, OSError) as exc:
            if is_unsafe_path(exc):
                raise  # a link planted under .pneuma/: the start stops on it
            return cls._after_open_error(path, exc)

    @classmethod
    def _after_open_error(cls, path: Path, exc: BaseException) -> ConversationLog:
        code = getattr(exc, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        if primary in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            return cls._recovered(path, str(exc))
        if primary in (_SQLITE_BUSY, _SQLITE_LOCKED):
            raise ConversationLogLocked(
                f"{path} is locked by another process (waited {log_file.LOCK_WAIT_SECONDS:g} s);"
                " close what holds it and start again") from None
        reason = pause_reason(exc)
        if reason is None:
            if isinstance(exc, sqlite3.DatabaseError) and code is None:
                raise ConversationLogRefused(f"{path}: {exc}") from None  # a newer format
            raise ConversationLogError(f"{path}: {exc}") from exc
        log.warning("%s cannot be written (%s): opened read-only; new messages wait in"
                    " memory until it can be written", path, reason)
        return cls(path, connect_read_only(path), paused=reason)

    @classmethod
    def _recovered(cls, path: Path, problem: str) -> ConversationLog:
        """A fresh log at ``path`` holding every readable row of the
        damaged file there, which is kept under a backup name."""
        found = read_damaged(path)
        fresh = path.with_name(RECOVERING_FILE)
        try:
            write_fresh_log(fresh, found)
        except (sqlite3.Error, OSError) as exc:
            reason = pause_reason(exc) or str(exc)
            # Nothing moved: the rows read are shown from memory, the
            # damaged file stays where it is for the next start.
            log.warning("%s is damaged (%s) and a recovered copy cannot be written (%s):"
                        " %d messages shown from memory", path, problem, reason,
                        len(found.messages))
            return cls(path, memory_log(found), paused=reason)
        backup = move_aside(path, LOG_SIDE_FILES)
        os.replace(fresh, path)
        log.warning("%s was damaged (%s): saved %d messages into a new log; the damaged"
                    " file is kept as %s", path, problem, len(found.messages), backup.name)
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
        with self._db_lock:
            if self.paused is None:
                try:
                    with self._db:
                        self._db.executemany(INSERT, rows)
                except (sqlite3.Error, OSError) as exc:
                    if pause_reason(exc) is None:
                        raise
                    self._pause(pause_reason(exc) or "")
                else:
                    self.writes += len(rows)
                    return len(rows)
            for row in rows:
                self._keep(("row", row[0]), INSERT, list(row))
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
                body = _readable_body(body)
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
        self._write(("row", row_id), INSERT,
                    [row_id, session_id, seq, kind, message_id, _storable(text)])

    def replace(self, row_id: int, seq: int, text: str) -> None:
        """A message that grew (an assistant message's next block)."""
        body = _storable(text)
        with self._db_lock:
            waiting = self._pending.get(("row", row_id))
            if waiting is not None:
                # Its first form is still waiting to be written: it is written as it is now.
                self._pending_bytes += len(body) - len(str(waiting[1][5]))
                waiting[1][2], waiting[1][5] = seq, body
                return
        self._write(("set", row_id), "UPDATE messages SET seq = ?, body = ? WHERE id = ?",
                    [seq, body, row_id])

    def _write(self, key: tuple[str, int], sql: str, params: list[object]) -> None:
        with self._db_lock:
            if self._closed:
                return  # a message after the exit began: the log is already at rest
            if self.paused is None:
                try:
                    with self._db:
                        self._db.execute(sql, params)
                except (sqlite3.Error, OSError) as exc:
                    reason = pause_reason(exc)
                    if reason is None:
                        log.warning("conversation log: could not write a message: %s", exc)
                        return
                    self._pause(reason)
                else:
                    self.writes += 1
                    return
            self._keep(key, sql, params)

    def _pause(self, reason: str) -> None:
        """Saving stops until ``resume_saving`` succeeds: said once."""
        self.paused = reason
        if self.on_pause is not None:
            self.on_pause(reason)
        else:
            log.warning("conversation log: saving paused (%s); messages wait in memory", reason)

    def _keep(self, key: tuple[str, int], sql: str, params: list[object]) -> None:
        """A write waiting for the disk; the latest one per row is kept."""
        size = sum(len(p) for p in params if isinstance(p, str))
        previous = self._pending.pop(key, None)
        if previous is not None:
            self._pending_bytes -= sum(len(p) for p in previous[1] if isinstance(p, str))
        self._pending[key] = (sql, params)
        self._pending_bytes += size
        while self._pending_bytes > PENDING_LIMIT_BYTES and len(self._pending) > 1:
            oldest = next(iter(self._pending))
            _sql, dropped = self._pending.pop(oldest)
            self._pending_bytes -= sum(len(p) for p in dropped if isinstance(p, str))
            self.given_up += 1

    @property
    def waiting(self) -> int:
        """How many messages wait in memory to be written."""
        return len(self._pending)

    def resume_saving(self) -> bool:
        """Write what waits, if the disk takes it now (a worker thread, every
        few seconds while ``paused``); True when saving resumed."""
        with self._db_lock:
            if self.paused is None or self._closed:
                return False
            db = self._db
            if self._read_only:
                try:
                    db = connect(self.path)
                except (sqlite3.Error, OSError, Damaged):
                    return False
            try:
                with db:
                    for sql, params in self._pending.values():
                        db.execute(sql, params)
            except (sqlite3.Error, OSError):
                if db is not self._db:
                    db.close()
                return False
            if db is not self._db:
                self._db.close()
                self._db = db
                self._read_only = False
            self.writes += len(self._pending)
            self._pending.clear()
            self._pending_bytes = 0
            self.paused = None
            return True

    def read_page(self, session_id: str, before: int, max_bytes: int, max_count: int) -> LogPage:
        """Messages of ``session_id`` older than row ``before``, newest
        last, within ``max_bytes`` (at least one) and ``max_count``. For a
        worker thread (its own connection)."""
        with self._reader_lock:
            if self._closed:
                raise ConversationLogError("the conversation log is closed")
            reader = self._reader_connection()
            rows = reader.execute(
                "SELECT id, kind, body FROM messages WHERE session_id = ? AND id < ?"
                " ORDER BY id DESC LIMIT ?", (session_id, before, max_count + 1)).fetchall()
        taken: list[tuple[int, str, str]] = []
        used = 0
        for row_id, kind, body in rows[:max_count]:
            body = page_text(row_id, _readable_body(body))
            if taken and used + len(body) > max_bytes:
                break
            taken.append((row_id, kind, body))
            used += len(body)
        if len(taken) < len(rows):
            # More come before: the page starts with a turn (the person's
            # message) unless a single turn is larger than a page.
            starts = [i for i, (_, kind, _) in enumerate(taken) if kind == "user_message"]
            if starts:
                del taken[starts[-1] + 1:]
        taken.reverse()
        oldest = taken[0][0] if taken else None
        return LogPage([body for _, _, body in taken], oldest, len(taken) < len(rows))

    def read_message(self, session_id: str, row_id: int) -> str | None:
        """The whole of one message of ``session_id`` (a page had its
        preview); None when there is no such message. For a worker thread."""
        with self._reader_lock:
            if self._closed:
                raise ConversationLogError("the conversation log is closed")
            row = self._reader_connection().execute(
                "SELECT body FROM messages WHERE id = ? AND session_id = ?",
                (row_id, session_id)).fetchone()
        return None if row is None else _readable_body(row[0])

    def since(self, session_id: str, seq: int, max_bytes: int) -> list[str] | None:
        """The messages of ``session_id`` broadcast (or updated) after
        ``seq``, in seq order, as a tab that saw everything up to ``seq``
        would have received them; None when they are more than
        ``max_bytes``. In the event loop: it reads back from the newest
        message to the start of the turn ``seq`` fell in (only the message
        being streamed, of the current turn, is ever updated), so its cost
        is what was missed, not the conversation's length."""
        found: list[tuple[int, str]] = []
        used = 0
        with self._db_lock:
            self._check_open()
            cursor = self._db.execute(
                "SELECT seq, kind, body FROM messages WHERE session_id = ? ORDER BY id DESC",
                (session_id,))
            try:
                for row_seq, kind, body in cursor:
                    if row_seq > seq:
                        body = _readable_body(body)
                        used += len(body)
                        if used > max_bytes:
                            return None
                        found.append((row_seq, body))
                    elif kind == "user_message":
                        break
            finally:
                cursor.close()
        found.sort(key=lambda row: row[0])
        return [body for _, body in found]

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
        # Each column with the value meaning "not given": the agent's session
        # id may be set to None (forgotten), so its "not given" is KEEP.
        columns = (("title", title, None), ("updated", updated, None),
                   ("agent_session_id", agent_session_id, catalogue.KEEP))
        given = {column: value for column, value, not_given in columns if value is not not_given}
        if not given:
            return
        sets = [f"{column} = ?" for column in given]
        with self._db_lock:
            if self._closed:
                return
            with self._db:
                self._db.execute(f"UPDATE conversations SET {', '.join(sets)} WHERE id = ?",
                                 (*given.values(), conversation_id))

    def delete_conversation(self, conversation_id: str) -> None:
        """Remove a conversation: its entry and every message of it."""
        with self._db_lock:
            self._check_open()
            with self._db:
                self._db.execute("DELETE FROM messages WHERE session_id = ?", (conversation_id,))
                self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
        self.writes += 1

    def run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """``work`` on the writer connection, under its lock: for a
        feature's own tables beside the messages (the branches of
        ``pneuma.server.conversation_branches``). Rows it adds count
        towards the next checkpoint."""
        with self._db_lock:
            self._check_open()
            if self._read_only:
                raise ConversationLogError(f"the conversation log cannot be written ({self.paused})")
            result = work(self._db)
        self.writes += 1
        return result

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
                # Said once per failing spell: the WAL keeps every message meanwhile.
                if not self._checkpoint_failing:
                    log.warning("conversation log: checkpoint failed: %s", exc)
                self._checkpoint_failing = True
            else:
                self._checkpoint_failing = False

    def _check_open(self) -> None:
        if self._closed:
            raise ConversationLogError("the conversation log is closed")

    def _reader_connection(self) -> sqlite3.Connection:
        if self._reader is None:
            self._reader = sqlite3.connect(self.path, check_same_thread=False)
            self._reader.text_factory = decoded
        return self._reader

    def close(self) -> None:
        """Checkpoint and close (idempotent): one file at rest, no WAL."""
        if self.paused is not None:
            self.resume_saving()  # a last try for what waits
        with self._reader_lock, self._db_lock:
            if self._closed:
                return
            self._closed = True
            if self._pending or self.given_up:
                log.warning("conversation log: %d messages of this run could not be saved (%s)",
                            len(self._pending) + self.given_up, self.paused)
            try:
                if self._reader is not None:
                    self._reader.close()
                if not self._read_only:
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                # One line: the WAL keeps what the checkpoint could not fold in.
                log.warning("conversation log: could not fold the WAL in at exit: %s", exc)
            finally:
                self._db.close()


def _readable_body(body: object) -> str:
    """A row's JSON text as it may go to a tab (spliced into a frame: a
    garbled one must not break the frame)."""
    if isinstance(body, str) and body.startswith("{") and body.endswith("}"):
        return body
    return DAMAGED_TEXT


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
