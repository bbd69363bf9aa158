"""Read models folded from the log (docs/design/coauthor.md, "Projections"):
TaskView per task, ThreadView per
task, and the ArtifactIndex (every file's latest known revision).

A Projector is fed events in log order, one at a time, so the live billboard
and a replay from the log run exactly the same code: what the replay test
compares is therefore the fold, not two implementations of it. The events
are either validated ``TaskEvent``s (live appends) or the store's light
``RawEvent``s (a rebuild from the log); both read the same by attribute, and
threads turn the raw ones into ``TaskEvent``s only when someone asks.
"""

from __future__ import annotations

from pydantic import Field

from pneuma_coauthor.billboard.store import RawEvent, as_event
from pneuma_coauthor.domain.events import TaskEvent
from pneuma_coauthor.domain.model import (
    Artifact,
    CamelModel,
    TaskView,
    artifact_type_for,
)
from pneuma_coauthor.domain.state import apply_event


class ThreadView(CamelModel):
    """A task's conversation: its own events plus the file changes that hit
    the files it works on (the person's edits are part of the story)."""

    task_id: str
    thread_id: str
    events: list[TaskEvent] = Field(default_factory=list)


class Projector:
    def __init__(self) -> None:
        self.tasks: dict[str, TaskView] = {}
        self.task_events: dict[str, list[TaskEvent | RawEvent]] = {}
        self.artifacts: dict[str, Artifact] = {}
        self.artifact_events: dict[str, list[TaskEvent | RawEvent]] = {}  # taskless ArtifactChanged per path
        self.last_seq = 0
        self.last_timestamp: str | None = None
        self.count = 0

    def fold(self, event: TaskEvent | RawEvent) -> TaskView | None:
        """Apply one event; returns the task view it changed, if any."""
        self.count += 1
        if event.seq is not None:
            self.last_seq = event.seq
        self.last_timestamp = event.timestamp
        if event.type == "ArtifactChanged":
            p = event.payload
            path = p.path  # type: ignore[attr-defined]
            current = self.artifacts.get(path)
            metadata = current.metadata if current else {}
            # Both fields come from a validated ArtifactChanged: no need to validate again.
            self.artifacts[path] = Artifact.model_construct(
                id=path, type=artifact_type_for(path), path=path, revision=p.revision, metadata=metadata  # type: ignore[attr-defined]
            )
            if event.task_id is None:
                self.artifact_events.setdefault(path, []).append(event)
                return None
        if event.task_id is None:
            return None
        view = apply_event(self.tasks.get(event.task_id), event)  # type: ignore[arg-type]
        if view is None:
            return None
        self.tasks[event.task_id] = view
        self.task_events.setdefault(event.task_id, []).append(event)
        return view

    def thread(self, task_id: str) -> ThreadView | None:
        view = self.tasks.get(task_id)
        if view is None:
            return None
        own = list(self.task_events.get(task_id, []))
        paths = set(view.base_revisions) | {r.path for r in view.artifact_refs}
        first = own[0].seq or 0 if own else 0
        last = view.last_seq if view.status.final else None
        outside = [
            e
            for path in paths
            for e in self.artifact_events.get(path, [])
            if (e.seq or 0) > first and (last is None or (e.seq or 0) <= last)
        ]
        merged = sorted(own + outside, key=lambda e: e.seq or 0)
        return ThreadView.model_construct(task_id=task_id, thread_id=view.thread_id, events=[as_event(e) for e in merged])
