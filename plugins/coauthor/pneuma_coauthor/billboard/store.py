"""The append-only event log on SQLite (docs/design/coauthor.md, "Event log").

WAL mode so readers (the REPL, the viewer, a second CLI) never block the
writer; ``synchronous=FULL`` so an event is on disk before ``append`` returns
(an acknowledged event survives a SIGKILL or a power cut). One writer per
process, serialised by a lock; writers in different processes serialise on
SQLite's own lock through ``BEGIN IMMEDIATE``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pneuma.api import check_sqlite_files
from pneuma_coauthor.domain.events import PAYLOADS, TaskEvent

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    task_id TEXT,
    author TEXT NOT NULL,
    ts TEXT NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_task ON events(task_id, seq);
CREATE INDEX IF NOT EXISTS events_ts ON events(ts);
"""

# Serialise writers of the same file inside one process (threads of the REPL,
# the watcher and the agent host share it).
_WRITE_LOCKS: dict[str, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def _write_lock(path: Path) -> threading.RLock:
    key = str(path.resolve())
    with _LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(key, threading.RLock())


class EventStore:
    def __init__(self, path: Path, *, synchronous: str = "FULL") -> None:
        self.path = path
        # Its folders made, none of them nor the files a link (a workspace
        # from a shared zip may carry them under .pneuma/).
        check_sqlite_files(path)
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so the
        # read-validate-insert of an append happens under SQLite's write lock.
        self._conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30.0)
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA synchronous={synchronous}")
        self._conn.executescript(SCHEMA)
        self.lock = _write_lock(path)
        self._read_lock = threading.Lock()

    def close(self) -> None:
        self._conn.close()

    # -- writing (callers hold self.lock and wrap in transaction()) ---------

    def begin(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self._conn.execute("COMMIT")

    def rollback(self) -> None:
        self._conn.execute("ROLLBACK")

    def find_event(self, event_id: str) -> TaskEvent | None:
        row = self._conn.execute(
            "SELECT seq, event_id, type, task_id, author, ts, payload FROM events WHERE event_id = ?", (event_id,)
        ).fetchone()
        return _row_to_event(row) if row else None

    def insert(self, event: TaskEvent) -> int:
        cursor = self._conn.execute(
            "INSERT INTO events (event_id, type, task_id, author, ts, payload) VALUES (?, ?, ?, ?, ?, ?)",
            (
                event.event_id,
                event.type,
                event.task_id,
                event.author_actor_id,
                event.timestamp,
                json.dumps(event.payload.dump(), ensure_ascii=False, separators=(",", ":")),
            ),
        )
        return int(cursor.lastrowid or 0)

    # -- reading -------------------------------------------------------------

    def last_seq(self) -> int:
        with self._read_lock:
            row = self._conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
        return int(row[0])

    def data_version(self) -> int:
        """Changes when another connection commits: a cheap 'anything new?' poll."""
        with self._read_lock:
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def read(
        self,
        after_seq: int = 0,
        *,
        until_seq: int | None = None,
        until_time: str | None = None,
        task_id: str | None = None,
        validate: bool = True,
        batch: int = 5000,
    ) -> Iterator[TaskEvent]:
        """Events in log order. ``validate=False`` skips pydantic on a log we
        wrote ourselves (rebuilding 100,000 events); it is never used for input."""
        for rows in self._row_batches(after_seq, until_seq, until_time, task_id, batch):
            for row in rows:
                yield _row_to_event(row, validate)

    def read_raw(
        self,
        after_seq: int = 0,
        *,
        until_seq: int | None = None,
        until_time: str | None = None,
        batch: int = 5000,
    ) -> Iterator[RawEvent]:
        """Events in log order as light ``RawEvent``s, for folding a log we
        wrote ourselves (every row was validated when it was appended): no
        pydantic, and one JSON decode per batch instead of one per row. This
        is what rebuilding 100,000 events spends its time on."""
        for rows in self._row_batches(after_seq, until_seq, until_time, None, batch):
            payloads = json.loads("[" + ",".join([row[6] for row in rows]) + "]")
            for row, payload in zip(rows, payloads):
                yield RawEvent(row[0], row[1], row[2], row[3], row[4], row[5], RawPayload(payload, _SPECS[row[2]]))

    def _row_batches(
        self,
        after_seq: int,
        until_seq: int | None,
        until_time: str | None,
        task_id: str | None,
        batch: int,
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The events table's rows after ``after_seq`` (and within the
        limits given), in log order, ``batch`` rows to a query (none empty).
        The read lock is held only while a batch is fetched, never while
        the caller works through it."""
        where = ["seq > ?"]
        args: list[Any] = []
        if until_seq is not None:
            where.append("seq <= ?")
            args.append(until_seq)
        if until_time is not None:
            where.append("ts <= ?")
            args.append(until_time)
        if task_id is not None:
            where.append("task_id = ?")
            args.append(task_id)
        sql = (
            "SELECT seq, event_id, type, task_id, author, ts, payload FROM events WHERE "
            + " AND ".join(where)
            + " ORDER BY seq LIMIT ?"
        )
        cursor_seq = after_seq
        while True:
            with self._read_lock:
                rows = self._conn.execute(sql, [cursor_seq, *args, batch]).fetchall()
            if rows:
                yield rows
            if len(rows) < batch:
                return
            cursor_seq = rows[-1][0]

    def integrity_ok(self) -> bool:
        with self._read_lock:
            return self._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


_MISSING = object()


def _field_specs(model: type) -> dict[str, tuple[str, Callable[[], Any]]]:
    """snake_case name -> (camelCase key, a function giving its default)."""
    specs: dict[str, tuple[str, Callable[[], Any]]] = {}
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        if field.default_factory is not None:
            default = field.default_factory
        else:
            value = None if field.is_required() else field.default
            default = (lambda v=value: v)  # noqa: E731
        specs[name] = (field.alias or name, default)
    return specs


class RawPayload:
    """A stored payload read by attribute, like the pydantic payload it was
    dumped from: ``p.patch_id`` is ``data["patchId"]``, a field the dump left
    out (it was None) is its default. Nested values stay plain JSON (the
    views validate what they keep)."""

    __slots__ = ("_data", "_spec")

    def __init__(self, data: dict[str, Any], spec: dict[str, tuple[str, Callable[[], Any]]]) -> None:
        self._data = data
        self._spec = spec

    def __getattr__(self, name: str) -> Any:
        try:
            key, default = self._spec[name]
        except KeyError:
            raise AttributeError(name) from None
        value = self._data.get(key, _MISSING)
        return default() if value is _MISSING else value

    def dump(self) -> dict[str, Any]:
        return dict(self._data)


class RawEvent:
    """A stored event without validation: what a replay folds."""

    __slots__ = ("seq", "event_id", "type", "task_id", "author_actor_id", "timestamp", "payload")

    def __init__(self, seq: int, event_id: str, type: str, task_id: str | None, author: str, ts: str, payload: RawPayload):  # noqa: A002
        self.seq = seq
        self.event_id = event_id
        self.type = type
        self.task_id = task_id
        self.author_actor_id = author
        self.timestamp = ts
        self.payload = payload

    def to_event(self) -> TaskEvent:
        """The full TaskEvent (for threads and subscribers, which hand events out)."""
        return TaskEvent.model_construct(
            event_id=self.event_id,
            type=self.type,
            task_id=self.task_id,
            author_actor_id=self.author_actor_id,
            timestamp=self.timestamp,
            payload=PAYLOADS[self.type].model_validate(self.payload._data),
            seq=self.seq,
        )


_SPECS = {kind: _field_specs(model) for kind, model in PAYLOADS.items()}


def as_event(event: TaskEvent | RawEvent) -> TaskEvent:
    return event.to_event() if isinstance(event, RawEvent) else event


def _row_to_event(row: tuple[Any, ...], validate: bool = True) -> TaskEvent:
    seq, event_id, kind, task_id, author, ts, payload = row
    data = {
        "eventId": event_id,
        "type": kind,
        "taskId": task_id,
        "authorActorId": author,
        "timestamp": ts,
        "payload": json.loads(payload),
        "seq": seq,
    }
    if validate:
        return TaskEvent.model_validate(data)
    model = PAYLOADS[kind]
    return TaskEvent.model_construct(
        event_id=event_id,
        type=kind,
        task_id=task_id,
        author_actor_id=author,
        timestamp=ts,
        payload=model.model_validate(data["payload"]),
        seq=seq,
    )
