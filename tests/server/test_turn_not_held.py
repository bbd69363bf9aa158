"""A turn's checkpoint never holds the person's message up (issue 27, item
2): only a stat walk runs before the message reaches the agent; reading and
storing what changed, and pruning, run while the agent works. A file the
agent changes before its old content could be kept is named by the rewind
instead of being written back wrong (docs/checkpoints.md, "Turns are never
held up")."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pneuma.checkpoints import Checkpoints, plan_restore, turn_listener
from pneuma.core.sandbox import Sandbox
from pneuma.workspace.params import init_workspace

REL = "slides/01-title.html"
RESULT = {"type": "result", "data": {"subtype": "success", "is_error": False}}


class Gate:
    """Holds a store step in its worker thread until the test opens it."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.entered = threading.Event()

    def wrap(self, step: Callable[..., Any]) -> Callable[..., Any]:
        def held(*args: Any, **kwargs: Any) -> Any:
            self.entered.set()
            if not self.opened.wait(30):
                raise TimeoutError("the test never opened the gate")
            return step(*args, **kwargs)
        return held


async def listener_settled(server: Any) -> turn_listener.CheckpointTurns:
    """The session's checkpoints, once its standing baseline is taken."""
    turns = turn_listener.subscribed(server.session.hooks)
    assert turns is not None
    if turns._tail is not None:
        await asyncio.wait_for(asyncio.shield(turns._tail), 10)
    return turns


def aged_workspace(mode: Any, folder: Path) -> Path:
    """A seeded workspace whose files were last written an hour ago, as a
    person's usually were (a file read just after it was written is read
    again by the next recording, whatever its stat says: baseline.racy)."""
    folder.mkdir()
    init_workspace(mode, folder, {})
    hour_ago = time.time() - 3600
    for path in folder.rglob("*"):
        os.utime(path, (hour_ago, hour_ago), follow_symlinks=False)
    return folder.resolve()


@pytest.fixture
def gate() -> Any:
    held = Gate()
    yield held
    held.opened.set()  # a failed test leaves no thread waiting


async def test_the_message_reaches_the_agent_before_its_checkpoint_is_stored(
        make_server, monkeypatch, gate):
    server = await make_server()
    await listener_settled(server)
    tab = await server.tab()
    monkeypatch.setattr(turn_listener, "keep", gate.wrap(turn_listener.keep))

    await tab.say("make the title louder", client_msg_id="c1")
    await server.backend.wait_call("send_user_message")
    # The recording is under way, and held: no checkpoint yet.
    assert await asyncio.to_thread(gate.entered.wait, 10)
    assert not [m for m in tab.received if m.get("type") == "turn_checkpoint"]
    assert Checkpoints.open_existing(server.workspace).checkpoints() == []

    gate.opened.set()
    announced = await tab.wait_for("turn_checkpoint")
    assert announced["ref"] == "1" and announced["client_msg_id"] == "c1"
    assert [c.number for c in Checkpoints.open_existing(server.workspace).checkpoints()] == [1]


async def test_a_file_the_agent_changes_before_it_is_kept_is_named_by_the_rewind(
        make_server, monkeypatch, gate, slide_mode, tmp_path):
    server = await make_server(workspace=aged_workspace(slide_mode, tmp_path / "deck"),
                               seed=False)
    await listener_settled(server)
    slides = sorted((server.workspace / "slides").iterdir())
    raced, calm = slides[0], slides[1]
    raced_rel, calm_rel = (p.relative_to(server.workspace).as_posix() for p in (raced, calm))
    # A hand edit after the baseline: the turn's checkpoint must read it.
    raced.write_text(raced.read_text() + "<p>mine</p>\n")
    calm_before = calm.read_text()
    tab = await server.tab()
    monkeypatch.setattr(turn_listener, "keep", gate.wrap(turn_listener.keep))

    await tab.say("rewrite both", client_msg_id="c1")
    await server.backend.wait_call("send_user_message")
    # The agent is faster than the recording.
    raced.write_text("<h1>the agent's</h1>\n")
    calm.write_text("<h1>the agent's too</h1>\n")
    gate.opened.set()
    await tab.wait_for("turn_checkpoint")
    server.backend.emit(RESULT)
    await tab.wait_for("turn_changes")

    store = Checkpoints.open_existing(server.workspace)
    entry = store.get(1).files[raced_rel]
    assert entry.hash is None and entry.skipped == "changed_first"
    plan = plan_restore(store, 1)
    assert [item["path"] for item in plan.left_as_is] == [raced_rel]
    assert "changed before Pneuma could keep it" in plan.left_as_is[0]["why"]
    assert plan.paths("write") == [calm_rel]
    # The page's preview says the same, and the rewind restores the rest exactly.
    preview = await (await server.get("/api/checkpoints/1/plan")).json()
    assert [item["path"] for item in preview["leftAsIs"]] == [raced_rel]
    done = await server.post("/api/checkpoints/1/restore", json={})
    assert done.status == 200, await done.text()
    assert calm.read_text() == calm_before
    assert raced.read_text() == "<h1>the agent's</h1>\n"


async def test_pruning_does_not_hold_up_the_next_message(make_server, monkeypatch, gate):
    server = await make_server()
    turns = await listener_settled(server)
    tab = await server.tab()
    monkeypatch.setattr(turns.store, "prune", gate.wrap(turns.store.prune))

    await tab.say("first", client_msg_id="c1")
    await server.backend.wait_call("send_user_message")
    await tab.wait_for("turn_checkpoint")
    await asyncio.to_thread(gate.entered.wait, 10)  # pruning after turn 1, held
    server.backend.emit(RESULT)
    await tab.say("second", client_msg_id="c2")
    await server.backend.wait_call("send_user_message", 2)
    assert not gate.opened.is_set()

    gate.opened.set()
    await tab.wait_for("turn_changes", where=lambda m: m["ref"] == "1")
    second = await tab.wait_for("turn_checkpoint", where=lambda m: m["client_msg_id"] == "c2")
    assert second["ref"] == "2"


async def test_the_baseline_leaves_the_first_turn_only_stats_to_compare(
        make_server, monkeypatch, slide_mode, tmp_path):
    server = await make_server(workspace=aged_workspace(slide_mode, tmp_path / "deck"),
                               seed=False)
    await listener_settled(server)  # the baseline is taken when the server starts
    opened: list[str] = []
    real = Sandbox.open_file

    def counted(self: Sandbox, rel: object) -> tuple[int, os.stat_result]:
        # Only this workspace's: a thread an earlier test in this process
        # left finishing its work reads its own files through the same class.
        if self.root == server.workspace:
            opened.append(str(rel))
        return real(self, rel)

    monkeypatch.setattr(Sandbox, "open_file", counted)
    tab = await server.tab()
    await tab.say("first", client_msg_id="c1")
    await tab.wait_for("turn_checkpoint")
    assert opened == []
    files = Checkpoints.open_existing(server.workspace).get(1).files
    assert files and all(entry.hash for entry in files.values())


async def test_a_file_the_agent_rewrites_at_once_each_turn_is_rewound_exactly(
        make_server, monkeypatch, gate, slide_mode, tmp_path):
    server = await make_server(workspace=aged_workspace(slide_mode, tmp_path / "deck"),
                               seed=False)
    await listener_settled(server)
    target = server.workspace / REL
    tab = await server.tab()
    await tab.say("one", client_msg_id="c1")
    await server.backend.wait_call("send_user_message")
    await tab.wait_for("turn_checkpoint")
    target.write_text("<h1>turn one</h1>\n")
    # The turn's end reads it a moment after it was written: too soon to
    # trust its stat later (baseline.racy).
    server.backend.emit(RESULT)
    await tab.wait_for("turn_changes")
    monkeypatch.setattr(turn_listener, "keep", gate.wrap(turn_listener.keep))

    await tab.say("two", client_msg_id="c2")
    await server.backend.wait_call("send_user_message", 2)
    target.write_text("<h1>turn two, at once</h1>\n")  # before the recording reads it
    gate.opened.set()
    await tab.wait_for("turn_checkpoint", where=lambda m: m["client_msg_id"] == "c2")
    server.backend.emit(RESULT)
    await tab.wait_for("turn_changes", where=lambda m: m["ref"] == "2")

    plan = plan_restore(Checkpoints.open_existing(server.workspace), 2)
    assert (plan.paths("write"), plan.conflicts, plan.left_as_is) == ([REL], [], [])
    done = await server.post("/api/checkpoints/2/restore", json={})
    assert done.status == 200, await done.text()
    assert target.read_text() == "<h1>turn one</h1>\n"


async def test_turns_that_outrun_their_recordings_wait_rather_than_pile_up(
        make_server, monkeypatch, gate):
    # Each turn queues its recording and its end's; with every recording
    # held, the queue may hold a few turns but not grow without bound.
    server = await make_server()
    turns = await listener_settled(server)
    tab = await server.tab()
    monkeypatch.setattr(turn_listener, "keep", gate.wrap(turn_listener.keep))
    said = sent = 0
    while said < 12:
        said += 1
        await tab.say(f"turn {said}", client_msg_id=f"c{said}")
        try:
            await server.backend.wait_call("send_user_message", said, timeout=1.5)
        except TimeoutError:
            break  # held until the recordings before it are stored
        sent = said
        server.backend.emit(RESULT)
        await tab.wait_for("result")
    assert 1 <= sent < said, f"{sent} of {said} messages went with every recording held"
    assert turns._queued <= turn_listener.MAX_QUEUED_JOBS

    gate.opened.set()
    await server.backend.wait_call("send_user_message", said)
    last = await tab.wait_for("turn_checkpoint", where=lambda m: m["client_msg_id"] == f"c{said}")
    assert last["ref"] == str(said)
