"""Every TaskEvent of the domain model (docs/design/coauthor.md, "Domain model";
plus the few V0 needs to be auditable), each with
a validated payload.

An event is a fact: once appended it is never edited. The envelope carries
eventId, taskId, authorActorId and timestamp; the payload model is chosen by
``type`` and validated strictly, so a typo in an adapter fails at append time
rather than silently producing a task nobody can fold.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import Field, SerializeAsAny, field_validator, model_validator

from pneuma_coauthor.domain.model import ArtifactRef, CamelModel, PlanView, Priority


class Payload(CamelModel):
    """Base of every payload; subclasses are looked up by event type."""


class TaskCreated(Payload):
    intent: str = Field(min_length=1)
    intent_data: dict[str, Any] = Field(default_factory=dict)  # e.g. {"command": "tweak", "n": 3}
    priority: Priority = Priority.FOREGROUND
    artifact_refs: list[ArtifactRef] = Field(default_factory=list)
    assigned_to: str | None = None  # set when the person named an agent; else the router decides


class TaskRouted(Payload):
    assigned_to: str
    rule: str = "default-agent"  # which RouterPolicy rule chose it, for the audit trail


class TaskClaimed(Payload):
    base_revisions: dict[str, str] = Field(default_factory=dict)


class TaskStarted(Payload):
    pass


class AgentPlanPosted(Payload, PlanView):
    """The plan (what the task view keeps of it) and what the patch needs."""

    files: list[str] = Field(default_factory=list)  # files the patch will change
    patch_needed: bool = True  # False: a question answered in `answer`, nothing to change
    answer: str | None = None


class PatchFile(Payload):
    path: str
    base_revision: str
    result_revision: str


class PatchProposed(Payload):
    patch_id: str
    files: list[PatchFile] = Field(min_length=1)
    diff: str = Field(min_length=1)  # unified diff with a/ b/ prefixes, all files
    summary: str = ""
    supersedes: str | None = None
    candidate: int | None = None  # /tweak: the index of this alternative (1-based)


class UserFeedbackPosted(Payload):
    text: str = Field(min_length=1)
    kind: Literal["followup", "answer", "correction"] = "followup"


class PatchAccepted(Payload):
    patch_id: str


class PatchRejected(Payload):
    patch_id: str
    reason: str = ""


class PatchApplied(Payload):
    patch_id: str
    revisions: dict[str, str]  # path -> revision after applying


class TaskCompleted(Payload):
    summary: str = ""


class TaskFailed(Payload):
    reason: str


class TaskCanceled(Payload):
    reason: str = ""


class ArtifactChanged(Payload):
    path: str
    revision: str
    previous_revision: str | None = None
    source: Literal["watcher", "apply", "scan"] = "watcher"


class Drift(Payload):
    path: str
    expected: str
    actual: str


class TaskRebased(Payload):
    base_revisions: dict[str, str]
    drifted: list[Drift] = Field(default_factory=list)
    reason: str = ""


class TaskNeedsRebase(Payload):
    patch_id: str
    drifted: list[Drift] = Field(default_factory=list)
    reason: str = ""


class BuildChecked(Payload):
    """The optional LaTeX build after an apply; ``skipped`` is not an error."""

    patch_id: str | None = None
    status: Literal["ok", "failed", "skipped"]
    tool: str | None = None
    duration_ms: int = 0
    detail: str = ""  # why skipped, or the first errors of the log


class LlmCallTraced(Payload):
    """One model call, traced: which profile, model, tokens and time."""

    profile: Literal["fast", "writer", "reasoning"]
    model: str
    purpose: str  # plan, patch, candidates
    input_tokens: int = 0
    output_tokens: int = 0
    duration_ms: int = 0
    stop_reason: str | None = None
    error: str | None = None


PAYLOADS: dict[str, type[Payload]] = {
    cls.__name__: cls
    for cls in (
        TaskCreated,
        TaskRouted,
        TaskClaimed,
        TaskStarted,
        AgentPlanPosted,
        PatchProposed,
        UserFeedbackPosted,
        PatchAccepted,
        PatchRejected,
        PatchApplied,
        TaskCompleted,
        TaskFailed,
        TaskCanceled,
        ArtifactChanged,
        TaskRebased,
        TaskNeedsRebase,
        BuildChecked,
        LlmCallTraced,
    )
}
EVENT_TYPES = tuple(PAYLOADS)
# The only events that may stand outside a task: a file changed on disk.
TASKLESS = frozenset({"ArtifactChanged"})


class TaskEvent(CamelModel):
    event_id: str
    type: str
    task_id: str | None
    author_actor_id: str
    timestamp: str
    payload: SerializeAsAny[Payload]
    seq: int | None = None  # position in the log; set by the store, never by an adapter

    @field_validator("type")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in PAYLOADS:
            raise ValueError(f"unknown event type {value!r}; known: {', '.join(EVENT_TYPES)}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _typed_payload(cls, data: Any) -> Any:
        if isinstance(data, dict):
            kind = data.get("type")
            payload = data.get("payload", {})
            model = PAYLOADS.get(kind) if isinstance(kind, str) else None
            if model is not None and not isinstance(payload, model):
                data = {**data, "payload": model.model_validate(payload if payload is not None else {})}
        return data

    @model_validator(mode="after")
    def _task_required(self) -> TaskEvent:
        if self.task_id is None and self.type not in TASKLESS:
            raise ValueError(f"{self.type} needs a taskId")
        return self

    def to_json_dict(self) -> dict[str, Any]:
        data = self.model_dump(by_alias=True, mode="json", exclude={"seq"})
        data["payload"] = self.payload.dump()
        return data


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def new_event_id() -> str:
    """Time-ordered and unique across processes (ms clock + 64 random bits):
    an adapter can retry an append with the same id and the store dedups it."""
    return f"e-{int(time.time() * 1000):012x}{os.urandom(8).hex()}"


def new_event(
    type: str,
    task_id: str | None,
    author: str,
    payload: Payload | dict[str, Any] | None = None,
    *,
    timestamp: str | None = None,
    event_id: str | None = None,
) -> TaskEvent:
    return TaskEvent.model_validate(
        {
            "eventId": event_id or new_event_id(),
            "type": type,
            "taskId": task_id,
            "authorActorId": author,
            "timestamp": timestamp or utc_now(),
            "payload": payload if payload is not None else {},
        }
    )
