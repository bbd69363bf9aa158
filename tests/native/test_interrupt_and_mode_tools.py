"""Interrupting a native turn mid-stream, and a mode's own tool (webgal,
through pneuma.tools.runtime) called by the model inside the loop."""

from __future__ import annotations

import asyncio

from tests.fakes.anthropic_api import text, tool_use


async def _until(predicate, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_interrupt_cancels_the_stream_and_the_next_message_works(make_native, fake_api):
    server = await make_native()
    tab = await server.tab()
    story = "Once upon a time a deck of slides wanted to be a novel. " * 6
    fake_api.push(text(story, chunk=4), delay=0.05)  # ~85 deltas: about four seconds
    await server.say(tab, "tell me a long story")
    await tab.wait_for("stream_event", 5, lambda m: m["event"]["type"] == "content_block_delta")
    assert server.session.status == "running"
    await tab.send({"type": "interrupt"})

    result = await tab.wait_for("result", 3)
    assert result["data"]["subtype"] == "interrupted" and result["data"]["is_error"] is False
    idle = await tab.wait_for("status_change", 2)
    assert idle["status"] == "idle" and server.session.status == "idle"
    # The HTTP stream itself was dropped, not left to run to its end.
    await _until(lambda: fake_api.streams_aborted == 1, 3)
    assert fake_api.streams_finished == 0
    streamed = "".join(m["event"]["delta"]["text"] for m in tab.broadcasts()
                       if m["type"] == "stream_event" and m["event"]["type"] == "content_block_delta")
    assert 0 < len(streamed) < len(story)
    assert not [m for m in tab.broadcasts() if m["type"] == "assistant"]
    tasks = (await server.get_json("/api/tasks"))[1]["tasks"]
    assert [t["status"] for t in tasks] == ["ongoing"]

    # The next message is a normal turn, and the API gets a valid conversation.
    fake_api.push(text("Short version: the deck became a novel."))
    await server.say(tab, "shorter please")
    second = await tab.wait_for("result", 5)
    assert second["data"]["is_error"] is False
    assert second["data"]["result"] == "Short version: the deck became a novel."
    messages = fake_api.conversation_requests()[-1]["messages"]
    # The interrupted message stays its own, marked, not merged into the next (issue 25).
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    said = [[b["text"] for b in m["content"] if b["type"] == "text"] for m in messages]
    assert said[0] == ["tell me a long story"] and said[2] == ["shorter please"]
    assert "interrupted" in said[1][0]
    tasks = (await server.get_json("/api/tasks"))[1]["tasks"]
    assert [t["status"] for t in tasks] == ["ongoing", "completed"]
    await server.close()


async def test_interrupt_while_waiting_for_a_browser_ends_the_wait(make_native, fake_api):
    server = await make_native()
    tab = await server.tab()
    await server.say(tab, "Open http://127.0.0.1:9/somewhere")
    await tab.wait_for("browser_selection", 5, lambda m: m["status"] == "waiting")
    await tab.send({"type": "interrupt"})
    result = await tab.wait_for("result", 3)
    assert result["data"]["subtype"] == "interrupted"
    statuses = [m["task"]["status"] for m in tab.broadcasts() if m["type"] == "task_update"]
    assert statuses == ["created", "waiting_for_browser_selection", "ongoing"]
    assert server.backend.orchestrator._selection is None
    fake_api.push(text("Fine, no browser then."))
    await server.say(tab, "never mind")
    assert (await tab.wait_for("result", 5))["data"]["result"] == "Fine, no browser then."
    await server.close()


async def test_a_mode_tool_runs_inside_the_loop_and_its_result_goes_back(
        with_webgal, make_native, fake_api):
    server = await make_native(mode="webgal")
    tab = await server.tab()
    broken = "changeBg:no_such_bg.webp;\nWebGAL:Hello there\n"
    first = tool_use("list_files", {"path": "game/scene"})
    second = tool_use("validate_script", {"content": broken})
    fake_api.push(text("Let me look at the scenes."), first)
    fake_api.push(second)
    fake_api.push(text("Two problems: a missing background and a missing ';'."))
    await server.say(tab, "check my opening scene")
    result = await tab.wait_for("result", 15)
    assert result["data"]["is_error"] is False, result
    assert result["data"]["num_turns"] == 3

    # The tools were offered as the Messages API takes them.
    offered = {t["name"]: t for t in fake_api.conversation_requests()[0]["tools"]}
    assert {"list_files", "validate_script", "viewer__preview-scene"} <= set(offered)
    assert "workspace_read_file" not in offered  # the mode has file tools of its own
    validate = offered["validate_script"]["input_schema"]
    assert "oneOf" not in validate and "$schema" not in validate
    assert "exactly one of: path, content" in offered["validate_script"]["description"]

    # Each result went back to the model, answering its tool_use.
    results = {r["tool_use_id"]: r for r in fake_api.tool_results()}
    listing = results[first.id]
    assert listing["is_error"] is False and "start.txt" in listing["content"]
    check = results[second.id]
    assert check["is_error"] is False
    assert '"valid": false' in check["content"]
    assert "no_such_bg.webp" in check["content"] and '"kind": "syntax"' in check["content"]
    # The web UI's tool cards got the same results.
    shown = {m["tool_use_id"]: m for m in tab.broadcasts() if m["type"] == "tool_result"}
    assert "no_such_bg.webp" in shown[second.id]["content"]
    await server.close()


async def test_a_mode_tool_error_goes_back_to_the_model_as_an_error(
        with_webgal, make_native, fake_api):
    server = await make_native(mode="webgal")
    tab = await server.tab()
    bad = tool_use("validate_script", {"path": "game/scene/start.txt", "content": "x"})
    fake_api.push(bad)
    fake_api.push(text("I passed both; let me pass one."))
    await server.say(tab, "validate")
    assert (await tab.wait_for("result", 15))["data"]["is_error"] is False
    answer = {r["tool_use_id"]: r for r in fake_api.tool_results()}[bad.id]
    assert answer["is_error"] is True and "E_BAD_ARGS" in answer["content"]
    await server.close()
