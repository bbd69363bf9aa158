"""The billboard: replay equality, point-in-time replay, subscriptions, export, durability."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pneuma_coauthor.billboard import Billboard, Projector
from pneuma_coauthor.domain import InvalidTransition, new_event
from pneuma_coauthor.domain.model import ArtifactRef
from pneuma_coauthor.domain.patches import make_diff
from pneuma_coauthor.workflow.usecases import CoAuthor

from .conftest import INTRO


def scripted_history(app: CoAuthor, checkpoint=lambda: None) -> None:  # noqa: ANN001
    """Three tasks through most of the state machine, with a person's edit in
    between; ``checkpoint`` is called after every step."""
    intro = "sections/intro.tex"
    real_append = app.billboard.append_events

    def append_and_check(events):  # noqa: ANN001, ANN202
        stored = real_append(events)
        checkpoint()
        return stored

    app.billboard.append_events = append_and_check  # type: ignore[method-assign]
    t1 = app.create_task("fix the agreement error", refs=[ArtifactRef.parse(f"{intro}:4-4")]).task_id
    app.propose_patch(t1, make_diff(intro, INTRO, INTRO.replace("argue", "argues")))
    t2 = app.create_task("shorten the first sentence", refs=[ArtifactRef.parse(f"{intro}:3-3")]).task_id
    app.propose_patch(t2, make_diff(intro, INTRO, INTRO.replace("silently lose", "lose")))
    app.accept_patch(t1, "latest")  # t2's patch now has a stale base
    assert app.accept_patch(t2, "latest").status == "needs_rebase"
    app.post_feedback(t2, "keep the new wording of the first sentence")
    (app.workspace / intro).write_text((app.workspace / intro).read_text() + "New line.\n")
    app.record_file_change(intro)
    t3 = app.create_task("a question only").task_id
    app.post_feedback(t3, "never mind")
    app.cancel(t3, "dropped")


def test_replay_equals_live_at_every_point(paper: Path):
    app = CoAuthor(paper)
    live_snapshots: dict[int, dict] = {}

    def checkpoint() -> None:  # the live billboard's views after every append
        board = app.billboard
        live_snapshots[board.projector.last_seq] = {v.task_id: v.dump() for v in board.query_tasks()}

    scripted_history(app, checkpoint)
    assert len(live_snapshots) > 12
    for seq, snapshot in live_snapshots.items():
        replayed = app.billboard.replay(until_seq=seq)
        assert {k: v.dump() for k, v in replayed.tasks.items()} == snapshot, f"differs at seq {seq}"
    # And at every single event, a replay equals a step-by-step fold.
    step = Projector()
    for event in app.billboard.events():
        step.fold(event)
        replayed = app.billboard.replay(until_seq=event.seq)
        assert {k: v.dump() for k, v in replayed.tasks.items()} == {k: v.dump() for k, v in step.tasks.items()}
    # The live billboard's own views equal the full replay too.
    full = app.billboard.replay()
    assert {k: v.dump() for k, v in full.tasks.items()} == {v.task_id: v.dump() for v in app.billboard.query_tasks()}
    # A second process opening the same log sees the same thing.
    other = Billboard.open(paper)
    assert [v.dump() for v in other.query_tasks()] == [v.dump() for v in app.billboard.query_tasks()]
    statuses = {v.task_id: v.status.value for v in other.query_tasks()}
    assert statuses == {"t-001": "done", "t-002": "in_progress", "t-003": "canceled"}


def test_replay_to_a_point_in_time(paper: Path):
    app = CoAuthor(paper)
    scripted_history(app)
    events = app.billboard.events()
    accepted = next(e for e in events if e.type == "PatchAccepted")
    then = app.billboard.replay(until_time=accepted.timestamp)
    assert then.tasks["t-001"].status.value in ("awaiting_review", "in_progress", "done")
    assert then.tasks["t-001"].proposals["t-001-p1"].state in ("accepted", "applied")
    assert "t-003" not in then.tasks


def test_thread_includes_the_persons_edits(paper: Path):
    app = CoAuthor(paper)
    scripted_history(app)
    thread = app.billboard.get_thread("t-002")
    kinds = [e.type for e in thread.events]
    assert kinds[:2] == ["TaskCreated", "TaskRouted"]
    assert "TaskNeedsRebase" in kinds and "UserFeedbackPosted" in kinds
    # The edit made after the rejection hit t-002's file: it is part of t-002's story.
    assert any(e.type == "ArtifactChanged" and e.task_id is None for e in thread.events)


def test_query_filters(paper: Path):
    app = CoAuthor(paper)
    scripted_history(app)
    assert [v.task_id for v in app.billboard.query_tasks(status="done")] == ["t-001"]
    assert [v.task_id for v in app.billboard.query_tasks(status=["done", "canceled"])] == ["t-001", "t-003"]
    assert [v.task_id for v in app.billboard.query_tasks(waiting_on="agent")] == ["t-002"]
    assert len(app.billboard.query_tasks(assigned_to="coauthor")) == 3


def test_export_jsonl(paper: Path, tmp_path: Path):
    app = CoAuthor(paper)
    scripted_history(app)
    out = tmp_path / "log.jsonl"
    count = app.billboard.export_jsonl(out)
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert count == len(rows) == len(app.billboard.events())
    assert [r["seq"] for r in rows] == sorted(r["seq"] for r in rows)
    assert {"eventId", "type", "taskId", "authorActorId", "timestamp", "payload"} <= set(rows[0])


def test_refused_events_never_reach_the_log(paper: Path):
    board = Billboard.open(paper)
    board.append_event(new_event("TaskCreated", "t-001", "user", {"intent": "x"}))
    before = board.store.last_seq()
    with pytest.raises(InvalidTransition):
        board.append_events([new_event("TaskClaimed", "t-001", "a", {}), new_event("TaskClaimed", "t-001", "a", {})])
    assert board.store.last_seq() == before  # the batch is atomic: the valid first event is gone too
    event = new_event("TaskStarted", "t-001", "a", {})
    first = board.append_event(event)
    assert board.append_event(event).seq == first.seq  # re-appending an eventId is a no-op
    assert board.store.last_seq() == before + 1


async def test_subscriptions_see_appends(paper: Path):
    board = Billboard.open(paper)
    events = board.subscribe_events()
    views = board.subscribe_task_views()
    next_event = asyncio.ensure_future(events.__anext__())
    next_view = asyncio.ensure_future(views.__anext__())
    await asyncio.sleep(0)
    board.append_event(new_event("TaskCreated", "t-001", "user", {"intent": "subscribe"}))
    event = await asyncio.wait_for(next_event, 2)
    view = await asyncio.wait_for(next_view, 2)
    assert event.type == "TaskCreated" and view.task_id == "t-001" and view.status.value == "open"
    # An append from another process reaches subscribers through the poller.
    follow = asyncio.ensure_future(board.follow_other_writers(interval=0.02))
    await asyncio.sleep(0.05)
    other = Billboard.open(paper)
    nxt = asyncio.ensure_future(events.__anext__())
    await asyncio.sleep(0)
    other.append_event(new_event("TaskStarted", "t-001", "agent", {}))
    assert (await asyncio.wait_for(nxt, 2)).type == "TaskStarted"
    follow.cancel()
    await events.aclose()
    await views.aclose()


CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from pneuma_coauthor.billboard import Billboard
    from pneuma_coauthor.domain import new_event
    board = Billboard.open(Path(sys.argv[1]))
    board.append_event(new_event("TaskCreated", "t-001", "user", {"intent": "durability"}))
    i = 0
    while True:
        i += 1
        event = board.append_event(new_event("UserFeedbackPosted", "t-001", "user", {"text": f"note {i}"}))
        sys.stdout.write(event.event_id + "\\n")  # only after append_event returned: acknowledged
        sys.stdout.flush()
    """
)


def test_sigkill_loses_no_acknowledged_event(paper: Path):
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(paper)], stdout=subprocess.PIPE, text=True)
    acked: list[str] = []
    assert child.stdout is not None
    while len(acked) < 150:
        line = child.stdout.readline()
        assert line, "the writer died"
        acked.append(line.strip())
    os.kill(child.pid, signal.SIGKILL)  # mid-append, most likely
    child.wait(10)
    acked += [line.strip() for line in child.stdout.read().splitlines() if line.strip()]
    board = Billboard.open(paper)
    assert board.store.integrity_ok()
    stored = {e.event_id for e in board.events()}
    missing = [e for e in acked if e not in stored]
    assert not missing, f"{len(missing)} acknowledged events lost"
    # The reopened log is writable and folds cleanly.
    board.append_event(new_event("TaskCompleted", "t-001", "user", {"summary": "after the crash"}))
    assert board.get_task("t-001").status.value == "done"
    assert board.get_task("t-001").event_count >= len(acked) + 2
