"""Saving what can still be read of a damaged conversation log.

A log whose file SQLite reports as damaged (``SQLITE_CORRUPT``, a failed
``PRAGMA integrity_check``) is not thrown away: every row that can still be
read goes into a fresh log, and the damaged file is kept beside it under a
name that never replaces an earlier one (docs/conversations.md, "When the
log is damaged, locked or the disk is full").

A damaged b-tree page makes a scan stop with an error where it is met, so
the rows are read from both ends and then, for what lies between, one by
one by their id (each lookup reaches a row through its own path down the
tree: only the rows on a damaged page are lost).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

# Ids between the rows read from both ends are looked up one by one; a
# log's ids are dense (one per message), so this many lookups (a few
# seconds at most) covers any real gap, and a garbled id never makes the
# start run for hours.
MAX_PROBES = 2_000_000

_COLUMNS = "id, session_id, seq, kind, message_id, body"

Row = tuple[int, str, int, str, str | None, str]


@dataclass(slots=True)
class Recovered:
    """What was read of a damaged log."""

    messages: list[Row] = field(default_factory=list)
    conversations: list[tuple[object, ...]] = field(default_factory=list)


def backup_name(path: Path, now: float | None = None) -> Path:
    """A free name for a damaged ``path`` beside it:
    ``conversation.db.corrupt-<UTC time>`` with ``-2``, ``-3`` … when that
    one is taken (by the file, or by a side file of an earlier backup)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    base = f"{path.name}.corrupt-{stamp}"
    for n in range(1, 10_000):
        name = base if n == 1 else f"{base}-{n}"
        if not any(os.path.lexists(path.with_name(name + suffix)) for suffix in ("", "-wal")):
            return path.with_name(name)
    raise FileExistsError(f"no free name for a backup of {path}")


def move_aside(path: Path, side_suffixes: tuple[str, ...]) -> Path:
    """Keep the damaged ``path`` (and its WAL, which holds its latest
    pages) under a new backup name, never over an earlier file (a rename
    that refuses a taken name). The ``-shm`` index is rebuilt from the WAL:
    dropped. Called once every readable row is in the fresh log."""
    while True:
        backup = backup_name(path)
        try:
            rename_no_replace(path, backup)
        except FileExistsError:
            continue  # taken between the check and the rename: the next name
        break
    for suffix in side_suffixes:
        side = path.with_name(path.name + suffix)
        if not os.path.lexists(side):
            continue
        if suffix == "-wal":
            try:
                rename_no_replace(side, backup.with_name(backup.name + suffix))
                continue
            except FileExistsError:
                pass  # its rows are in the fresh log already; never left beside it
        # A WAL left beside the fresh log would be replayed into it.
        os.unlink(side)
    return backup


def rename_no_replace(source: Path, target: Path) -> None:
    """``rename(2)`` that raises ``FileExistsError`` when ``target`` exists:
    Linux's ``renameat2(RENAME_NOREPLACE)`` where the system and the file
    system have it; elsewhere a check, then a rename (one Pneuma per
    workspace holds its lock, so nothing else names backups meanwhile).
    Not a hard link then an unlink: a kill between the two would leave a
    log with two links, which a start refuses (pneuma.core.state_files)."""
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is not None:
        done = renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target),
                         _RENAME_NOREPLACE)
        if done == 0:
            return
        err = ctypes.get_errno()
        if err == errno.EEXIST:
            raise FileExistsError(err, os.strerror(err), str(target))
        if err not in (errno.EINVAL, errno.ENOSYS):  # EINVAL: a file system without the flag
            raise OSError(err, os.strerror(err), str(target))
    if os.path.lexists(target):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target))
    os.rename(source, target)


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def read_damaged(path: Path) -> Recovered:
    """Every row of ``messages`` (and of ``conversations``) that can be
    read from the log at ``path``, opened read-only. A row whose body is
    not JSON text (a damaged page can garble a row without SQLite
    noticing) is left out: the page would not show it."""
    found = Recovered()
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return found
    try:
        rows: dict[int, Row] = {}
        low = _scan(db, "ORDER BY id", rows)
        high = _scan(db, "ORDER BY id DESC", rows)
        if low is not None or high is not None:
            _probe_between(db, rows, low, high)
        found.messages = [rows[key] for key in sorted(rows)]
        found.conversations = _readable(db, "SELECT id, title, created, updated,"
                                        " agent_session_id FROM conversations")
    finally:
        db.close()
    return found


def _scan(db: sqlite3.Connection, order: str, rows: dict[int, Row]) -> int | None:
    """Rows in ``order`` until the first error; the last id read (None:
    the scan failed before any row, or found none)."""
    last: int | None = None
    try:
        for raw in db.execute(f"SELECT {_COLUMNS} FROM messages {order}"):
            row = _valid(raw)
            if row is not None:
                rows[row[0]] = row
            if isinstance(raw[0], int):
                last = raw[0]
    except sqlite3.Error:
        pass
    return last


def _probe_between(db: sqlite3.Connection, rows: dict[int, Row],
                   low: int | None, high: int | None) -> None:
    """Look up, one id at a time, the ids between the two scans' ends."""
    start = (low or 0) + 1
    end = high if high is not None else _largest_id(db, start)
    for row_id in range(start, min(end, start + MAX_PROBES)):
        if row_id in rows:
            continue
        try:
            raw = db.execute(f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (row_id,)).fetchone()
        except sqlite3.Error:
            continue
        row = _valid(raw) if raw is not None else None
        if row is not None:
            rows[row_id] = row


def _largest_id(db: sqlite3.Connection, start: int) -> int:
    """The end of the ids to look up when the backward scan read nothing:
    the largest id the index of conversations knows, else a bounded span."""
    try:
        value = db.execute("SELECT MAX(id) FROM messages INDEXED BY messages_by_session"
                           ).fetchone()[0]
        if isinstance(value, int):
            return value + 1
    except sqlite3.Error:
        pass
    return start + MAX_PROBES


def _valid(raw: tuple[object, ...]) -> Row | None:
    row_id, session_id, seq, kind, message_id, body = raw
    if not (isinstance(row_id, int) and isinstance(session_id, str) and isinstance(seq, int)
            and isinstance(kind, str) and isinstance(body, str)
            and (message_id is None or isinstance(message_id, str))):
        return None
    try:
        json.loads(body)
    except ValueError:
        return None
    return row_id, session_id, seq, kind, message_id, body


def _readable(db: sqlite3.Connection, sql: str) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    try:
        for row in db.execute(sql):
            out.append(tuple(row))
    except sqlite3.Error:
        pass
    return out
