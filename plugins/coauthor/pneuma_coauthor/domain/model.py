"""Entities of the domain model (docs/design/coauthor.md, "Domain model"):
Actor, Artifact and the Task as its events fold it (TaskView).

Models serialise with camelCase keys (the spec's names, and what the JSONL
export and the viewer read) while Python code uses snake_case.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

NO_REVISION = "none"  # revision of a file that does not exist (a patch creating it has base=none)


def revision_of(data: bytes | None) -> str:
    """A file's revision: the SHA-256 of its bytes, so any change at all is drift.

    Content hashes (not mtime+size) make drift detection exact and let two
    processes agree on a revision without sharing clocks.
    """
    if data is None:
        return NO_REVISION
    return "sha256:" + hashlib.sha256(data).hexdigest()


class CamelModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    def dump(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json", exclude_none=True)


class TaskStatus(StrEnum):
    OPEN = "open"
    CLAIMED = "claimed"
    IN_PROGRESS = "in_progress"
    AWAITING_REVIEW = "awaiting_review"
    DONE = "done"
    BLOCKED = "blocked"
    CANCELED = "canceled"

    @property
    def final(self) -> bool:
        return self in (TaskStatus.DONE, TaskStatus.CANCELED)


class Priority(StrEnum):
    FOREGROUND = "foreground"
    NORMAL = "normal"
    BACKGROUND = "background"

    @property
    def rank(self) -> int:
        """Lower runs first (the scheduler sorts by it)."""
        return {"foreground": 0, "normal": 1, "background": 2}[self.value]


class Actor(CamelModel):
    """Human or agent: anyone who can take part in a task."""

    id: str
    kind: Literal["human", "agent"]
    display_name: str
    capabilities: list[str] = Field(default_factory=list)  # e.g. apply_patch, propose_patch, run_build
    default_agent_id: str | None = None  # humans only: where their unassigned tasks go

    def can(self, capability: str) -> bool:
        return capability in self.capabilities


ArtifactType = Literal["tex", "outline_md", "brief_md", "style_md", "bib", "figure", "data", "code", "other"]


def artifact_type_for(path: str) -> ArtifactType:
    name = path.rsplit("/", 1)[-1]
    if name == "OUTLINE.md":
        return "outline_md"
    if name == "BRIEF.md":
        return "brief_md"
    if name == "STYLE.md":
        return "style_md"
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if suffix in ("tex", "sty", "cls"):
        return "tex"
    if suffix == "bib":
        return "bib"
    if suffix in ("pdf", "png", "jpg", "jpeg", "svg", "eps"):
        return "figure"
    if suffix in ("csv", "tsv", "json", "parquet"):
        return "data"
    if suffix in ("py", "r", "jl", "m", "ipynb", "sh"):
        return "code"
    return "other"


class Artifact(CamelModel):
    """A paper file or asset at a revision. Metadata holds what the
    authors said about a figure or dataset: the only source the agent may use
    to describe it."""

    id: str
    type: ArtifactType
    path: str
    revision: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class LineRange(CamelModel):
    line_start: int = Field(ge=1)
    line_end: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> LineRange:
        if self.line_end < self.line_start:
            raise ValueError(f"lineEnd {self.line_end} is before lineStart {self.line_start}")
        return self


class ArtifactRef(CamelModel):
    """A file, optionally narrowed to 1-based inclusive lines: the strongest focus a task can have."""

    path: str
    range: LineRange | None = None

    @model_validator(mode="after")
    def _relative(self) -> ArtifactRef:
        parts = self.path.split("/")
        if self.path.startswith("/") or ".." in parts or not self.path:
            raise ValueError(f"artifact path must be workspace-relative: {self.path!r}")
        return self

    @classmethod
    def parse(cls, spec: str) -> ArtifactRef:
        """``sections/intro.tex`` or ``sections/intro.tex:12-20`` or ``...:12``."""
        path, _, rng = spec.partition(":")
        if not rng:
            return cls(path=path)
        start, _, end = rng.partition("-")
        try:
            a = int(start)
            b = int(end) if end else a
        except ValueError as exc:
            raise ValueError(f"bad line range in {spec!r}: use PATH:START-END") from exc
        return cls(path=path, range=LineRange(line_start=a, line_end=b))

    def label(self) -> str:
        if self.range is None:
            return self.path
        return f"{self.path}:{self.range.line_start}-{self.range.line_end}"


ProposalState = Literal["proposed", "accepted", "applied", "rejected", "superseded", "needs_rebase"]


class ProposalView(CamelModel):
    patch_id: str
    state: ProposalState = "proposed"
    summary: str = ""
    files: list[dict[str, str]] = Field(default_factory=list)  # {path, baseRevision, resultRevision}
    proposed_by: str = ""
    proposed_at: str = ""
    candidate: int | None = None  # /tweak --n: which of the n alternatives
    reason: str | None = None  # why it was rejected or needs a rebase


class PlanView(CamelModel):
    """An agent's plan for a task; the AgentPlanPosted event carries it."""

    goal: str
    issues: list[str] = Field(default_factory=list)
    strategy: list[str] = Field(default_factory=list)
    scope: list[str] = Field(default_factory=list)
    risks: list[str] = Field(default_factory=list)
    questions: list[str] = Field(default_factory=list)  # non-empty: the task is blocked until answered


class TaskView(CamelModel):
    """The Task as the log folds it, plus what review needs at a glance."""

    task_id: str
    created_by: str
    assigned_to: str | None = None
    priority: Priority = Priority.FOREGROUND
    status: TaskStatus = TaskStatus.OPEN
    intent: str
    intent_data: dict[str, Any] = Field(default_factory=dict)  # structured intent: command, n, outline hint
    artifact_refs: list[ArtifactRef] = Field(default_factory=list)
    base_revisions: dict[str, str] = Field(default_factory=dict)
    thread_id: str
    created_at: str
    updated_at: str
    claimed_at: str | None = None
    completed_at: str | None = None
    # Whose move it is: the scheduler runs a task only when it is the agent's.
    waiting_on: Literal["agent", "person", "nobody"] = "agent"
    plan: PlanView | None = None
    proposals: dict[str, ProposalView] = Field(default_factory=dict)
    summary: str | None = None  # TaskCompleted's summary, or the answer to a question
    failure: str | None = None
    needs_rebase: bool = False
    event_count: int = 0
    last_seq: int = 0

    def pending_proposals(self) -> list[ProposalView]:
        return [p for p in self.proposals.values() if p.state in ("proposed", "accepted")]

    def touched_paths(self) -> set[str]:
        """Files this task reads or may change: used to keep two writers apart."""
        paths = {r.path for r in self.artifact_refs}
        for proposal in self.pending_proposals():
            paths.update(f["path"] for f in proposal.files)
        return paths
