"""The conversation across a kill -9 of a real `pneuma run` (issue 14,
item 6; issue 15, item 1).

The conversation used to be saved whole every five seconds: a kill -9 lost
whatever the tabs had been shown since the last save. Now each message is
appended to the log as it is broadcast, so what a tab saw is what the next
run shows.
"""

from __future__ import annotations

import signal
from pathlib import Path

import aiohttp

from tests.server.test_seq_after_crash import (
    Run,
    messages,
    restarted_history,
    say,
    tab,
    user_message,
)

SHOWN_BEFORE_KILL = 25


async def test_every_message_a_tab_was_shown_survives_a_kill_9(tmp_path: Path) -> None:
    workspace = tmp_path / "deck"
    workspace.mkdir()
    run = Run(workspace)
    shown: list[str] = []
    try:
        async with tab(run, 0) as ws:
            sent = 0
            try:
                async for message in messages(ws):
                    if message.get("type") == "user_message":
                        shown.append(message["content"])
                    if len(shown) >= SHOWN_BEFORE_KILL:
                        run.proc.send_signal(signal.SIGKILL)
                        break
                    if message.get("type") in ("status_change", "error") and sent == len(shown):
                        # Quickly, as a person typing fast would: the next
                        # message as soon as the previous one was shown.
                        await ws.send_str(user_message(f"line {sent}"))
                        sent += 1
            except (aiohttp.ClientError, ConnectionError):
                pass
    finally:
        run.proc.kill()
        run.proc.wait()
    assert len(shown) >= SHOWN_BEFORE_KILL

    again, history = await restarted_history(workspace)
    assert again.session_id == run.session_id  # the same conversation resumed
    restored = [m["content"] for m in history["messages"] if m.get("type") == "user_message"]
    assert restored[:len(shown)] == shown, "messages shown before the kill were lost"


async def test_a_clean_stop_leaves_the_log_as_one_file(tmp_path: Path) -> None:
    workspace = tmp_path / "deck"
    workspace.mkdir()
    run = Run(workspace)
    try:
        await say(run, "hello")
    finally:
        run.stop()
    assert run.proc.returncode == 0
    state = sorted(p.name for p in (workspace / ".pneuma").iterdir())
    assert "conversation.db" in state
    # The WAL folded back: nothing beside it to carry or lose.
    assert not [name for name in state if name.startswith("conversation.db-")], state
