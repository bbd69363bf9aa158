"""The task state machine folded from events, and the patch engine."""

from __future__ import annotations

import pytest

from pneuma_coauthor.domain import (
    InvalidTransition,
    TaskStatus,
    apply_event,
    check_transition,
    new_event,
)
from pneuma_coauthor.domain.events import TaskEvent
from pneuma_coauthor.domain.patches import (
    PatchConflict,
    apply_file_patch,
    make_diff,
    parse_patch,
)

FILES = [{"path": "a.tex", "baseRevision": "sha256:1", "resultRevision": "sha256:2"}]
DIFF = "--- a/a.tex\n+++ b/a.tex\n@@ -1 +1 @@\n-x\n+y\n"


def fold(events: list[TaskEvent]):
    view = None
    for e in events:
        check_transition(view, e)
        view = apply_event(view, e)
    return view


def ev(kind: str, payload: dict | None = None, author: str = "coauthor", task: str = "t-001") -> TaskEvent:
    return new_event(kind, task, author, payload or {})


def created() -> TaskEvent:
    return ev("TaskCreated", {"intent": "tighten the intro", "artifactRefs": [{"path": "a.tex"}]}, author="user")


def test_happy_path_statuses():
    steps = [
        (created(), TaskStatus.OPEN, "agent"),
        (ev("TaskRouted", {"assignedTo": "coauthor"}), TaskStatus.OPEN, "agent"),
        (ev("TaskClaimed", {"baseRevisions": {"a.tex": "sha256:1"}}), TaskStatus.CLAIMED, "agent"),
        (ev("TaskStarted"), TaskStatus.IN_PROGRESS, "agent"),
        (ev("AgentPlanPosted", {"goal": "shorter"}), TaskStatus.IN_PROGRESS, "agent"),
        (ev("PatchProposed", {"patchId": "t-001-p1", "files": FILES, "diff": DIFF}), TaskStatus.AWAITING_REVIEW, "person"),
        (ev("PatchAccepted", {"patchId": "t-001-p1"}, "user"), TaskStatus.AWAITING_REVIEW, "person"),
        (ev("PatchApplied", {"patchId": "t-001-p1", "revisions": {"a.tex": "sha256:2"}}, "user"), TaskStatus.IN_PROGRESS, "agent"),
        (ev("TaskCompleted", {"summary": "done"}, "user"), TaskStatus.DONE, "nobody"),
    ]
    view = None
    for event, status, waiting in steps:
        check_transition(view, event)
        view = apply_event(view, event)
        assert (view.status, view.waiting_on) == (status, waiting), event.type
    assert view.assigned_to == "coauthor"
    assert view.base_revisions == {"a.tex": "sha256:2"}  # the applied text is the new base
    assert view.proposals["t-001-p1"].state == "applied"
    assert view.event_count == len(steps)


def test_blocking_questions_block_and_feedback_unblocks():
    view = fold([created(), ev("TaskClaimed"), ev("TaskStarted"),
                 ev("AgentPlanPosted", {"goal": "caption", "questions": ["What does figure 2 show?"]})])
    assert view.status is TaskStatus.BLOCKED and view.waiting_on == "person"
    view = apply_event(view, ev("UserFeedbackPosted", {"text": "accuracy vs. size", "kind": "answer"}, "user"))
    assert view.status is TaskStatus.IN_PROGRESS and view.waiting_on == "agent"


def test_reject_and_rebase_hand_the_task_back_to_the_agent():
    base = [created(), ev("TaskClaimed"), ev("TaskStarted"),
            ev("PatchProposed", {"patchId": "t-001-p1", "files": FILES, "diff": DIFF})]
    view = fold(base + [ev("PatchRejected", {"patchId": "t-001-p1", "reason": "too long"}, "user")])
    assert view.status is TaskStatus.IN_PROGRESS and view.waiting_on == "agent"
    assert view.proposals["t-001-p1"].state == "rejected"
    view = fold(base + [ev("PatchAccepted", {"patchId": "t-001-p1"}, "user"),
                        ev("TaskNeedsRebase", {"patchId": "t-001-p1", "reason": "a.tex changed"})])
    assert view.needs_rebase and view.waiting_on == "agent"
    view = apply_event(view, ev("TaskRebased", {"baseRevisions": {"a.tex": "sha256:9"}}))
    assert not view.needs_rebase and view.base_revisions["a.tex"] == "sha256:9"
    view = apply_event(view, ev("PatchProposed", {"patchId": "t-001-p2", "files": FILES, "diff": DIFF, "supersedes": "t-001-p1"}))
    assert view.status is TaskStatus.AWAITING_REVIEW and [p.patch_id for p in view.pending_proposals()] == ["t-001-p2"]


def test_feedback_supersedes_patches_under_review():
    view = fold([created(), ev("PatchProposed", {"patchId": "t-001-p1", "files": FILES, "diff": DIFF}),
                 ev("UserFeedbackPosted", {"text": "keep the first sentence"}, "user")])
    assert view.proposals["t-001-p1"].state == "superseded"
    assert view.status is TaskStatus.IN_PROGRESS


@pytest.mark.parametrize(
    "events",
    [
        [created(), created()],  # the same task twice
        [ev("TaskStarted")],  # a task that does not exist
        [created(), ev("PatchAccepted", {"patchId": "t-001-p9"})],  # no such patch
        [created(), ev("PatchProposed", {"patchId": "t-001-p1", "files": FILES, "diff": DIFF}),
         ev("PatchApplied", {"patchId": "t-001-p1", "revisions": {}})],  # applied without acceptance
        [created(), ev("PatchProposed", {"patchId": "t-001-p1", "files": FILES, "diff": DIFF}),
         ev("PatchProposed", {"patchId": "t-001-p1", "files": FILES, "diff": DIFF})],  # a reused patch id
        [created(), ev("TaskCanceled", {}, "user"), ev("UserFeedbackPosted", {"text": "more"}, "user")],  # final
        [created(), ev("TaskClaimed"), ev("TaskClaimed")],
    ],
)
def test_illegal_transitions_are_refused(events):
    with pytest.raises(InvalidTransition):
        fold(events)


def test_payloads_are_validated():
    with pytest.raises(ValueError):
        new_event("TaskCreated", "t-001", "user", {"intent": ""})
    with pytest.raises(ValueError):
        new_event("PatchProposed", "t-001", "user", {"patchId": "p", "files": [], "diff": DIFF})
    with pytest.raises(ValueError):
        new_event("NoSuchEvent", "t-001", "user", {})
    with pytest.raises(ValueError):
        new_event("TaskStarted", None, "user", {})  # only ArtifactChanged may stand outside a task
    with pytest.raises(ValueError):
        new_event("TaskCreated", "t-001", "user", {"intent": "x", "artifactRefs": [{"path": "../etc/passwd"}]})
    e = new_event("ArtifactChanged", None, "user", {"path": "a.tex", "revision": "sha256:1"})
    assert TaskEvent.model_validate(e.to_json_dict()) == e


def test_diff_round_trip_and_conflict():
    old = "a\nb\nc\nd\ne\nf\ng\n"
    new = "a\nB\nc\nd\ne\nf\ng\nh"
    (fp,) = parse_patch(make_diff("x.tex", old, new))
    assert apply_file_patch(old, fp) == new
    with pytest.raises(PatchConflict):
        apply_file_patch(old.replace("b", "bee"), fp)
    (created_fp,) = parse_patch(make_diff("new.tex", None, "hello\n"))
    assert created_fp.creates and apply_file_patch(None, created_fp) == "hello\n"
    (bare,) = parse_patch("@@ -2 +2 @@\n-b\n+B\n", default_path="x.tex")
    assert apply_file_patch(old, bare) == old.replace("b", "B")
