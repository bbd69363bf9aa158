"""The server's own headless page (``/ws/browser/{sid}?client=headless``) is
never the person's tab, and the viewer-action channel's ``when_no_tab``
answers when no person's tab is open (docs/headless-viewer.md). In process,
without Chromium: the headless viewer itself is off here
(tests/headless_viewer/ drive it for real)."""

from __future__ import annotations

import asyncio
import json

import pytest

from pneuma.testing.browser import BrowserTab, join_session


@pytest.fixture
async def server(make_server, monkeypatch):
    monkeypatch.setenv("PNEUMA_HEADLESS_VIEWER", "0")
    return await make_server()


async def headless_tab(server) -> BrowserTab:
    tab = BrowserTab(await server._ws_connect(server.ws_path() + "?client=headless"))
    server.tabs.append(tab)
    await join_session(tab)
    return tab


async def post_action(server, body):
    response = await server.post("/api/viewer/action", json=body)
    return response.status, await response.json()


async def test_a_headless_socket_is_not_a_tab_for_actions_or_confirmations(server):
    headless = await headless_tab(server)
    assert [c.headless for c in server.session.connections] == [True]
    status, body = await post_action(server, {"actionId": "describe-view"})
    assert status == 503 and body["error"]["details"] == {"reason": "no_browser"}
    # A confirmation does not wait for the headless page: it fails at once.
    response = await server.post("/api/workspace/scaffold", json={"clear": [], "files": []})
    assert response.status == 503
    # It still gets the session's broadcasts (it follows the files).
    server.session.emit({"type": "content_update", "files": []})
    server.session.flush()
    await headless.wait_for("content_update")


async def test_with_no_persons_tab_the_responder_answers_and_with_one_it_does_not(server):
    asked = []

    async def responder(action_id, params, timeout):
        asked.append((action_id, params))
        return {"success": True, "message": "from the responder", "viewer": "headless"}

    server.session.viewer_actions.when_no_tab = responder
    await headless_tab(server)  # the headless page alone is no person's tab
    status, body = await post_action(server, {"actionId": "describe-view"})
    assert status == 200 and body["viewer"] == "headless"
    assert asked == [("describe-view", {})]

    person = await server.tab()
    call = asyncio.ensure_future(post_action(server, {"actionId": "describe-view"}))
    request = await person.wait_for("viewer_action_request")
    assert "headless" not in request
    await person.send({"type": "viewer_action_response", "request_id": request["request_id"],
                       "result": {"success": True, "message": "from the tab"}})
    status, body = await asyncio.wait_for(call, 5)
    assert body == {"success": True, "message": "from the tab"}
    assert len(asked) == 1


async def test_a_request_through_one_socket_reaches_it_alone_marked_headless(server):
    headless = await headless_tab(server)
    person = await server.tab()
    (connection,) = [c for c in server.session.connections if c.headless]
    asked = asyncio.ensure_future(server.session.viewer_actions.request_through(
        lambda message: connection.send(json.dumps(message)), "describe-view", {}, 5, headless=True))
    request = await headless.wait_for("viewer_action_request")
    assert request["headless"] is True and "seq" not in request
    await headless.send({"type": "viewer_action_response", "request_id": request["request_id"],
                         "result": {"success": True, "message": "seen"}})
    assert (await asyncio.wait_for(asked, 5))["message"] == "seen"
    assert not [m for m in person.received if m["type"] == "viewer_action_request"]
