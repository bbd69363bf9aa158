"""The launcher's "last active" is the workspace's last real activity
(issue 25, item 20): the launcher's own reads of a workspace (which open
its conversation log and so create or touch SQLite's side files) never
move it; a message written by a run does."""

from __future__ import annotations

import json
import time
from pathlib import Path

from pneuma.server.conversation_log import ConversationLog


def _wait_for_clock_to_pass(moment: float) -> None:
    # The file system's clock must move past ``moment`` for a touched file
    # to show it; a busy wait on the wall clock, not a fixed sleep.
    while time.time() < moment + 0.05:
        time.sleep(0.01)


def _workspace_with_a_message(root: Path, sent_at: float) -> Path:
    workspace = root / "ws"
    (workspace / ".pneuma").mkdir(parents=True)
    (workspace / ".pneuma" / "session.json").write_text(json.dumps({"mode": "doc"}))
    log = ConversationLog.open(workspace / ".pneuma")
    log.append("s1", 1, 1, "user_message", None,
               json.dumps({"type": "user_message", "content": "draft the intro",
                           "timestamp": sent_at}))
    log.close()
    return workspace


async def _last_active(launcher, workspace: Path) -> float:  # type: ignore[no-untyped-def]
    status, listed = await launcher.call("GET", "/api/workspaces")
    assert status == 200
    entry = next(w for w in listed["workspaces"] if w["path"] == str(workspace))
    assert entry["lastActivity"] is not None
    return float(entry["lastActivity"])


async def test_opening_the_list_twice_does_not_move_last_active(launcher, tmp_path: Path) -> None:
    workspace = _workspace_with_a_message(tmp_path, time.time())
    launcher.state.recent.record(workspace, "doc")
    first = await _last_active(launcher, workspace)
    _wait_for_clock_to_pass(time.time() + 1)
    second = await _last_active(launcher, workspace)
    _wait_for_clock_to_pass(time.time() + 1)
    third = await _last_active(launcher, workspace)
    assert first == second == third
    assert first <= time.time() - 2  # not the time of a read


async def test_a_new_message_moves_last_active(launcher, tmp_path: Path) -> None:
    workspace = _workspace_with_a_message(tmp_path, time.time())
    launcher.state.recent.record(workspace, "doc")
    before = await _last_active(launcher, workspace)
    _wait_for_clock_to_pass(time.time() + 1)
    log = ConversationLog.open(workspace / ".pneuma")
    try:
        log.append("s1", 2, 2, "user_message", None,
                   json.dumps({"type": "user_message", "content": "and the outro",
                               "timestamp": time.time()}))
    finally:
        log.close()
    assert await _last_active(launcher, workspace) > before + 0.5
