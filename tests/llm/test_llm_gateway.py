"""The host's one LLM gateway against a fake Messages API on 127.0.0.1."""

from __future__ import annotations

import socket

import pytest

from pneuma.api import GatewayError, LLMGateway, LLMSettings, ToolCallResult
from pneuma.llm import has_credentials
from tests.fakes.anthropic_api import FakeAnthropicAPI, text, tool_use

PLAN_TOOL = {
    "name": "post_plan",
    "description": "Post the plan.",
    "input_schema": {
        "type": "object",
        "properties": {"goal": {"type": "string"}, "steps": {"type": "array", "items": {"type": "string"}}},
        "required": ["goal"],
    },
}


@pytest.fixture
async def fake_api():
    async with FakeAnthropicAPI() as api:
        yield api


@pytest.fixture
async def gateway(fake_api):
    settings = LLMSettings(model="claude-fake-1", max_tokens=1024, retry_base_delay=0.01)
    gateway = LLMGateway(settings, {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.base_url})
    yield gateway
    await gateway.close()


async def test_a_forced_tool_call_returns_its_input_and_streams_deltas(gateway, fake_api):
    plan = {"goal": "tighten the introduction", "steps": ["cut the second paragraph", "merge 3 and 4"]}
    fake_api.push(text("Here is the plan."), tool_use("post_plan", plan))
    deltas: list[tuple[str, str]] = []

    result = await gateway.call_tool(system="You plan edits.", prompt="Plan the intro.",
                                     tool=PLAN_TOOL, on_delta=lambda kind, s: deltas.append((kind, s)))

    assert isinstance(result, ToolCallResult)
    assert result.input == plan
    assert result.text == "Here is the plan."
    assert result.model == "claude-fake-1" and result.stop_reason == "tool_use"
    assert result.input_tokens > 0 and result.output_tokens > 0 and result.duration_ms >= 0
    # The text and the tool's JSON arrived in pieces, in order, as they streamed.
    assert "".join(s for kind, s in deltas if kind == "text") == "Here is the plan."
    json_parts = [s for kind, s in deltas if kind == "json"]
    assert len(json_parts) > 1 and "".join(json_parts).replace(" ", "") == (
        '{"goal":"tightentheintroduction","steps":["cutthesecondparagraph","merge3and4"]}')
    # What went to the API: the system prompt, the prompt, the tool, forced.
    sent = fake_api.requests[-1]
    assert sent["system"] == "You plan edits."
    assert sent["messages"] == [{"role": "user", "content": "Plan the intro."}]
    assert sent["tools"] == [PLAN_TOOL]
    assert sent["tool_choice"] == {"type": "tool", "name": "post_plan"}
    assert sent["model"] == "claude-fake-1" and sent["max_tokens"] == 1024
    assert "temperature" not in sent


async def test_settings_of_one_call_pick_the_model_sent_to_the_api(gateway, fake_api):
    fake_api.push(tool_use("post_plan", {"goal": "a"}))
    fake_api.push(tool_use("post_plan", {"goal": "b"}))
    reasoning = LLMSettings(model="claude-fake-reasoning", max_tokens=333, temperature=0.2)

    first = await gateway.call_tool(system="s", prompt="p", tool=PLAN_TOOL, settings=reasoning)
    second = await gateway.call_tool(system="s", prompt="p", tool=PLAN_TOOL)

    assert (first.model, first.input) == ("claude-fake-reasoning", {"goal": "a"})
    assert (second.model, second.input) == ("claude-fake-1", {"goal": "b"})
    sent = fake_api.requests[-2:]
    assert [(r["model"], r["max_tokens"], r.get("temperature")) for r in sent] == [
        ("claude-fake-reasoning", 333, 0.2), ("claude-fake-1", 1024, None)]


async def test_a_server_error_is_a_gateway_error(gateway, fake_api):
    fake_api.fail_always(500, "api_error", "the fake is down")
    with pytest.raises(GatewayError) as caught:
        await gateway.call_tool(system="s", prompt="p", tool=PLAN_TOOL,
                                settings=LLMSettings(model="claude-fake-1", max_retries=1,
                                                     retry_base_delay=0.01))
    assert caught.value.status == 500 and "the fake is down" in str(caught.value)
    # One try and one retry, then it gave up.
    assert len(fake_api.requests) == 2


async def test_a_refused_key_is_not_retried(gateway, fake_api):
    fake_api.push_error(401, "authentication_error", "invalid x-api-key")
    with pytest.raises(GatewayError) as caught:
        await gateway.call_tool(system="s", prompt="p", tool=PLAN_TOOL)
    assert (caught.value.status, caught.value.kind) == (401, "auth_failed")
    assert len(fake_api.requests) == 1


async def test_a_model_that_does_not_call_the_tool_is_a_gateway_error(gateway, fake_api):
    fake_api.push(text("I would rather not."))
    with pytest.raises(GatewayError) as caught:
        await gateway.call_tool(system="s", prompt="p", tool=PLAN_TOOL)
    assert caught.value.kind == "no_tool_call"
    assert "post_plan" in str(caught.value) and "I would rather not." in str(caught.value)


async def test_a_refused_connection_is_a_gateway_error():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    gateway = LLMGateway(LLMSettings(model="claude-fake-1", max_retries=0,
                                     base_url=f"http://127.0.0.1:{port}"),
                         {"ANTHROPIC_API_KEY": "test-key"})
    try:
        with pytest.raises(GatewayError) as caught:
            await gateway.call_tool(system="s", prompt="p", tool=PLAN_TOOL)
    finally:
        await gateway.close()
    assert caught.value.kind == "connection_error" and caught.value.status is None


async def test_stream_chat_reports_retries_then_the_message(gateway, fake_api):
    fake_api.push_error(529, "overloaded_error", "busy")
    fake_api.push(text("Hello"), tool_use("post_plan", {"goal": "x"}))
    events = [e async for e in gateway.stream_chat([{"role": "user", "content": "hi"}], [PLAN_TOOL],
                                                   {"system": "be brief"})]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "retry" and events[0]["status"] == 529
    assert "".join(e["content"] for e in events if e["type"] == "delta") == "Hello"
    call = next(e for e in events if e["type"] == "tool_call")
    assert (call["name"], call["arguments"]) == ("post_plan", {"goal": "x"})
    done = events[-1]
    assert done["type"] == "done" and done["message"]["stop_reason"] == "tool_use"
    assert done["cost_usd"] > 0


def test_the_key_comes_from_the_variable_the_settings_name():
    named = LLMSettings(api_key_env="MY_PAPER_KEY")
    assert has_credentials(named, {"MY_PAPER_KEY": "k"})
    assert not has_credentials(named, {"ANTHROPIC_API_KEY": "k"})
    assert has_credentials(LLMSettings(), {"ANTHROPIC_AUTH_TOKEN": "t"})
    assert not has_credentials(LLMSettings(), {})
    assert LLMGateway(named, {"MY_PAPER_KEY": "k"}).has_credentials()


async def test_a_profile_with_another_endpoint_is_sent_there(gateway, fake_api):
    async with FakeAnthropicAPI() as other:
        other.push(tool_use("post_plan", {"goal": "elsewhere"}))
        result = await gateway.call_tool(system="s", prompt="p", tool=PLAN_TOOL,
                                         settings=LLMSettings(model="m-2", base_url=other.base_url))
        assert result.input == {"goal": "elsewhere"}
        assert [r["model"] for r in other.requests] == ["m-2"] and fake_api.requests == []


async def test_an_unknown_provider_is_refused(gateway):
    with pytest.raises(GatewayError) as caught:
        await gateway.call_tool(system="s", prompt="p", tool=PLAN_TOOL,
                                settings=LLMSettings(provider="elsewhere"))
    assert caught.value.kind == "unsupported_provider"
