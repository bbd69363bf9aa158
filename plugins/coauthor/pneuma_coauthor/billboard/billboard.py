"""The Billboard (docs/design/coauthor.md, "Billboard"): one
entry (append_event), one exit (views and streams).

Every adapter (REPL, CLI subcommands, the watcher, the agent workflow, the
browser) appends through ``append_event`` and reads through ``get_task``,
``query_tasks``, ``get_thread`` or the async subscriptions, so none of them
knows about SQLite and all of them see the same state.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import threading
from collections.abc import AsyncIterator, Iterable, Iterator
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from pneuma_coauthor.billboard.projections import Projector, ThreadView
from pneuma_coauthor.billboard.store import EventStore, RawEvent, as_event
from pneuma_coauthor.domain.events import TaskEvent
from pneuma_coauthor.domain.model import Artifact, Priority, TaskStatus, TaskView
from pneuma_coauthor.domain.state import apply_event, check_transition

DB_NAME = "events.sqlite3"


def billboard_dir(workspace: Path) -> Path:
    return workspace / ".pneuma" / "coauthor"


@contextlib.contextmanager
def _no_gc_pauses() -> Iterator[None]:
    """A rebuild allocates hundreds of thousands of objects that all stay
    alive; the cyclic GC would walk the growing heap again and again (half
    the time of a 100,000-event rebuild) and free nothing. Pause it; the
    objects are reference-counted as usual, and it runs again afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Subscriber:
    def __init__(self, loop: asyncio.AbstractEventLoop, kind: str) -> None:
        self.loop = loop
        self.kind = kind  # "events" or "tasks"
        self.queue: asyncio.Queue[Any] = asyncio.Queue()


class Billboard:
    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.projector = Projector()
        self._subscribers: list[_Subscriber] = []
        self._subs_lock = threading.Lock()
        self._fold_lock = threading.RLock()
        self.refresh()

    @classmethod
    def open(cls, workspace: Path, **store_options: Any) -> Billboard:
        return cls(EventStore(billboard_dir(workspace) / DB_NAME, **store_options))

    def close(self) -> None:
        self.store.close()

    # -- writing ---------------------------------------------------------------

    def append_event(self, event: TaskEvent) -> TaskEvent:
        """Validate against the task's current state, persist, fold, publish.

        Returns the stored event (with its seq) once it is durably committed:
        that return is the acknowledgement. Re-appending an eventId that is
        already in the log returns the stored one and appends nothing.
        """
        return self.append_events([event])[0]

    def append_events(self, events: Iterable[TaskEvent]) -> list[TaskEvent]:
        """Append several events atomically: all of them or none."""
        batch = list(events)
        with self.store.lock:
            self.store.begin()
            try:
                # Another process may have appended since we last looked; the
                # transition check must see its events, so fold them first
                # (under the write lock nobody can append in between).
                self._catch_up()
                stored: list[TaskEvent] = []
                scratch: dict[str, TaskView | None] = {}
                for event in batch:
                    existing = self.store.find_event(event.event_id)
                    if existing is not None:
                        stored.append(existing)
                        continue
                    if event.task_id is not None:
                        if event.task_id not in scratch:
                            live = self.projector.tasks.get(event.task_id)
                            scratch[event.task_id] = live.model_copy(deep=True) if live else None
                        check_transition(scratch[event.task_id], event)
                        scratch[event.task_id] = apply_event(scratch[event.task_id], event)
                    seq = self.store.insert(event)
                    stored.append(event.model_copy(update={"seq": seq}))
                self.store.commit()
            except BaseException:
                self.store.rollback()
                raise
            fresh = [e for e in stored if e.seq is not None and e.seq > self.projector.last_seq]
            self._fold_and_publish(fresh)
        return stored

    # -- reading ---------------------------------------------------------------

    def refresh(self) -> int:
        """Fold what other processes appended; returns how many events that was."""
        # The store's connection is shared with the writer: wait for its
        # transaction to end so we never fold a row that may be rolled back.
        with self.store.lock:
            return self._catch_up()

    def _catch_up(self) -> int:
        with self._fold_lock:
            # Our own log: every row was validated when it was appended.
            with _no_gc_pauses():
                new = list(self.store.read_raw(self.projector.last_seq))
                self._fold_and_publish(new)
            return len(new)

    def _fold_and_publish(self, events: list[TaskEvent] | list[RawEvent]) -> None:
        with self._fold_lock:
            for event in events:
                if event.seq is not None and event.seq <= self.projector.last_seq:
                    continue
                view = self.projector.fold(event)
                self._publish(event, view)

    def get_task(self, task_id: str) -> TaskView | None:
        view = self.projector.tasks.get(task_id)
        return view.model_copy(deep=True) if view else None

    def query_tasks(
        self,
        *,
        status: TaskStatus | str | Iterable[TaskStatus | str] | None = None,
        assigned_to: str | None = None,
        priority: Priority | str | None = None,
        waiting_on: str | None = None,
    ) -> list[TaskView]:
        statuses: set[str] | None = None
        if status is not None:
            statuses = {str(s) for s in ([status] if isinstance(status, str) else status)}
        out = []
        for view in self.projector.tasks.values():
            if statuses is not None and view.status.value not in statuses:
                continue
            if assigned_to is not None and view.assigned_to != assigned_to:
                continue
            if priority is not None and view.priority.value != str(priority):
                continue
            if waiting_on is not None and view.waiting_on != waiting_on:
                continue
            out.append(view.model_copy(deep=True))
        out.sort(key=lambda v: v.task_id)
        return out

    def get_thread(self, task_id: str) -> ThreadView | None:
        return self.projector.thread(task_id)

    def artifact(self, path: str) -> Artifact | None:
        return self.projector.artifacts.get(path)

    def next_task_id(self) -> str:
        """t-001, t-002, … (the skill's scheme). Only an id hint: a racing
        creator gets InvalidTransition for a taken id and asks again."""
        numbers = [int(t[2:]) for t in self.projector.tasks if t.startswith("t-") and t[2:].isdigit()]
        return f"t-{(max(numbers) if numbers else 0) + 1:03d}"

    # -- replay and export -------------------------------------------------------

    def replay(self, *, until_seq: int | None = None, until_time: str | None = None) -> Projector:
        """A fresh projection folded from the log up to a seq or a timestamp
        (inclusive): the billboard as it was at that moment."""
        projector = Projector()
        fold = projector.fold
        with _no_gc_pauses():
            for event in self.store.read_raw(0, until_seq=until_seq, until_time=until_time):
                fold(event)
        return projector

    def events(self, task_id: str | None = None, after_seq: int = 0) -> list[TaskEvent]:
        return list(self.store.read(after_seq, task_id=task_id))

    def export_jsonl(self, path: Path, task_id: str | None = None) -> int:
        count = 0
        tmp = path.with_suffix(path.suffix + ".tmp")
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w", encoding="utf-8") as out:
            for event in self.store.read(0, task_id=task_id):
                row = event.to_json_dict()
                row["seq"] = event.seq
                out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
                count += 1
        tmp.replace(path)
        return count

    # -- subscriptions -----------------------------------------------------------

    def _publish(self, event: TaskEvent | RawEvent, view: TaskView | None) -> None:
        with self._subs_lock:
            subscribers = list(self._subscribers)
        if not subscribers:
            return
        if any(sub.kind == "events" for sub in subscribers):
            event = as_event(event)  # subscribers get full TaskEvents
        snapshot = view.model_copy(deep=True) if view is not None and subscribers else None
        for sub in subscribers:
            item = event if sub.kind == "events" else snapshot
            if item is None:
                continue
            try:
                sub.loop.call_soon_threadsafe(sub.queue.put_nowait, item)
            except RuntimeError:  # that loop is closed: the subscriber is gone
                self._unsubscribe(sub)

    def _subscribe(self, kind: str) -> _Subscriber:
        sub = _Subscriber(asyncio.get_running_loop(), kind)
        with self._subs_lock:
            self._subscribers.append(sub)
        return sub

    def _unsubscribe(self, sub: _Subscriber) -> None:
        with self._subs_lock:
            if sub in self._subscribers:
                self._subscribers.remove(sub)

    async def subscribe_events(self, after_seq: int | None = None) -> AsyncIterator[TaskEvent]:
        """Every event appended from now on (or after ``after_seq``, first
        replaying the log from there), in log order."""
        sub = self._subscribe("events")
        try:
            seen = self.projector.last_seq
            if after_seq is not None:
                for event in self.store.read(after_seq, until_seq=seen):
                    yield event
            while True:
                event = await sub.queue.get()
                if event.seq is not None and event.seq <= seen and after_seq is not None:
                    continue
                yield event
        finally:
            self._unsubscribe(sub)

    async def subscribe_task_views(self) -> AsyncIterator[TaskView]:
        """A snapshot of each task view every time an event changes it."""
        sub = self._subscribe("tasks")
        try:
            while True:
                yield await sub.queue.get()
        finally:
            self._unsubscribe(sub)

    async def follow_other_writers(self, interval: float = 0.2, executor: Executor | None = None) -> None:
        """Poll for events other processes appended (a CLI in another terminal,
        the Claude Code agent) and fold them, so subscribers see them too.
        The fold runs on ``executor`` (the loop's default one if None)."""
        loop = asyncio.get_running_loop()
        version = self.store.data_version()
        # What was appended between the last fold and that first look.
        await loop.run_in_executor(executor, self.refresh)
        while True:
            await asyncio.sleep(interval)
            now = self.store.data_version()
            if now != version:
                version = now
                await loop.run_in_executor(executor, self.refresh)
