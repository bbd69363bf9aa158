"""RouterPolicy and SchedulerPolicy (§6.2), as pure functions of task views."""

from __future__ import annotations

import pytest

from pneuma_coauthor.domain import Actor, apply_event, new_event
from pneuma_coauthor.policies import RouterPolicy, RoutingError, SchedulerPolicy

ACTORS = {
    "user": Actor(id="user", kind="human", display_name="PI", default_agent_id="coauthor"),
    "coauthor": Actor(id="coauthor", kind="agent", display_name="CoAuthor"),
    "reviewer": Actor(id="reviewer", kind="agent", display_name="Reviewer"),
}


def task(tid: str, priority: str = "foreground", path: str = "a.tex", at: str = "2025-01-01T00:00:00.000Z", **kw):
    view = apply_event(None, new_event("TaskCreated", tid, "user",
                                       {"intent": tid, "priority": priority, "artifactRefs": [{"path": path}], **kw}, timestamp=at))
    return apply_event(view, new_event("TaskRouted", tid, "router", {"assignedTo": kw.get("assignedTo") or "coauthor"}))


def test_router_uses_the_named_agent_else_the_default():
    router = RouterPolicy()
    assert router.route(task("t-001"), ACTORS["user"], ACTORS).assigned_to == "coauthor"
    named = apply_event(None, new_event("TaskCreated", "t-002", "user", {"intent": "x", "assignedTo": "reviewer"}))
    decision = router.route(named, ACTORS["user"], ACTORS)
    assert (decision.assigned_to, decision.rule) == ("reviewer", "specified")
    bad = apply_event(None, new_event("TaskCreated", "t-003", "user", {"intent": "x", "assignedTo": "nobody"}))
    with pytest.raises(RoutingError):
        router.route(bad, ACTORS["user"], ACTORS)


def test_foreground_first_then_age():
    s = SchedulerPolicy()
    views = [task("t-001", "normal", "a.tex", "2025-01-01T00:00:00.000Z"),
             task("t-002", "foreground", "b.tex", "2025-01-01T00:00:05.000Z"),
             task("t-003", "foreground", "c.tex", "2025-01-01T00:00:01.000Z")]
    assert s.select(views, "coauthor", set()) == ["t-003"]
    assert SchedulerPolicy(writing_concurrency=3).select(views, "coauthor", set()) == ["t-003", "t-002", "t-001"]


def test_writing_tasks_run_one_at_a_time():
    s = SchedulerPolicy()
    views = [task("t-001"), task("t-002", path="b.tex")]
    assert s.select(views, "coauthor", {"t-001"}) == []


def test_background_runs_only_when_idle():
    s = SchedulerPolicy()
    bg = task("t-001", "background", "a.tex")
    fg = task("t-002", "foreground", "b.tex", "2025-01-02T00:00:00.000Z")
    assert s.select([bg, fg], "coauthor", set()) == ["t-002"]
    assert s.select([bg], "coauthor", set()) == ["t-001"]
    assert SchedulerPolicy(writing_concurrency=2).select([bg], "coauthor", {"t-009"}) == []


def test_only_the_agents_own_tasks_whose_move_it_is():
    s = SchedulerPolicy()
    mine = task("t-001")
    other = task("t-002", path="b.tex", assignedTo="reviewer")
    assert s.select([mine, other], "reviewer", set()) == ["t-002"]
    waiting = apply_event(task("t-003", path="c.tex"), new_event("PatchProposed", "t-003", "coauthor", {
        "patchId": "t-003-p1", "diff": "x", "files": [{"path": "c.tex", "baseRevision": "none", "resultRevision": "none"}]}))
    assert s.select([waiting], "coauthor", set()) == []  # the person's move


def test_a_file_under_review_holds_back_other_tasks_on_it():
    s = SchedulerPolicy()
    reviewed = apply_event(task("t-001"), new_event("PatchProposed", "t-001", "coauthor", {
        "patchId": "t-001-p1", "diff": "x", "files": [{"path": "a.tex", "baseRevision": "sha256:1", "resultRevision": "sha256:2"}]}))
    same_file = task("t-002", path="a.tex", at="2025-01-02T00:00:00.000Z")
    other_file = task("t-003", path="b.tex", at="2025-01-03T00:00:00.000Z")
    assert s.select([reviewed, same_file, other_file], "coauthor", set()) == ["t-003"]
