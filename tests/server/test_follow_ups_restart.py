"""A follow-up still queued when ``pneuma run`` stops (SIGTERM, as Ctrl-C
or the launcher's Stop; SIGKILL, as kill -9 or a crash) is back at the
next start, held: shown, never sent on its own, sent after Send; Cancel
takes it off the file. Real processes, the fake Claude Code CLI."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.server.follow_up_runs import FakeAgent, Run, Tab, kept


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
async def test_a_queued_message_survives_a_stop_held_until_send(tmp_path: Path, how) -> None:
    workspace = tmp_path / "deck"
    agent = FakeAgent(tmp_path / "agent")
    first = Run(workspace, agent, tmp_path / "home", "first")
    try:
        async with Tab(first) as tab:
            await tab.busy()
            queued = await tab.queue("then make the title red")
            dropped = await tab.queue("and drop the footer")
    finally:
        first.stop(how)
    assert [e["message"]["content"] for e in kept(workspace)] == [
        "then make the title red", "and drop the footer"]

    again = Run(workspace, agent, tmp_path / "home", "again")
    try:
        async with Tab(again) as tab:
            history = await tab.wait_for("message_history")
            shown = history["queued_messages"]
            assert [(q["queue_id"], q["content"], q.get("held")) for q in shown] == [
                (queued["queue_id"], "then make the title red", True),
                (dropped["queue_id"], "and drop the footer", True)]
            # A turn of the person's comes and goes; the held ones stay put.
            await tab.say("hello")
            await tab.wait_for("result")
            assert not any("title red" in t or "footer" in t for t in agent.user_texts())
            # Cancel: gone from the file too.
            await tab.send({"type": "queued_message_cancel", "queue_id": dropped["queue_id"]})
            await tab.wait_for("queued_message_cancelled")
            assert [e["message"]["content"] for e in kept(workspace)] == ["then make the title red"]
            # Send: the agent (free) takes it now.
            await tab.send({"type": "queued_message_send", "queue_id": queued["queue_id"]})
            await tab.wait_for("queued_message_taken")
            await tab.wait_for("user_message", lambda m: m["content"] == "then make the title red")
            await tab.wait_for("result", lambda m: m["seq"] > history["last_seq"] + 3)
        assert agent.user_texts()[-1].endswith("then make the title red")
        assert not any("footer" in t for t in agent.user_texts())
        assert kept(workspace) == []
        # The terminal said it, in one line.
        lines = [line for line in again.stderr().splitlines() if "came back" in line]
        assert len(lines) == 1 and "2 queued messages came back" in lines[0], again.stderr()
    finally:
        again.stop(signal.SIGTERM)
