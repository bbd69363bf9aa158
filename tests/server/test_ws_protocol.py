"""The browser WebSocket protocol (ADR-002 §3) against a fake backend."""

from __future__ import annotations

import asyncio
import json

import pytest


async def test_session_init_on_connect(server):
    ws = await server.client.ws_connect(server.ws_path(), headers=server.auth)
    frame = await ws.receive(timeout=3)
    init = json.loads(frame.data.split("\n")[0])
    assert init["type"] == "session_init"
    assert "seq" not in init
    session = init["session"]
    assert session["session_id"] == server.session.id
    assert session["mode"] == "slide"
    assert session["cwd"] == str(server.workspace)
    assert session["no_agent_reason"] is None
    await ws.close()


async def test_no_broadcast_before_subscribe(server):
    tab = await server.tab(subscribe=False)
    server.backend.emit({"type": "stream_event", "event": {"i": 1}})
    assert await tab.drain(0.15) == []
    history = await tab.subscribe(0)
    assert history["type"] == "message_history"
    assert history["last_seq"] == 1
    status = await tab.recv()
    assert status == {"type": "status_change", "status": "idle"}


async def test_a_model_learnt_between_connect_and_subscribe_reaches_the_tab(server):
    # The tab's session_init predates the agent's init line; the broadcast
    # of the model went only to tabs subscribed then. The page would show
    # "Default" until the next switch.
    tab = await server.tab(subscribe=False)
    assert tab.received[0]["session"]["model"] is None
    server.session.set_agent_state(model="claude-late-model", permission_mode="default")
    server.backend.emit({"type": "session_update", "updates": {"model": "claude-late-model"}})
    await tab.subscribe(0)
    update = await tab.wait_for("session_update")
    assert update["updates"]["model"] == "claude-late-model"
    assert update["updates"]["permission_mode"] == "default"


async def test_subscribe_from_zero_gets_the_history(server):
    server.backend.emit({"type": "user_message", "content": "hi"})
    server.backend.emit({"type": "stream_event", "event": {"delta": "x"}})
    server.backend.emit({"type": "assistant", "message": {"id": "m1", "role": "assistant",
                                                          "content": [{"type": "text",
                                                                       "text": "hello"}]}})
    tab = await server.tab(subscribe=False)
    history = await tab.subscribe(0)
    assert history["type"] == "message_history"
    assert "seq" not in history
    assert [m["type"] for m in history["messages"]] == ["user_message", "assistant"]
    assert history["last_seq"] == 3
    assert history["pending_permissions"] == []


async def test_user_message_with_viewer_context_reaches_the_backend_and_every_tab(server):
    tab1 = await server.tab()
    tab2 = await server.tab()
    context = '<viewer-context mode="slide" view="slide:2">selected: <h1> "Hi"</viewer-context>'
    await tab1.send({"type": "user_message", "content": "make it bigger",
                     "viewer_context": context, "client_msg_id": "c1"})
    (call,) = await server.backend.wait_call("send_user_message")
    assert call[1] == f"{context}\n\nmake it bigger"
    assert call[2] == []
    for tab in (tab1, tab2):
        echo = await tab.wait_for("user_message")
        assert echo["content"] == "make it bigger"
        assert echo["viewer_context"] == context
        assert echo["client_msg_id"] == "c1"
        assert isinstance(echo["seq"], int)
        running = await tab.wait_for("status_change")
        assert running["status"] == "running" and "seq" in running


async def test_structured_ui_context_is_prefixed_as_text(server):
    tab = await server.tab()
    await tab.send({
        "type": "user_message",
        "content": "shorter please",
        "uiContext": {
            "mode": "slide",
            "currentView": "slide:3",
            "selectedElement": {"selector": "section > h1", "tagName": "H1",
                                "textContent": "  The\nproblem  "},
        },
    })
    (call,) = await server.backend.wait_call("send_user_message")
    prefix, _, content = call[1].partition("\n\n")
    assert content == "shorter please"
    assert prefix.startswith("<viewer-context ") and prefix.endswith("</viewer-context>")
    assert 'mode="slide"' in prefix and 'view="slide:3"' in prefix
    assert "<h1>" in prefix and '"The problem"' in prefix and "section > h1" in prefix
    echo = await tab.wait_for("user_message")
    assert echo["viewer_context"] == prefix


async def test_images_are_passed_on(server):
    tab = await server.tab()
    await tab.send({"type": "user_message", "content": "like this",
                    "images": [{"media_type": "image/png", "data": "iVBORw0KGgo="}]})
    (call,) = await server.backend.wait_call("send_user_message")
    assert call[2] == [{"media_type": "image/png", "data": "iVBORw0KGgo="}]
    echo = await tab.wait_for("user_message")
    assert echo["images"] == [{"media_type": "image/png", "size": 12}]


async def test_duplicate_client_msg_id_is_dropped(server):
    tab = await server.tab()
    for _ in range(3):
        await tab.send({"type": "user_message", "content": "once", "client_msg_id": "same"})
    await server.backend.wait_call("send_user_message", 1)
    server.backend.reply("ok")  # or the next would wait in the queue (follow_ups.py)
    await tab.send({"type": "user_message", "content": "twice", "client_msg_id": "other"})
    await server.backend.wait_call("send_user_message", 2)
    await tab.drain()
    assert [c[1] for c in server.backend.calls_named("send_user_message")] == ["once", "twice"]
    echoes = [m["content"] for m in tab.received if m["type"] == "user_message"]
    assert echoes == ["once", "twice"]
    # Another tab re-sending the same id (a reconnect) is dropped too.
    tab2 = await server.tab()
    await tab2.send({"type": "user_message", "content": "once", "client_msg_id": "same"})
    await tab2.drain()
    assert len(server.backend.calls_named("send_user_message")) == 2


@pytest.mark.parametrize("raw, needle", [
    ("this is not json", "JSON"),
    ('{"type": "bogus"}', "unknown message type"),
    ('{"content": "no type"}', "unknown message type"),
    ("[1, 2, 3]", ""),
    ("42", ""),
    ('{"type": "user_message"}', "content"),
    ('{"type": "user_message", "content": 5}', "content"),
    ('{"type": "permission_response", "behavior": "allow"}', "request_id"),
    ('{"type": "permission_response", "request_id": "r", "behavior": "maybe"}', "behavior"),
    ('{"type": "session_subscribe"}', "last_seq"),
    ('{"type": "session_subscribe", "last_seq": -1}', "last_seq"),
    ('{"type": "set_model", "model": ""}', "model"),
    ('{"type": "user_message", "content": "x", "images": [{"media_type": "image/bmp", '
     '"data": "AA=="}]}', "media_type"),
    ('{"type": "viewer_action_response", "request_id": "x"}', "result"),
])
async def test_malformed_messages_get_an_error_and_the_socket_lives(server, raw, needle):
    tab = await server.tab()
    await tab.send_raw(raw)
    error = await tab.wait_for("error")
    assert "seq" not in error  # a reply to this tab, not a broadcast
    assert error["code"] == "bad_message"
    assert needle in error["message"]
    assert server.backend.calls_named("send_user_message") == []
    await tab.send({"type": "user_message", "content": "still here"})
    (call,) = await server.backend.wait_call("send_user_message")
    assert call[1] == "still here"


async def test_an_error_reply_goes_only_to_the_tab_that_erred(server):
    tab1 = await server.tab()
    tab2 = await server.tab()
    await tab1.send_raw("{")
    await tab1.wait_for("error")
    assert await tab2.drain() == []


async def test_several_messages_in_one_frame_are_all_handled(server):
    tab = await server.tab()
    await tab.send_raw("\n".join(json.dumps({"type": "user_message", "content": f"m{i}"})
                                 for i in range(3)) + "\n")
    # The first starts a turn; the others wait in the queue (follow_ups.py), one a turn.
    for count in (1, 2, 3):
        await server.backend.wait_call("send_user_message", count)
        server.backend.reply("ok")
    assert [c[1] for c in server.backend.calls_named("send_user_message")] == ["m0", "m1", "m2"]


async def test_empty_message_is_refused(server):
    tab = await server.tab()
    await tab.send({"type": "user_message", "content": "   "})
    error = await tab.wait_for("error")
    assert "empty" in error["message"]
    assert server.backend.calls_named("send_user_message") == []


PERMISSION = {
    "type": "permission_request",
    "request": {"request_id": "req-1", "tool_name": "Bash", "input": {"command": "ls"},
                "description": "list files", "tool_use_id": "toolu_1"},
}


async def test_permission_request_reaches_all_tabs_and_allow_is_answered(server):
    tab1 = await server.tab()
    tab2 = await server.tab()
    server.backend.emit(json.loads(json.dumps(PERMISSION)))
    for tab in (tab1, tab2):
        request = await tab.wait_for("permission_request")
        assert request["request"] == PERMISSION["request"]
    await tab2.send({"type": "permission_response", "request_id": "req-1", "behavior": "allow"})
    (call,) = await server.backend.wait_call("answer_permission")
    # Allowed without changes: the original input goes back.
    assert call[1:] == ("req-1", "allow", {"command": "ls"}, None)
    for tab in (tab1, tab2):
        cancelled = await tab.wait_for("permission_cancelled")
        assert cancelled["request_id"] == "req-1"
    # Answering again: the request is no longer pending.
    await tab1.send({"type": "permission_response", "request_id": "req-1", "behavior": "deny"})
    error = await tab1.wait_for("error")
    assert error["code"] == "unknown_request"
    assert len(server.backend.calls_named("answer_permission")) == 1


async def test_permission_allow_with_updated_input_and_deny_with_message(server):
    tab = await server.tab()
    for i in (2, 3):
        request = json.loads(json.dumps(PERMISSION))
        request["request"]["request_id"] = f"req-{i}"
        server.backend.emit(request)
        await tab.wait_for("permission_request")
    await tab.send({"type": "permission_response", "request_id": "req-2", "behavior": "allow",
                    "updated_input": {"command": "ls -la"}})
    await tab.send({"type": "permission_response", "request_id": "req-3", "behavior": "deny",
                    "message": "not now"})
    calls = await server.backend.wait_call("answer_permission", 2)
    assert calls[0][1:] == ("req-2", "allow", {"command": "ls -la"}, None)
    assert calls[1][1:] == ("req-3", "deny", None, "not now")


async def test_permission_response_for_an_unknown_request_is_an_error(server):
    tab = await server.tab()
    await tab.send({"type": "permission_response", "request_id": "nope", "behavior": "allow"})
    error = await tab.wait_for("error")
    assert error["code"] == "unknown_request" and "nope" in error["message"]
    assert server.backend.calls_named("answer_permission") == []


async def test_pending_permission_is_shown_to_a_tab_that_connects_later(server):
    server.backend.emit(json.loads(json.dumps(PERMISSION)))
    tab = await server.tab(subscribe=False)
    history = await tab.subscribe(0)
    assert [p["request"]["request_id"] for p in history["pending_permissions"]] == ["req-1"]


async def test_interrupt_and_set_model_reach_the_backend(server):
    tab1 = await server.tab()
    tab2 = await server.tab()
    await tab1.send({"type": "interrupt"})
    await server.backend.wait_call("interrupt")
    await tab1.send({"type": "set_model", "model": "claude-haiku-4-5"})
    (call,) = await server.backend.wait_call("set_model")
    assert call[1] == "claude-haiku-4-5"
    update = await tab2.wait_for("session_update")
    assert update["updates"] == {"model": "claude-haiku-4-5"}
    response = await server.get("/api/session")
    assert (await response.json())["model"] == "claude-haiku-4-5"


async def test_without_an_agent_the_chat_says_why(make_server):
    server = await make_server(backend="none")
    assert server.session.backend is None
    tab = await server.tab(subscribe=False)
    init = tab.received[0]
    assert "agent" in init["session"]["no_agent_reason"]
    await tab.subscribe(0)
    await tab.send({"type": "user_message", "content": "hello?"})
    echo = await tab.wait_for("user_message")
    assert echo["content"] == "hello?"
    error = await tab.wait_for("error")
    assert error["code"] == "no_agent"
    assert "agent" in error["message"] and "--backend" in error["message"]
    # The status never claims the agent is running.
    assert not [m for m in tab.received if m.get("status") == "running"]
    for kind in ({"type": "interrupt"}, {"type": "set_model", "model": "x"}):
        await tab.send(kind)
        error = await tab.wait_for("error")
        assert error["code"] == "no_agent"
    tab2 = await server.tab(subscribe=False)
    await tab2.subscribe(0)
    await tab2.send({"type": "permission_response", "request_id": "r", "behavior": "allow"})
    assert (await tab2.wait_for("error"))["code"] == "unknown_request"


async def test_every_tab_receives_every_broadcast_in_the_same_order(server):
    tabs = [await server.tab() for _ in range(4)]
    for i in range(200):
        kind = i % 4
        if kind == 0:
            server.backend.emit({"type": "stream_event", "event": {"i": i}})
        elif kind == 1:
            server.backend.emit({"type": "content_update",
                                 "files": [{"path": "theme.css", "content": str(i),
                                            "origin": "external"}]})
        elif kind == 2:
            await tabs[i % len(tabs)].send({"type": "user_message", "content": f"u{i}"})
        else:
            server.backend.emit({"type": "assistant",
                                 "message": {"id": f"m{i}", "role": "assistant",
                                             "content": [{"type": "text", "text": str(i)}]}})
        if i % 17 == 0:
            await asyncio.sleep(0)
    # The first starts a turn; the 49 others are queued (follow_ups.py).
    await server.backend.wait_call("send_user_message", 1)

    async def all_handled() -> None:
        while len(server.session.follow_ups) < 49:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(all_handled(), 10)
    final = server.session.seq
    for tab in tabs:
        while tab.last_seq < final:
            await tab.recv()
    reference = tabs[0].broadcasts()
    assert [m["seq"] for m in reference] == list(range(1, final + 1))
    for tab in tabs[1:]:
        assert tab.broadcasts() == reference


async def test_assistant_blocks_with_the_same_id_are_merged_never_duplicated(server):
    tab = await server.tab()
    text = {"type": "text", "text": "Let me look."}
    tool = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}
    tool_full = {"type": "tool_use", "id": "toolu_1", "name": "Read",
                 "input": {"file_path": "theme.css"}}

    def assistant(*blocks):
        return {"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
                                                 "content": list(blocks), "stop_reason": None}}

    server.backend.emit(assistant(text))
    server.backend.emit(assistant(tool))
    server.backend.emit(assistant(text))  # the same block again
    server.backend.emit(assistant(tool_full))  # the same block, completed
    server.backend.emit(assistant(text, tool_full))  # everything at once
    server.backend.emit({"type": "assistant", "message": {"id": "msg_2", "role": "assistant",
                                                          "content": [{"type": "text",
                                                                       "text": "Done."}]}})
    received = [await tab.wait_for("assistant") for _ in range(6)]
    for message in received:
        blocks = [json.dumps(b, sort_keys=True) for b in message["message"]["content"]]
        assert len(blocks) == len(set(blocks)), message
        ids = [b.get("id") for b in message["message"]["content"] if b.get("id")]
        assert len(ids) == len(set(ids)), message
    assert [m["message"]["content"] for m in received[:5]] == [
        [text], [text, tool], [text, tool], [text, tool_full], [text, tool_full]]
    history = [m for m in server.session.history if m["type"] == "assistant"]
    assert [m["message"]["id"] for m in history] == ["msg_1", "msg_2"]
    assert history[0]["message"]["content"] == [text, tool_full]
    fresh = await server.tab(subscribe=False)
    replay = await fresh.subscribe(0)
    shown = [m for m in replay["messages"] if m["type"] == "assistant"]
    assert shown[0]["message"]["content"] == [text, tool_full]
    assert len(shown) == 2


async def test_session_ack_and_binary_frames(server):
    tab = await server.tab()
    await tab.send({"type": "session_ack", "last_seq": 0})
    await tab.ws.send_bytes(b"\x00\x01")
    error = await tab.wait_for("error")
    assert "binary" in error["message"]
    await tab.send({"type": "interrupt"})
    await server.backend.wait_call("interrupt")
