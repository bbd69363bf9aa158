"""Plain chat turns, retries, the missing key, and a restart that continues."""

from __future__ import annotations

from pneuma.agents.native.orchestrator import normalise_conversation
from pneuma.agents.native.state import InvalidTransition, Task, TaskStatus
from pneuma.agents.native.store import SessionStore
from tests.fakes.anthropic_api import text, tool_use


async def test_a_chat_turn_streams_and_completes_a_task(make_native, fake_api):
    server = await make_native()
    tab = await server.tab()
    fake_api.push(text("Hello! Shall we start a deck?"))
    await server.say(tab, "hi")
    result = await tab.wait_for("result", 5)
    assert result["data"]["result"] == "Hello! Shall we start a deck?"
    kinds = [m["type"] for m in tab.broadcasts()]
    assert kinds.index("stream_event") < kinds.index("assistant") < kinds.index("result")
    deltas = "".join(m["event"]["delta"]["text"] for m in tab.broadcasts()
                     if m["type"] == "stream_event" and m["event"]["type"] == "content_block_delta")
    assert deltas == "Hello! Shall we start a deck?"
    assert [m["task"]["status"] for m in tab.broadcasts() if m["type"] == "task_update"] == [
        "created", "running", "completed"]
    request = fake_api.conversation_requests()[0]
    assert request["model"] == "claude-fake-1" and request["stream"] is True
    assert "You run inside Pneuma's own agent runtime" in request["system"]
    assert server.backend.store.total_usage(server.session.id)["output_tokens"] == 5
    await server.close()


async def test_workspace_tools_and_retries_on_429(make_native, fake_api):
    server = await make_native()
    tab = await server.tab()
    fake_api.push_error(429, "rate_limit_error", "slow down")
    fake_api.push(tool_use("workspace_write_file", {"path": "notes/plan.md", "content": "# Plan\n"}))
    fake_api.push(text("Wrote the plan."))
    await server.say(tab, "write a plan")
    result = await tab.wait_for("result", 5)
    assert result["data"]["is_error"] is False
    assert (server.workspace / "notes" / "plan.md").read_text() == "# Plan\n"
    retry = next(m for m in tab.broadcasts() if m["type"] == "error")
    assert retry["code"] == "api_retry" and "429" in retry["message"]
    tool_result = next(m for m in tab.broadcasts() if m["type"] == "tool_result")
    assert tool_result["is_error"] is False and "notes/plan.md" in tool_result["content"]
    await server.close()


async def test_a_401_ends_the_task_with_the_reason(make_native, fake_api):
    server = await make_native()
    tab = await server.tab()
    fake_api.push_error(401, "authentication_error", "invalid x-api-key")
    await server.say(tab, "hi")
    result = await tab.wait_for("result", 5)
    assert result["data"]["is_error"] is True
    error = next(m for m in tab.broadcasts() if m["type"] == "error")
    assert error["code"] == "auth_failed" and "invalid x-api-key" in error["message"]
    await server.close()


async def test_without_a_key_the_chat_says_so(make_native, fake_api, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    server = await make_native(key=False)
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err
    tab = await server.tab()
    history = [m for m in server.session.history if m["type"] == "error"]
    assert history and history[0]["code"] == "no_api_key"
    await server.say(tab, "hi")
    result = await tab.wait_for("result", 5)
    assert result["data"]["is_error"] is True and "ANTHROPIC_API_KEY" in result["data"]["result"]
    assert fake_api.requests == []
    await server.close()


async def test_a_restart_resumes_the_task_list_and_the_conversation(make_native, fake_api, tmp_path):
    workspace = tmp_path / "kept"
    server = await make_native(workspace=workspace, session_id="s-kept")
    tab = await server.tab()
    fake_api.push(text("First answer."))
    await server.say(tab, "first question")
    await tab.wait_for("result", 5)
    first_task = (await server.get_json("/api/tasks"))[1]["tasks"][0]
    await server.close()

    # A task some earlier run left waiting.
    store = SessionStore.for_workspace(workspace.resolve())
    stuck = Task(id="task_stuck", session_id="s-kept", title="stuck")
    stuck.move(TaskStatus.WAITING_FOR_BROWSER_SELECTION)
    store.save_task(stuck)
    store.set_selected_client("s-kept", "chromium-old")
    store.close()

    server = await make_native(workspace=workspace, session_id="s-kept")
    status, listing = await server.get_json("/api/tasks")
    assert [(t["id"], t["status"]) for t in listing["tasks"]] == [
        (first_task["id"], "completed"), ("task_stuck", "error")]
    assert "waiting_for_browser_selection" in listing["tasks"][1]["error"]
    assert (await server.get_json("/api/extension/extension-list"))[1]["selectedClientId"] == "chromium-old"
    tab = await server.tab()
    fake_api.push(text("Second answer."))
    await server.say(tab, "second question")
    await tab.wait_for("result", 5)
    messages = fake_api.conversation_requests()[-1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"][0]["text"] == "first question"
    assert messages[1]["content"][0]["text"] == "First answer."
    await server.close()


def test_state_machine_refuses_impossible_moves():
    task = Task(id="t", session_id="s")
    task.move(TaskStatus.RUNNING)
    task.move(TaskStatus.COMPLETED)
    try:
        task.move(TaskStatus.WAITING_FOR_BROWSER_SELECTION)
        task.move(TaskStatus.CREATED)
    except InvalidTransition:
        pass
    else:
        raise AssertionError("moving back to created must fail")
    assert task.history == ["created", "running", "completed", "waiting_for_browser_selection"]


def test_conversation_is_repaired_for_the_api():
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "a"}]},
        {"role": "user", "content": [{"type": "text", "text": "b"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "c"}]},
    ]
    fixed = normalise_conversation(messages, 100)
    assert [m["role"] for m in fixed] == ["user", "assistant", "user"]
    assert len(fixed[0]["content"]) == 2
    assert fixed[2]["content"][0]["type"] == "tool_result" and fixed[2]["content"][0]["tool_use_id"] == "t1"
