"""The conversation log's file: opening it (checked, or read-only when the
disk cannot take writes), and writing a fresh one from what a damaged file
still held. The log itself (its rows, what waits while saving is paused)
is pneuma.server.conversation_log; docs/conversations.md, "When the log is
damaged, locked or the disk is full", says what each case does.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from pathlib import Path

from pneuma.core.state_files import UnsafeStatePath, check_sqlite_files
from pneuma.server import conversations as catalogue
from pneuma.server.log_recovery import Recovered

log = logging.getLogger("pneuma.server.conversation_log")


class Damaged(Exception):
    """``PRAGMA integrity_check`` found the file damaged."""


LOG_FILE = "conversation.db"
# The log's side files while it is open (or after a kill -9).
LOG_SIDE_FILES = (LOG_FILE + "-wal", LOG_FILE + "-shm")
SCHEMA_VERSION = 1
# How long a start waits for a log another process holds before refusing.
LOCK_WAIT_SECONDS = 3.0
# How long a write in the event loop waits for such a process: then the
# message waits in memory, and the stream never stalls behind the lock.
WRITE_LOCK_WAIT_MS = 100
# A fresh log being filled from a damaged one, renamed over it when done.
RECOVERING_FILE = LOG_FILE + ".recovering"

SCHEMA = """
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



# What a tab is shown for a row whose text a damaged page garbled without
# SQLite noticing (integrity_check reads structure and indexes, not contents).
DAMAGED_TEXT = json.dumps({"type": "system_note", "code": "damaged_message",
                           "text": "A message here could not be read: the log's file is damaged."})


def decoded(data: bytes) -> str:
    """SQLite's text as str; bytes that are not UTF-8 (a garbled page)
    read as a damaged message instead of failing the whole read."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return DAMAGED_TEXT


INSERT = ("INSERT INTO messages (id, session_id, seq, kind, message_id, body)"
           " VALUES (?, ?, ?, ?, ?, ?)")


def say_if_empty(path: Path) -> None:
    """A log cut to zero bytes (by a tool, a full disk's truncation, a
    hand) is a valid empty database to SQLite: said, not silently reused."""
    try:
        info = os.lstat(path)
        wal = os.lstat(path.with_name(LOG_FILE + "-wal")).st_size \
            if os.path.lexists(path.with_name(LOG_FILE + "-wal")) else 0
    except OSError:
        return
    if info.st_size == 0 and wal == 0 and os.path.isfile(path):
        log.warning("%s is empty (0 bytes): it holds no conversation; a new log starts in it",
                    path)


def is_unsafe_path(exc: BaseException) -> bool:
    """A link or a non-regular file planted under ``.pneuma/`` (refused
    by pneuma.core.state_files, not a disk problem to wait out)."""
    return isinstance(exc, UnsafeStatePath)


def connect_read_only(path: Path) -> sqlite3.Connection:
    """The log as it is, for reading; an empty log in memory when the file
    cannot be read or holds no log yet (a new one on a full disk)."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                             check_same_thread=False, isolation_level=None)
        db.text_factory = decoded
        try:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.Error:
            db.close()
            raise
        if "messages" in tables and "conversations" in tables:
            db.isolation_level = "DEFERRED"
            return db
        db.close()
    except sqlite3.Error:
        pass
    return memory_log(Recovered())


def memory_log(found: Recovered) -> sqlite3.Connection:
    """A log in memory holding ``found`` (what could be read)."""
    db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    db.executescript(SCHEMA + catalogue.TABLE_SCHEMA)
    fill(db, found)
    db.isolation_level = "DEFERRED"
    return db


def fill(db: sqlite3.Connection, found: Recovered) -> None:
    with db:
        db.execute("BEGIN")
        db.executemany(INSERT, found.messages)
        db.executemany("INSERT OR IGNORE INTO conversations (id, title, created, updated,"
                       " agent_session_id) VALUES (?, ?, ?, ?, ?)",
                       [row for row in found.conversations if _listable(row)])


def _listable(row: tuple[object, ...]) -> bool:
    conversation_id, title, created, updated, agent = row
    return (isinstance(conversation_id, str) and isinstance(title, str)
            and isinstance(created, (int, float)) and isinstance(updated, (int, float))
            and (agent is None or isinstance(agent, str)))


def write_fresh_log(fresh: Path, found: Recovered) -> None:
    """A complete new log file at ``fresh`` holding ``found``, at rest."""
    for name in (fresh.name, *(fresh.name + side for side in ("-wal", "-shm", "-journal"))):
        try:
            os.unlink(fresh.with_name(name))  # a recovery killed before its rename
        except FileNotFoundError:
            pass
    db = connect(fresh, check=False)
    try:
        db.isolation_level = None
        fill(db, found)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


def connect(path: Path, *, check: bool = True) -> sqlite3.Connection:
    # SQLite opens the log and its side files by path: none may be a link
    # (pneuma.core.state_files refuses one planted under .pneuma/).
    check_sqlite_files(path)
    # The conversation is the owner's alone; SQLite gives its -wal and -shm
    # files the database file's permissions, so create that one 0600.
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600))
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                         timeout=LOCK_WAIT_SECONDS)
    db.text_factory = decoded
    try:
        db.execute("PRAGMA journal_mode=WAL")
        if check:
            # Damage found now is recovered now; found later (a page read
            # while serving) it would stop every start (about 60 ms for
            # 90 MB of log, see docs/conversations.md).
            verdict = db.execute("PRAGMA integrity_check(3)").fetchall()
            if verdict != [("ok",)]:
                raise Damaged("; ".join(str(row[0]) for row in verdict[:3]))
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
        db.executescript(SCHEMA + catalogue.TABLE_SCHEMA)
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        # Once open, a write waits only briefly for another process's lock
        # (it then waits in memory): the event loop never stalls behind it.
        db.execute(f"PRAGMA busy_timeout={WRITE_LOCK_WAIT_MS}")
    except BaseException:
        db.close()
        raise
    # isolation_level=None plus explicit `with db` blocks: sqlite3's context
    # manager commits, but only if a transaction was opened; open them.
    db.isolation_level = "DEFERRED"
    return db
