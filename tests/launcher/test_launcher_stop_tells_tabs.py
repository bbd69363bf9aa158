"""A workspace stopped from the launcher tells its open tabs so (issue 25,
item 7): each tab gets ``workspace_stopped`` (why, and the launcher's page
without its token) before its socket closes, so the page can stop
reconnecting and say what happened; the launcher exiting says ``exiting``."""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from pneuma.testing.browser import BrowserTab, join_session


async def _open_tabs(launcher: Any, path: str, count: int) -> tuple[dict[str, Any], list[Any]]:
    status, opened = await launcher.call("POST", "/api/workspaces/new",
                                         json={"mode": "doc", "path": path})
    assert status == 200, opened
    base, token = opened["url"].split("/?")[0], opened["url"].rsplit("token=", 1)[1]
    sockets = []
    for _ in range(count):
        ws = await launcher.http.ws_connect(
            f"{base}/ws/browser/{opened['sessionId']}",
            headers={"Authorization": f"Bearer {token}", "Origin": base})
        sockets.append(ws)
    return opened, sockets


async def read_until_closed(ws: aiohttp.ClientWebSocketResponse, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Every message the tab got until its socket closed."""
    messages: list[dict[str, Any]] = []
    while True:
        frame = await ws.receive(timeout=timeout)
        if frame.type != aiohttp.WSMsgType.TEXT:
            assert frame.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED,
                                  aiohttp.WSMsgType.CLOSING), frame
            return messages
        messages += [json.loads(line) for line in frame.data.split("\n") if line.strip()]


def _stopped(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["type"] == "workspace_stopped"]


async def test_stop_tells_every_open_tab_before_its_socket_closes(launcher, tmp_path) -> None:
    launcher.state.hosting.launcher_page = f"{launcher.url}/"
    workspace = tmp_path / "notes"
    _, sockets = await _open_tabs(launcher, str(workspace), 3)
    # One tab subscribed and in the conversation, two only connected.
    subscribed = BrowserTab(sockets[0])
    await join_session(subscribed)

    status, _ = await launcher.call("POST", "/api/sessions/stop",
                                    json={"path": str(workspace.resolve())})
    assert status == 200
    for ws in sockets[1:]:
        told = _stopped(await read_until_closed(ws))
        assert told == [{"type": "workspace_stopped", "reason": "stopped",
                         "launcher": f"{launcher.url}/"}]
        assert launcher.token not in json.dumps(told)  # the launcher's token stays with it
    told_subscribed = await subscribed.wait_for("workspace_stopped")
    assert told_subscribed["reason"] == "stopped"
    assert "seq" not in told_subscribed  # for these tabs only, never replayed nor logged
    for ws in sockets:
        await ws.close()


async def test_the_launcher_exiting_tells_the_tabs_it_is_exiting(launcher, tmp_path) -> None:
    _, sockets = await _open_tabs(launcher, str(tmp_path / "slides"), 1)
    await launcher.state.hosting.stop_all()
    told = _stopped(await read_until_closed(sockets[0]))
    assert [m["reason"] for m in told] == ["exiting"]
    assert told[0]["launcher"] is None  # this fixture's host was never told its page
    await sockets[0].close()
