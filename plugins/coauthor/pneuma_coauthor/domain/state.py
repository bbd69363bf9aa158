"""The task state machine: which events a task accepts, and how each folds.

``check_transition`` is asked before an event is appended (an event the
machine refuses never reaches the log); ``apply_event`` folds an accepted
event into the TaskView. Folding mutates the view in place because a
projection rebuild over 100,000 events must not copy every view each time;
callers that hand views out take copies.
"""

from __future__ import annotations

from pneuma_coauthor.domain import events as ev
from pneuma_coauthor.domain.model import (
    ArtifactRef,
    LineRange,
    PlanView,
    Priority,
    ProposalView,
    TaskStatus,
    TaskView,
)

S = TaskStatus
# Events that describe what happened around a task without moving it: they
# are accepted even once the task is final (a trace of a call that was in
# flight when the person canceled, a build that ran just before completion).
OBSERVATIONS = frozenset({"LlmCallTraced", "BuildChecked", "ArtifactChanged"})


class InvalidTransition(ValueError):
    """The event does not fit the task's current state; nothing was appended."""


def check_transition(view: TaskView | None, event: ev.TaskEvent) -> None:
    kind, p = event.type, event.payload
    if event.task_id is None:
        return  # a taskless ArtifactChanged: nothing to check against
    if kind == "TaskCreated":
        if view is not None:
            raise InvalidTransition(f"task {event.task_id} already exists")
        return
    if view is None:
        raise InvalidTransition(f"{kind}: no task {event.task_id}")
    if kind in OBSERVATIONS:
        return
    if view.status.final:
        raise InvalidTransition(f"{kind}: task {view.task_id} is {view.status.value}; open a new task")
    if kind == "TaskClaimed" and view.status not in (S.OPEN, S.BLOCKED):
        raise InvalidTransition(f"TaskClaimed: task {view.task_id} is {view.status.value}, not open")
    if kind == "PatchProposed":
        assert isinstance(p, ev.PatchProposed)
        if p.patch_id in view.proposals:
            raise InvalidTransition(f"patch id {p.patch_id} is already used; patch ids are never reused")
    if kind in ("PatchAccepted", "PatchRejected", "PatchApplied", "TaskNeedsRebase"):
        patch_id = p.patch_id  # type: ignore[attr-defined]
        proposal = view.proposals.get(patch_id)
        if proposal is None:
            raise InvalidTransition(f"{kind}: task {view.task_id} has no patch {patch_id}")
        allowed = {
            "PatchAccepted": ("proposed",),
            "PatchRejected": ("proposed", "accepted"),
            "PatchApplied": ("accepted",),
            "TaskNeedsRebase": ("proposed", "accepted"),
        }[kind]
        if proposal.state not in allowed:
            raise InvalidTransition(f"{kind}: patch {patch_id} is {proposal.state}")


def new_view(event: ev.TaskEvent) -> TaskView:
    """The view a TaskCreated opens. Built without re-validation: the payload
    was validated when it was appended (a raw payload from the log is that
    same payload's dump), so only its JSON shapes are turned back into models."""
    p: ev.TaskCreated = event.payload  # type: ignore[assignment]
    assert event.task_id is not None
    return TaskView.model_construct(
        task_id=event.task_id,
        created_by=event.author_actor_id,
        assigned_to=p.assigned_to,
        priority=Priority(p.priority),
        intent=p.intent,
        intent_data=dict(p.intent_data),
        artifact_refs=[_ref(r) for r in p.artifact_refs],
        # Every field is given: for a missing one model_construct resolves the
        # default (copying it, or inspecting its factory's signature), which
        # cost more than all the rest of a rebuild.
        status=TaskStatus.OPEN,
        base_revisions={},
        thread_id=f"thread-{event.task_id}",
        created_at=event.timestamp,
        updated_at=event.timestamp,
        claimed_at=None,
        completed_at=None,
        waiting_on="agent",
        plan=None,
        proposals={},
        summary=None,
        failure=None,
        needs_rebase=False,
        event_count=0,
        last_seq=0,
    )


def _ref(ref: ArtifactRef | dict) -> ArtifactRef:
    if isinstance(ref, ArtifactRef):
        return ref.model_copy(deep=True)
    rng = ref.get("range")
    return ArtifactRef.model_construct(
        path=ref["path"],
        range=LineRange.model_construct(line_start=rng["lineStart"], line_end=rng["lineEnd"]) if rng else None,
    )


def apply_event(view: TaskView | None, event: ev.TaskEvent) -> TaskView | None:
    """Fold one event; returns the (same, mutated) view, or a new one for TaskCreated."""
    kind, p = event.type, event.payload
    if kind == "TaskCreated":
        view = new_view(event)
    if view is None:
        return None
    # Every write below goes straight to the models' __dict__: the same
    # effect as attribute assignment (these models validate no assignment),
    # without pydantic's __setattr__, which cost more than the rest of a fold.
    fields = view.__dict__
    fields["event_count"] += 1
    fields["updated_at"] = event.timestamp
    if event.seq is not None:
        fields["last_seq"] = event.seq
    if kind == "TaskRouted":
        fields["assigned_to"] = p.assigned_to  # type: ignore[attr-defined]
    elif kind == "TaskClaimed":
        fields["status"] = S.CLAIMED
        fields["claimed_at"] = event.timestamp
        view.base_revisions.update(p.base_revisions)  # type: ignore[attr-defined]
        fields["waiting_on"] = "agent"
        fields["failure"] = None
    elif kind == "TaskStarted":
        fields["status"] = S.IN_PROGRESS
        fields["waiting_on"] = "agent"
    elif kind == "AgentPlanPosted":
        # p is an AgentPlanPosted, or a RawPayload read from the log (same attributes).
        fields["plan"] = PlanView.model_construct(
            goal=p.goal, issues=list(p.issues), strategy=list(p.strategy), scope=list(p.scope),
            risks=list(p.risks), questions=list(p.questions),
        )
        if p.questions:
            fields["status"] = S.BLOCKED
            fields["waiting_on"] = "person"
        else:
            fields["status"] = S.IN_PROGRESS
            fields["waiting_on"] = "agent"
        if p.answer:
            fields["summary"] = p.answer
    elif kind == "PatchProposed":
        if p.supersedes and p.supersedes in view.proposals:
            old = view.proposals[p.supersedes]
            if old.state in ("proposed", "accepted"):  # a rejection stays on record as a rejection
                old.__dict__["state"] = "superseded"
        view.proposals[p.patch_id] = ProposalView.model_construct(
            patch_id=p.patch_id,
            summary=p.summary,
            files=[f if isinstance(f, dict) else f.dump() for f in p.files],  # a raw payload's files are dumps already
            proposed_by=event.author_actor_id,
            proposed_at=event.timestamp,
            candidate=p.candidate,
            state="proposed",
            reason=None,
        )
        fields["status"] = S.AWAITING_REVIEW
        fields["waiting_on"] = "person"
        fields["needs_rebase"] = False
    elif kind == "UserFeedbackPosted":
        # New instructions make every patch still under review stale: the
        # agent answers with a fresh plan and patch instead.
        for proposal in view.proposals.values():
            if proposal.state == "proposed":
                proposal.__dict__["state"] = "superseded"
        fields["status"] = S.IN_PROGRESS
        fields["waiting_on"] = "agent"
    elif kind == "PatchAccepted":
        view.proposals[p.patch_id].__dict__["state"] = "accepted"  # type: ignore[attr-defined]
    elif kind == "PatchRejected":
        proposal = view.proposals[p.patch_id]  # type: ignore[attr-defined]
        proposal.__dict__["state"] = "rejected"
        proposal.__dict__["reason"] = p.reason or None  # type: ignore[attr-defined]
        if not view.pending_proposals():
            fields["status"] = S.IN_PROGRESS
            fields["waiting_on"] = "agent"
    elif kind == "TaskNeedsRebase":
        proposal = view.proposals[p.patch_id]  # type: ignore[attr-defined]
        proposal.__dict__["state"] = "needs_rebase"
        proposal.__dict__["reason"] = p.reason or "the file changed since the patch was computed"  # type: ignore[attr-defined]
        fields["needs_rebase"] = True
        fields["status"] = S.IN_PROGRESS
        fields["waiting_on"] = "agent"
    elif kind == "TaskRebased":
        view.base_revisions.update(p.base_revisions)  # type: ignore[attr-defined]
        fields["needs_rebase"] = False
    elif kind == "PatchApplied":
        view.proposals[p.patch_id].__dict__["state"] = "applied"
        for proposal in view.proposals.values():
            if proposal.state in ("proposed", "accepted"):
                proposal.__dict__["state"] = "superseded"  # the other /tweak candidates
        # The applied text is the task's new base: further work on it is not drift.
        view.base_revisions.update(p.revisions)
        fields["status"] = S.IN_PROGRESS
        fields["waiting_on"] = "agent"
    elif kind == "TaskCompleted":
        fields["status"] = S.DONE
        fields["waiting_on"] = "nobody"
        fields["completed_at"] = event.timestamp
        if p.summary:  # type: ignore[attr-defined]
            fields["summary"] = p.summary  # type: ignore[attr-defined]
        for proposal in view.proposals.values():
            if proposal.state in ("proposed", "accepted"):
                proposal.__dict__["state"] = "superseded"
    elif kind == "TaskFailed":
        fields["status"] = S.BLOCKED
        fields["waiting_on"] = "person"
        fields["failure"] = p.reason  # type: ignore[attr-defined]
    elif kind == "TaskCanceled":
        fields["status"] = S.CANCELED
        fields["waiting_on"] = "nobody"
        fields["completed_at"] = event.timestamp
    return view
