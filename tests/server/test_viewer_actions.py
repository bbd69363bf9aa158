"""``POST /api/viewer/action`` → ``viewer_action_request`` → first
``viewer_action_response`` → HTTP result (viewer contract §4)."""

from __future__ import annotations

import asyncio


async def post_action(server, body, **kwargs):
    response = await server.post("/api/viewer/action", json=body, **kwargs)
    return response.status, await response.json()


async def test_the_first_answer_is_the_http_result(server):
    tab1 = await server.tab()
    tab2 = await server.tab()
    call = asyncio.ensure_future(post_action(
        server, {"actionId": "navigate-to", "params": {"file": "slides/02-problem.html"}}))
    request1 = await tab1.wait_for("viewer_action_request")
    request2 = await tab2.wait_for("viewer_action_request")
    assert request1 == request2
    assert request1["action_id"] == "navigate-to"
    assert request1["params"] == {"file": "slides/02-problem.html"}
    assert isinstance(request1["seq"], int)
    request_id = request1["request_id"]
    await tab2.send({"type": "viewer_action_response", "request_id": request_id,
                     "result": {"success": True, "message": "showing slide 2",
                                "data": {"index": 1}}})
    status, body = await asyncio.wait_for(call, 3)
    assert status == 200
    assert body == {"success": True, "message": "showing slide 2", "data": {"index": 1}}
    # A later answer is ignored, harmlessly.
    await tab1.send({"type": "viewer_action_response", "request_id": request_id,
                     "result": {"success": False, "message": "late"}})
    await tab1.send({"type": "interrupt"})
    await server.backend.wait_call("interrupt")
    assert not [m for m in tab1.received if m["type"] == "error"]
    assert server.session.viewer_actions.pending_count == 0


async def test_concurrent_actions_are_answered_independently(server):
    tab = await server.tab()
    calls = [asyncio.ensure_future(post_action(server, {"actionId": "describe-view"}))
             for _ in range(3)]
    requests = [await tab.wait_for("viewer_action_request") for _ in range(3)]
    assert len({r["request_id"] for r in requests}) == 3
    for i, request in reversed(list(enumerate(requests))):
        await tab.send({"type": "viewer_action_response", "request_id": request["request_id"],
                        "result": {"success": True, "data": {"n": i}}})
    results = await asyncio.wait_for(asyncio.gather(*calls), 3)
    assert sorted(body["data"]["n"] for _, body in results) == [0, 1, 2]


async def test_unknown_action_is_400_before_any_tab_hears_of_it(server):
    tab = await server.tab()
    seq = server.session.seq
    status, body = await post_action(server, {"actionId": "self-destruct"})
    assert status == 400
    assert body["error"]["code"] == "E_BAD_ARGS"
    assert body["error"]["details"]["reason"] == "unknown_action"
    assert "navigate-to" in body["error"]["details"]["actions"]
    assert "self-destruct" in body["error"]["message"]
    assert "navigate-to" in body["error"]["message"]  # says which actions exist
    assert server.session.seq == seq
    assert await tab.drain() == []


async def test_action_instead_of_action_id_is_400_with_a_hint(server):
    await server.tab()
    status, body = await post_action(server, {"action": "navigate-to",
                                              "params": {"file": "slides/01-title.html"}})
    assert status == 400
    assert "actionId" in body["error"]["message"]
    assert "'action'" in body["error"]["message"]
    status, body = await post_action(server, {})
    assert status == 400 and "actionId" in body["error"]["message"]


async def test_bad_params_are_400(server):
    tab = await server.tab()
    seq = server.session.seq
    cases = [
        ({"actionId": "navigate-to"}, "file"),
        ({"actionId": "navigate-to", "params": {}}, "file"),
        ({"actionId": "navigate-to", "params": {"file": 3}}, "string"),
        ({"actionId": "navigate-to", "params": {"file": "a", "zoom": 2}}, "zoom"),
        ({"actionId": "checkContentFit", "params": {"slides": "all"}}, "array"),
        ({"actionId": "navigate-to", "params": ["slides/01-title.html"]}, "params"),
    ]
    for body, needle in cases:
        status, reply = await post_action(server, body)
        assert status == 400, body
        assert reply["error"]["code"] == "E_BAD_ARGS", reply
        assert needle in reply["error"]["message"], (body, reply)
    response = await server.post("/api/viewer/action", data="{oops",
                                 headers={"Content-Type": "application/json"})
    assert response.status == 400
    assert server.session.seq == seq
    assert await tab.drain() == []


async def test_no_browser_connected_is_a_clear_error(make_server, monkeypatch):
    # Without the headless viewer (tests/headless_viewer/ has it answer instead).
    monkeypatch.setenv("PNEUMA_HEADLESS_VIEWER", "0")
    server = await make_server()
    status, body = await post_action(server, {"actionId": "describe-view"})
    assert status == 503
    assert body["error"]["code"] == "E_UNAVAILABLE"
    assert body["error"]["details"] == {"reason": "no_browser"}
    assert "Pneuma page" in body["error"]["hint"]
    # An agent that reads the action answer's shape sees the failure too.
    assert body["success"] is False
    assert "no browser connected" in body["message"].lower()
    assert body["message"] == body["error"]["message"]
    # A tab that connected but never subscribed cannot answer either.
    await server.tab(subscribe=False)
    status, body = await post_action(server, {"actionId": "describe-view"})
    assert status == 503 and body["error"]["code"] == "E_UNAVAILABLE"


async def test_a_browser_that_does_not_answer_times_out_with_504(server):
    tab = await server.tab()
    status, body = await post_action(server, {"actionId": "describe-view"},
                                     params={"timeout": "0.2"})
    assert status == 504
    assert body["error"]["code"] == "E_TIMEOUT" and body["error"]["recoverable"] is True
    assert body["success"] is False
    assert "timed out" in body["message"] and "describe-view" in body["message"]
    request = await tab.wait_for("viewer_action_request")
    # Answering after the timeout changes nothing and breaks nothing.
    await tab.send({"type": "viewer_action_response", "request_id": request["request_id"],
                    "result": {"success": True}})
    assert server.session.viewer_actions.pending_count == 0


async def test_the_configured_timeout_applies(make_server):
    server = await make_server(action_timeout=0.2)
    await server.tab()
    loop = asyncio.get_running_loop()
    started = loop.time()
    status, body = await post_action(server, {"actionId": "describe-view"})
    assert status == 504
    assert loop.time() - started < 2
    status, _ = await post_action(server, {"actionId": "describe-view"},
                                  params={"timeout": "soon"})
    assert status == 400
