"""The task state machine: which events a task accepts, and how each folds.

``check_transition`` is asked before an event is appended (an event the
machine refuses never reaches the log); ``apply_event`` folds an accepted
event into the TaskView. Folding mutates the view in place because a
projection rebuild over 100,000 events must not copy every view each time;
callers that hand views out take copies.
"""

from __future__ import annotations

from pneuma_coauthor.domain import events as ev
from pneuma_coauthor.domain.model import PlanView, ProposalView, TaskStatus, TaskView

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
    p = event.payload
    assert isinstance(p, ev.TaskCreated) and event.task_id is not None
    return TaskView(
        task_id=event.task_id,
        created_by=event.author_actor_id,
        assigned_to=p.assigned_to,
        priority=p.priority,
        intent=p.intent,
        intent_data=dict(p.intent_data),
        artifact_refs=list(p.artifact_refs),
        thread_id=f"thread-{event.task_id}",
        created_at=event.timestamp,
        updated_at=event.timestamp,
    )


def apply_event(view: TaskView | None, event: ev.TaskEvent) -> TaskView | None:
    """Fold one event; returns the (same, mutated) view, or a new one for TaskCreated."""
    kind, p = event.type, event.payload
    if kind == "TaskCreated":
        view = new_view(event)
    if view is None:
        return None
    view.event_count += 1
    view.updated_at = event.timestamp
    if event.seq is not None:
        view.last_seq = event.seq
    if kind == "TaskRouted":
        view.assigned_to = p.assigned_to  # type: ignore[attr-defined]
    elif kind == "TaskClaimed":
        view.status = S.CLAIMED
        view.claimed_at = event.timestamp
        view.base_revisions.update(p.base_revisions)  # type: ignore[attr-defined]
        view.waiting_on = "agent"
        view.failure = None
    elif kind == "TaskStarted":
        view.status = S.IN_PROGRESS
        view.waiting_on = "agent"
    elif kind == "AgentPlanPosted":
        assert isinstance(p, ev.AgentPlanPosted)
        view.plan = PlanView(
            goal=p.goal, issues=p.issues, strategy=p.strategy, scope=p.scope, risks=p.risks, questions=p.questions
        )
        if p.questions:
            view.status = S.BLOCKED
            view.waiting_on = "person"
        else:
            view.status = S.IN_PROGRESS
            view.waiting_on = "agent"
        if p.answer:
            view.summary = p.answer
    elif kind == "PatchProposed":
        assert isinstance(p, ev.PatchProposed)
        if p.supersedes and p.supersedes in view.proposals:
            old = view.proposals[p.supersedes]
            if old.state in ("proposed", "accepted"):  # a rejection stays on record as a rejection
                old.state = "superseded"
        view.proposals[p.patch_id] = ProposalView(
            patch_id=p.patch_id,
            summary=p.summary,
            files=[f.dump() for f in p.files],
            proposed_by=event.author_actor_id,
            proposed_at=event.timestamp,
            candidate=p.candidate,
        )
        view.status = S.AWAITING_REVIEW
        view.waiting_on = "person"
        view.needs_rebase = False
    elif kind == "UserFeedbackPosted":
        # New instructions make every patch still under review stale: the
        # agent answers with a fresh plan and patch instead.
        for proposal in view.proposals.values():
            if proposal.state == "proposed":
                proposal.state = "superseded"
        view.status = S.IN_PROGRESS
        view.waiting_on = "agent"
    elif kind == "PatchAccepted":
        view.proposals[p.patch_id].state = "accepted"  # type: ignore[attr-defined]
    elif kind == "PatchRejected":
        proposal = view.proposals[p.patch_id]  # type: ignore[attr-defined]
        proposal.state = "rejected"
        proposal.reason = p.reason or None  # type: ignore[attr-defined]
        if not view.pending_proposals():
            view.status = S.IN_PROGRESS
            view.waiting_on = "agent"
    elif kind == "TaskNeedsRebase":
        proposal = view.proposals[p.patch_id]  # type: ignore[attr-defined]
        proposal.state = "needs_rebase"
        proposal.reason = p.reason or "the file changed since the patch was computed"  # type: ignore[attr-defined]
        view.needs_rebase = True
        view.status = S.IN_PROGRESS
        view.waiting_on = "agent"
    elif kind == "TaskRebased":
        view.base_revisions.update(p.base_revisions)  # type: ignore[attr-defined]
        view.needs_rebase = False
    elif kind == "PatchApplied":
        assert isinstance(p, ev.PatchApplied)
        view.proposals[p.patch_id].state = "applied"
        for proposal in view.proposals.values():
            if proposal.state in ("proposed", "accepted"):
                proposal.state = "superseded"  # the other /tweak candidates
        # The applied text is the task's new base: further work on it is not drift.
        view.base_revisions.update(p.revisions)
        view.status = S.IN_PROGRESS
        view.waiting_on = "agent"
    elif kind == "TaskCompleted":
        view.status = S.DONE
        view.waiting_on = "nobody"
        view.completed_at = event.timestamp
        if p.summary:  # type: ignore[attr-defined]
            view.summary = p.summary  # type: ignore[attr-defined]
        for proposal in view.proposals.values():
            if proposal.state in ("proposed", "accepted"):
                proposal.state = "superseded"
    elif kind == "TaskFailed":
        view.status = S.BLOCKED
        view.waiting_on = "person"
        view.failure = p.reason  # type: ignore[attr-defined]
    elif kind == "TaskCanceled":
        view.status = S.CANCELED
        view.waiting_on = "nobody"
        view.completed_at = event.timestamp
    return view
