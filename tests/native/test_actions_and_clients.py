"""Unobservable actions end the task in error; offline clients are reported;
the extension list and the twin follow the clients."""

from __future__ import annotations

import asyncio

from tests.fakes.anthropic_api import tool_use
from tests.native.conftest import ScriptedClient, ack, ok

FAST = {"PNEUMA_NATIVE_ACK_TIMEOUT": "0.3", "PNEUMA_NATIVE_ACTION_TIMEOUT": "0.5"}
# How long a test waits for what a task ends with: a whole task (its page
# preparation, a model request, its actions) on a loaded 2-core machine took
# more than 5 s in CI. What each test checks is what arrives, not how soon:
# the product's own bounds are FAST's.
ARRIVES_WITHIN = 30


async def _confirm_next(tab) -> None:
    request = await tab.wait_for("confirmation_request", ARRIVES_WITHIN)
    await tab.send({"type": "confirmation_response", "request_id": request["request_id"],
                    "approved": True})


async def test_an_action_without_ack_times_out_and_the_task_ends_in_error(make_native, fake_api):
    server = await make_native(env=FAST)
    tab = await server.tab()
    client = ScriptedClient(server, behaviour=lambda m: [])  # never answers
    await client.connect()
    assert (await server.post_json("/api/extension/select", {"clientId": "scripted-1"}))[0] == 200
    await server.say(tab, "Open http://127.0.0.1:9/nowhere please")
    await _confirm_next(tab)
    result = await tab.wait_for("result", ARRIVES_WITHIN)
    assert result["data"]["is_error"] is True
    error = await asyncio.wait_for(_first(tab, "error"), 1)
    assert error["code"] == "ack_timeout" and "session_start" in error["message"]
    statuses = [m["task"]["status"] for m in tab.broadcasts() if m["type"] == "task_update"]
    assert statuses == ["created", "waiting_for_user_confirmation", "running", "error"]
    phases = [(m["phase"], m["action"]["name"]) for m in tab.broadcasts()
              if m["type"] == "browser_action"]
    assert phases == [("start", "session_start"), ("error", "session_start")]
    assert fake_api.conversation_requests() == []  # the model never ran on an unprepared page
    status, tasks = await server.get_json("/api/tasks")
    assert tasks["tasks"][-1]["status"] == "error" and "acknowledge" in tasks["tasks"][-1]["error"]
    stored = server.backend.store.actions()
    assert [(a["name"], a["status"]) for a in stored] == [("session_start", "error")]
    await client.close()
    await server.close()


async def test_an_acknowledged_action_that_never_finishes_times_out(make_native, fake_api):
    server = await make_native(env=FAST)
    tab = await server.tab()
    client = ScriptedClient(server, behaviour=lambda m: [ack(m)])
    await client.connect()
    await server.post_json("/api/extension/select", {"clientId": "scripted-1"})
    await server.say(tab, "Read http://127.0.0.1:9/slow")
    await _confirm_next(tab)
    result = await tab.wait_for("result", ARRIVES_WITHIN)
    assert result["data"]["is_error"] is True
    assert "did not finish within 0.5 s" in result["data"]["result"]
    await client.close()
    await server.close()


def _page_client(message):
    name = message["action"]
    results = {
        "session_start": {"tabId": 7, "windowId": 1, "url": "http://127.0.0.1:9/p", "title": "P"},
        "browser_wait_for_loaded": {"status": "complete", "url": "http://127.0.0.1:9/p"},
        "browser_readability_extract": {"title": "P", "text": "A page about otters."},
    }
    if name == "browser_screenshot":
        return [ack(message), {"type": "browser_action_result", "id": message["id"], "ok": False,
                               "error": {"code": "E_CAPTURE", "message": "capture failed"}}]
    if name == "browser_click":
        return ["drop"]
    return [ack(message), ok(message, results.get(name, {}))]


async def test_an_offline_client_is_reported_and_fails_the_task(make_native, fake_api):
    server = await make_native(env=FAST)
    tab = await server.tab()
    client = ScriptedClient(server, behaviour=_page_client)
    await client.connect()
    await server.post_json("/api/extension/select", {"clientId": "scripted-1"})
    fake_api.push(tool_use("browser_click", {"xpath": "//a[1]"}))
    await server.say(tab, "Click the first link on http://127.0.0.1:9/p")
    await _confirm_next(tab)
    result = await tab.wait_for("result", ARRIVES_WITHIN)
    assert result["data"]["is_error"] is True
    assert "offline" in result["data"]["result"]
    events = tab.broadcasts()
    # A failed preparation step is named, not skipped, and the model saw why.
    prepared = next(m for m in events if m["type"] == "page_prepared")["page"]
    assert prepared["failures"] == [{"action": "browser_screenshot", "code": "E_CAPTURE",
                                     "message": "capture failed"}]
    first = fake_api.conversation_requests()[0]["messages"][0]["content"]
    assert "browser_screenshot failed: capture failed" in str(first)
    assert "A page about otters." in str(first)
    # The list says offline, the web UI heard it.
    status, listing = await server.get_json("/api/extension/extension-list")
    assert _browsers(listing["clients"])[0]["online"] is False
    updates = [m for m in events if m["type"] == "extension_update"]
    assert _browsers(updates[-1]["clients"])[0]["online"] is False
    assert [m["task"]["status"] for m in events if m["type"] == "task_update"][-1] == "error"

    # The next browser task says the selected client is offline and asks again.
    await server.say(tab, "Now open http://127.0.0.1:9/q")
    offline = await tab.wait_for("browser_selection", ARRIVES_WITHIN, lambda m: m["status"] == "offline")
    assert offline["clientId"] == "scripted-1"
    waiting = await tab.wait_for("browser_selection", ARRIVES_WITHIN, lambda m: m["status"] == "waiting")
    assert waiting["candidates"][0]["online"] is False
    status, body = await server.post_json("/api/extension/select", {"clientId": "scripted-1"})
    assert status == 503 and body["error"]["code"] == "E_UNAVAILABLE"
    await server.close()


async def test_twin_follows_full_sync_and_tab_events(make_native):
    server = await make_native()
    tab = await server.tab()
    client = ScriptedClient(server)
    await client.connect()
    first = await tab.wait_for("twin_update", ARRIVES_WITHIN)
    assert first["clientId"] == "scripted-1" and first["twin"]["activeTabId"] == 7
    await client.ws.send_json({"type": "tab_event", "event": "created",
                               "tab": {"id": 8, "url": "http://x.test/", "title": "X", "active": True}})
    second = await tab.wait_for("twin_update", ARRIVES_WITHIN)
    assert [t["id"] for t in second["twin"]["tabs"]] == [7, 8]
    assert second["twin"]["activeTabId"] == 8
    await client.ws.send_json({"type": "tab_event", "event": "removed", "tabId": 8})
    third = await tab.wait_for("twin_update", ARRIVES_WITHIN)
    assert [t["id"] for t in third["twin"]["tabs"]] == [7] and third["twin"]["activeTabId"] == 7
    status, twin = await server.get_json("/api/extension/twin?clientId=scripted-1")
    assert twin["twin"]["tabs"][0]["url"] == "about:blank"
    await client.close()
    await server.close()


async def test_extension_socket_needs_the_token_and_a_hello(make_native):
    server = await make_native()
    async with server.client.get(f"/ws/extension/{server.session.id}") as response:
        assert response.status == 401
    ws = await server.client.ws_connect(f"/ws/extension/{server.session.id}", headers=server.auth)
    await ws.send_json({"type": "tab_event"})
    reply = await ws.receive_json(timeout=3)
    assert reply["code"] == "hello_required"
    await ws.close()
    await server.close()


def _browsers(clients):
    return [c for c in clients if c["kind"] == "browser"]


async def _first(tab, kind):
    for message in tab.received:
        if message.get("type") == kind:
            return message
    return await tab.wait_for(kind, 1)
