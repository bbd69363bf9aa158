"""The shell's tabs are viewer clients of the registry; the model's viewer
actions go to one of them; the picker may answer on the browser socket."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from pneuma.core.channels import NoBrowserConnected
from pneuma.core.messages import SelectBrowser
from pneuma.server.connection import BrowserConnection
from pneuma.server.session import Session
from tests.fakes.anthropic_api import text, tool_use
from tests.native.conftest import ScriptedClient


def _viewers(listing):
    return [c for c in listing["clients"] if c["kind"] == "viewer"]


async def _listing(server):
    status, listing = await server.get_json("/api/extension/extension-list")
    assert status == 200
    return listing


async def test_each_tab_is_a_viewer_client_with_its_online_state(make_native):
    server = await make_native()
    first = await server.tab()
    second = await server.tab()
    listing = await _listing(server)
    viewers = _viewers(listing)
    assert len(viewers) == 2 and listing["viewers"] == 2
    assert all(v["online"] and v["mode"] == "slide" for v in viewers)
    assert all(v["clientId"].startswith("viewer-") and "viewer" in v["name"] for v in viewers)
    assert viewers[0]["name"] != viewers[1]["name"]
    update = await first.wait_for("extension_update", 3, lambda m: len(_viewers(m)) == 2)
    assert update["viewers"] == 2

    # A browser client is listed beside them; only it is offered in the picker.
    client = ScriptedClient(server)
    await client.connect()
    listing = await _listing(server)
    assert [c["kind"] for c in listing["clients"]] == ["browser", "viewer", "viewer"]
    assert [c["clientId"] for c in server.backend.registry.candidates()] == ["scripted-1"]

    # Closing a tab takes its viewer offline, and the other tabs hear it.
    await second.close()
    server.tabs.remove(second)
    await first.wait_for("extension_update", 3, lambda m: m["viewers"] == 1)
    viewers = _viewers(await _listing(server))
    assert sorted(v["online"] for v in viewers) == [False, True]
    await client.close()
    await server.close()


async def test_a_viewer_cannot_be_picked_as_the_browser(make_native):
    server = await make_native()
    await server.tab()
    viewer = _viewers(await _listing(server))[0]["clientId"]
    status, body = await server.post_json("/api/extension/select", {"clientId": viewer})
    assert status == 400 and body["error"]["code"] == "E_BAD_ARGS"
    await server.close()


async def test_viewer_actions_of_the_model_go_to_one_registered_viewer(make_native, fake_api):
    server = await make_native()
    older = await server.tab()
    newer = await server.tab()
    newest_id = max(server.backend.registry.online("viewer"), key=lambda c: c.connected_at).id
    call = tool_use("viewer__navigate-to", {"file": "slides/02.html"})
    fake_api.push(call)
    fake_api.push(text("You are on slide 2 now."))
    await server.say(newer, "show me slide 2")

    request = await newer.wait_for("viewer_action_request", 30)
    assert request["action_id"] == "navigate-to"
    assert request["params"] == {"file": "slides/02.html"}
    assert request["viewer_client_id"] == newest_id
    assert "seq" not in request  # sent to that tab only, not a broadcast
    await newer.send({"type": "viewer_action_response", "request_id": request["request_id"],
                      "result": {"success": True, "message": "showing slides/02.html",
                                 "data": {"file": "slides/02.html"}}})
    result = await newer.wait_for("result", 30)
    assert result["data"]["is_error"] is False
    assert not [m for m in older.received if m["type"] == "viewer_action_request"]
    answer = {r["tool_use_id"]: r for r in fake_api.tool_results()}[call.id]
    assert answer["is_error"] is False and "showing slides/02.html" in answer["content"]

    # A failure the viewer reports goes back as a tool error.
    failing = tool_use("viewer__navigate-to", {"file": "nope.html"})
    fake_api.push(failing)
    fake_api.push(text("That slide does not exist."))
    await server.say(newer, "show me nope")
    request = await newer.wait_for("viewer_action_request", 30)
    await newer.send({"type": "viewer_action_response", "request_id": request["request_id"],
                      "result": {"success": False, "message": "no such file"}})
    await newer.wait_for("result", 30)
    answer = {r["tool_use_id"]: r for r in fake_api.tool_results()}[failing.id]
    assert answer["is_error"] is True and "no such file" in answer["content"]
    await server.close()


async def test_a_viewer_tab_closing_mid_action_fails_the_tool_at_once(make_native, fake_api):
    server = await make_native(env={"PNEUMA_NATIVE_ACTION_TIMEOUT": "30"})
    speaker = await server.tab()
    viewer = await server.tab()  # the freshest: it gets the request
    call = tool_use("viewer__describe-view", {})
    fake_api.push(call)
    fake_api.push(text("The viewer went away."))
    await server.say(speaker, "what do I see?")
    await viewer.wait_for("viewer_action_request", 30)
    started = asyncio.get_running_loop().time()
    await viewer.close()
    server.tabs.remove(viewer)
    await speaker.wait_for("result", 30)
    assert asyncio.get_running_loop().time() - started < 5
    answer = {r["tool_use_id"]: r for r in fake_api.tool_results()}[call.id]
    assert answer["is_error"] is True and "closed" in answer["content"]

    # With no viewer open at all, the tool says so instead of waiting.
    await speaker.close()
    server.tabs.remove(speaker)
    await asyncio.sleep(0.1)
    with pytest.raises(NoBrowserConnected, match="No viewer is open"):
        await server.backend.viewers.request("describe-view", {}, 1)
    await server.close()


async def test_select_browser_on_the_socket_answers_a_waiting_task(make_native, fake_api):
    server = await make_native()
    tab = await server.tab()
    client = ScriptedClient(server)
    await client.connect()
    await server.say(tab, "Open http://127.0.0.1:9/page")
    waiting = await tab.wait_for("browser_selection", 5, lambda m: m["status"] == "waiting")
    assert [c["clientId"] for c in waiting["candidates"]] == ["scripted-1"]

    await tab.send({"type": "select_browser", "clientId": "nobody"})
    error = await tab.wait_for("error", 3)
    assert error["code"] == "unknown_client" and "seq" not in error
    viewer = _viewers(await _listing(server))[0]["clientId"]
    await tab.send({"type": "select_browser", "clientId": viewer})
    assert (await tab.wait_for("error", 3))["code"] == "not_a_browser"

    await tab.send({"type": "select_browser", "clientId": "scripted-1",
                    "client_msg_id": uuid.uuid4().hex})
    selected = await tab.wait_for("browser_selection", 5, lambda m: m["status"] == "selected")
    assert selected["clientId"] == "scripted-1" and selected["taskId"] == waiting["taskId"]
    confirm = await tab.wait_for("confirmation_request", 30)
    assert confirm["details"]["clientId"] == "scripted-1"
    assert (await _listing(server))["selectedClientId"] == "scripted-1"
    await tab.send({"type": "confirmation_response", "request_id": confirm["request_id"],
                    "approved": False})
    fake_api.push(text("Understood, no browser."))
    result = await tab.wait_for("result", 30)
    assert result["data"]["is_error"] is False
    await client.close()
    await server.close()


async def test_select_browser_without_the_native_backend_is_refused(tmp_path):
    sent: list[str] = []

    class Tab(BrowserConnection):
        def __init__(self) -> None:  # no socket: only what the session sends
            self.subscribed = True
            self.closed = False

        def send(self, text: str) -> None:
            sent.append(text)

    session = Session("s", mode="slide", workspace=tmp_path, backend_name="none")
    await session.handle(Tab(), SelectBrowser(type="select_browser", clientId="x"))
    assert len(sent) == 1 and '"code":"not_native"' in sent[0]


async def test_the_viewer_context_is_not_the_persons_request(make_native, fake_api):
    server = await make_native()
    tab = await server.tab()
    context = ('<viewer-context mode="slide" file="slides/01.html">selected: <a> '
               '"http://example.test/elsewhere" (a.more)</viewer-context>')
    fake_api.push(text("Made it bold."))
    await tab.send({"type": "user_message", "content": "make this link bold",
                    "viewer_context": context, "client_msg_id": uuid.uuid4().hex})
    await tab.wait_for("result", 30)
    # A URL inside the viewer's context does not make a browser task...
    assert not [m for m in tab.broadcasts() if m["type"] == "browser_selection"]
    tasks = (await server.get_json("/api/tasks"))[1]["tasks"]
    assert [(t["title"], t["status"]) for t in tasks] == [("make this link bold", "completed")]
    # ...but the model still reads the context.
    said = fake_api.conversation_requests()[0]["messages"][0]["content"][0]["text"]
    assert said.startswith("<viewer-context") and said.endswith("make this link bold")

    client = ScriptedClient(server)
    await client.connect()
    await server.post_json("/api/extension/select", {"clientId": "scripted-1"})
    await tab.send({"type": "user_message", "content": "summarise http://127.0.0.1:9/a.html",
                    "viewer_context": context, "client_msg_id": uuid.uuid4().hex})
    confirm = await tab.wait_for("confirmation_request", 30)
    assert confirm["details"]["url"] == "http://127.0.0.1:9/a.html"
    assert "viewer-context" not in confirm["summary"]
    assert confirm["summary"].endswith("work on: summarise http://127.0.0.1:9/a.html")
    await tab.send({"type": "interrupt"})
    await tab.wait_for("result", 30)
    await client.close()
    await server.close()


async def test_with_no_tab_the_models_viewer_actions_go_where_the_sessions_go(make_native):
    """The headless viewer sets the session channel's ``when_no_tab``: the
    native runtime's viewer tools take the same way when no tab is open, and
    a tab that is open still answers itself."""
    server = await make_native()
    asked = []

    async def without_a_tab(action_id, params, timeout):
        asked.append((action_id, params))
        return {"success": True, "message": "answered without a tab", "viewer": "headless"}

    server.session.viewer_actions.when_no_tab = without_a_tab
    answer = await server.backend.viewers.request("describe-view", {"detail": 1}, 1)
    assert answer["viewer"] == "headless" and asked == [("describe-view", {"detail": 1})]

    tab = await server.tab()
    pending = asyncio.create_task(server.backend.viewers.request("describe-view", {}, 5))
    request = await tab.wait_for("viewer_action_request", 30)
    await tab.send({"type": "viewer_action_response", "request_id": request["request_id"],
                    "result": {"success": True, "message": "from the tab"}})
    assert (await pending)["message"] == "from the tab"
    assert len(asked) == 1
    await server.close()
