"""The native runtime on the gateway's openai provider: a whole turn with a
tool call against the fake Chat Completions server, and what the chat says
when the provider's settings or key are missing."""

from __future__ import annotations

import json

import pytest

from pneuma.agents.native.config import NativeConfig
from tests.fakes.openai_chat import FakeOpenAIChat, text, tool_call


@pytest.fixture
async def openai_api():
    async with FakeOpenAIChat(require_key="sk-qwen") as api:
        yield api


def openai_env(api: FakeOpenAIChat, **extra: str) -> dict[str, str]:
    return {"PNEUMA_NATIVE_PROVIDER": "openai", "PNEUMA_NATIVE_BASE_URL": api.base_url,
            "PNEUMA_NATIVE_MODEL": "qwen-plus", "PNEUMA_NATIVE_API_KEY_ENV": "DASHSCOPE_API_KEY",
            "DASHSCOPE_API_KEY": "sk-qwen", **extra}


async def test_a_turn_with_a_tool_call_completes_through_the_openai_provider(make_native, fake_api, openai_api):
    server = await make_native(env=openai_env(openai_api))
    tab = await server.tab()
    openai_api.push(tool_call("workspace_write_file", {"path": "notes/plan.md", "content": "# Plan\n"}, id="call_w1"))
    openai_api.push(text("Wrote the plan."))
    await server.say(tab, "write a plan")
    result = await tab.wait_for("result", 10)

    assert result["data"]["is_error"] is False and result["data"]["result"] == "Wrote the plan."
    assert (server.workspace / "notes" / "plan.md").read_text() == "# Plan\n"
    tool_result = next(m for m in tab.broadcasts() if m["type"] == "tool_result")
    assert tool_result["tool_use_id"] == "call_w1" and tool_result["is_error"] is False
    # The browser saw the usual Messages-API stream events, the text streaming in pieces.
    deltas = [m["event"]["delta"]["text"] for m in tab.broadcasts() if m["type"] == "stream_event"
              and m["event"]["type"] == "content_block_delta" and m["event"]["delta"]["type"] == "text_delta"]
    assert len(deltas) > 1 and "".join(deltas) == "Wrote the plan."
    assert [m["task"]["status"] for m in tab.broadcasts() if m["type"] == "task_update"] == [
        "created", "running", "completed"]
    # The OpenAI-compatible server got both calls, with the key and the tool's answer; Anthropic got nothing.
    assert fake_api.requests == []
    first, second = openai_api.requests
    assert openai_api.keys == ["Bearer sk-qwen", "Bearer sk-qwen"]
    assert first["model"] == "qwen-plus" and first["messages"][0]["role"] == "system"
    assert "You run inside Pneuma's own agent runtime" in first["messages"][0]["content"]
    assert any(t["function"]["name"] == "workspace_write_file" for t in first["tools"])
    assert second["messages"][-2]["tool_calls"][0]["id"] == "call_w1"
    assert second["messages"][-1]["role"] == "tool" and second["messages"][-1]["tool_call_id"] == "call_w1"
    assert "notes/plan.md" in second["messages"][-1]["content"]
    assert server.backend.store.total_usage(server.session.id)["output_tokens"] > 0
    await server.close()


async def test_a_missing_key_is_named_in_the_chat_and_nothing_is_sent(make_native, openai_api, capsys):
    env = openai_env(openai_api)
    del env["DASHSCOPE_API_KEY"]
    server = await make_native(env=env)
    assert "DASHSCOPE_API_KEY" in capsys.readouterr().err
    tab = await server.tab()
    await server.say(tab, "hi")
    result = await tab.wait_for("result", 5)
    assert result["data"]["is_error"] is True
    assert "DASHSCOPE_API_KEY" in result["data"]["result"] and openai_api.base_url in result["data"]["result"]
    assert openai_api.requests == []
    await server.close()


async def test_the_openai_provider_without_a_model_says_to_name_one(make_native, openai_api):
    env = openai_env(openai_api)
    del env["PNEUMA_NATIVE_MODEL"]
    server = await make_native(env={**env, "PNEUMA_NATIVE_MODEL": ""})
    tab = await server.tab()
    await server.say(tab, "hi")
    result = await tab.wait_for("result", 5)
    assert result["data"]["is_error"] is True and "model is empty" in result["data"]["result"]
    assert openai_api.requests == []
    await server.close()


def test_native_json_takes_the_provider_settings(tmp_path):
    (tmp_path / ".pneuma").mkdir()
    (tmp_path / ".pneuma" / "native.json").write_text(json.dumps(
        {"provider": "OpenAI", "baseUrl": "http://127.0.0.1:11434/v1", "model": "llama3.1"}))
    settings = NativeConfig.load(tmp_path, env={}).llm_settings()
    assert (settings.provider, settings.base_url, settings.model, settings.api_key_env) == (
        "openai", "http://127.0.0.1:11434/v1", "llama3.1", None)
    # No model named for another provider: not the Claude default, but nothing (an error to fix).
    (tmp_path / ".pneuma" / "native.json").write_text(json.dumps({"provider": "openai"}))
    assert NativeConfig.load(tmp_path, env={"ANTHROPIC_MODEL": "claude-x"}).model == ""
    # An existing config (no provider) still means Anthropic.
    (tmp_path / ".pneuma" / "native.json").write_text(json.dumps({"maxTurns": 3}))
    assert NativeConfig.load(tmp_path, env={}).llm_settings().provider == "anthropic"
