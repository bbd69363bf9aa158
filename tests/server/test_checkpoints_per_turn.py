"""A served session records a checkpoint before each user turn reaches the
agent and marks the end of the turn, so that `pneuma checkpoints restore`
brings the workspace back to before any turn and reports hand edits made
after the agent's turn as conflicts (issue 16, item 3)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from pneuma.checkpoints import Checkpoints, plan_restore

PNEUMA = str(Path(sys.executable).parent / "pneuma")


async def until(predicate, what: str) -> None:
    for _ in range(300):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


async def test_each_turn_can_be_rewound_and_a_hand_edit_is_a_conflict(make_server):
    server = await make_server()
    rel = "slides/01-title.html"
    target = server.workspace / rel
    original = target.read_text()
    tab = await server.tab()

    await tab.send({"type": "user_message", "content": "make the title louder",
                    "client_msg_id": "c1"})
    await server.backend.wait_call("send_user_message")
    # The checkpoint is written while the agent works (docs/checkpoints.md,
    # "Turns are never held up").
    await until(lambda: Checkpoints.open_existing(server.workspace).checkpoints(),
                "the turn's checkpoint was written")
    store = Checkpoints.open_existing(server.workspace)
    assert [(c.number, c.conversation) for c in store.checkpoints()] == [(1, server.session.id)]
    # The agent's turn: it rewrites the slide, then the turn ends.
    target.write_text(original + "\n<h1>LOUDER</h1>\n")
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    await until(lambda: Checkpoints.open_existing(server.workspace).get(1).after is not None,
                "the end of the turn was recorded")
    assert Checkpoints.open_existing(server.workspace).changes_of(1).modified == [rel]

    # A hand edit after the turn: a rewind must not overwrite it silently.
    target.write_text(original + "\n<h1>LOUDER</h1>\n<p>my own note</p>\n")
    plan = plan_restore(Checkpoints.open_existing(server.workspace), 1)
    assert plan.conflicts == [rel]

    out = subprocess.run([PNEUMA, "checkpoints", "list", "-w", str(server.workspace), "--json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)
    assert "make the title louder" in json.dumps(listed)
    refused = subprocess.run([PNEUMA, "checkpoints", "restore", "1", "-w", str(server.workspace),
                              "--yes"], capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0
    assert refused.stderr.startswith("pneuma: error:") and rel in refused.stderr
    assert "my own note" in target.read_text()  # untouched
    done = subprocess.run([PNEUMA, "checkpoints", "restore", "1", "-w", str(server.workspace),
                           "--yes", "--overwrite", rel], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert target.read_text() == original

    # The agent still believes the slide says LOUDER: its next message
    # tells it which files changed on disk, once.
    await tab.send({"type": "user_message", "content": "now the subtitle",
                    "client_msg_id": "c2"})
    await server.backend.wait_call("send_user_message", 2)
    # That turn ends, or the next message would wait in the queue (follow_ups.py).
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    await tab.send({"type": "user_message", "content": "and the footer",
                    "client_msg_id": "c3"})
    calls = await server.backend.wait_call("send_user_message", 3)
    told, later = calls[1][1], calls[2][1]
    assert told.startswith("<workspace-restored>") and rel in told and "turn 1" in told
    assert told.endswith("now the subtitle")
    assert "workspace-restored" not in later
