"""The launcher's Stop keeps the follow-ups still queued: the workspace
opened again shows them held, and the agent gets one only after Send
(docs/protocol.md, "Queued follow-ups"). The real launcher, serving a
slide workspace with the fake Claude Code CLI busy on a slow turn."""

from __future__ import annotations

from typing import Any

from pneuma.testing.browser import BrowserTab, join_session


async def _open(launcher: Any, route: str, path: str) -> BrowserTab:
    status, opened = await launcher.call("POST", route, json={"mode": "slide", "path": path})
    assert status == 200, opened
    base, token = opened["url"].split("/?")[0], opened["url"].rsplit("token=", 1)[1]
    ws = await launcher.http.ws_connect(f"{base}/ws/browser/{opened['sessionId']}",
                                        headers={"Authorization": f"Bearer {token}", "Origin": base})
    return BrowserTab(ws)


async def test_stop_from_the_launcher_keeps_the_queue_held_for_the_next_open(launcher, tmp_path) -> None:
    workspace = tmp_path / "deck"
    tab = await _open(launcher, "/api/workspaces/new", str(workspace))
    await join_session(tab)
    await tab.say("slow please", client_msg_id="c-slow")
    await tab.wait_for("stream_event")
    await tab.say("then make the title red", client_msg_id="c-red")
    queued = await tab.wait_for("user_message_queued")

    status, _ = await launcher.call("POST", "/api/sessions/stop", json={"path": str(workspace.resolve())})
    assert status == 200
    await tab.ws.close()

    again = await _open(launcher, "/api/workspaces/open", str(workspace))
    init = await again.recv()
    assert init["type"] == "session_init"
    await again.send({"type": "session_subscribe", "last_seq": 0})
    history = await again.wait_for("message_history")
    assert [(q["queue_id"], q["content"], q["held"]) for q in history["queued_messages"]] == [
        (queued["queue_id"], "then make the title red", True)]
    await again.send({"type": "queued_message_send", "queue_id": queued["queue_id"]})
    await again.wait_for("queued_message_taken")
    echo = await again.wait_for("user_message")
    assert echo["content"] == "then make the title red"
    await again.wait_for("result")
    await again.ws.close()
