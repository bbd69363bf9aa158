"""The gateway's openai provider (the official ``openai`` SDK, Chat
Completions) against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import socket

import pytest

from pneuma.api import GatewayError, LLMGateway, LLMSettings
from pneuma.llm import InvalidLLMSettings, credentials_problem, has_credentials
from pneuma.llm.openai_messages import chat_messages
from pneuma.llm.openai_provider import ChunkTranslator, OpenAIProvider
from pneuma.llm.provider import ChatRequest
from tests.fakes.openai_chat import TEXT_REPLY, FakeOpenAIChat, text, tool_call

WRITE_TOOL = {
    "name": "write_note",
    "description": "Write a note.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
                     "required": ["path", "text"]},
}


@pytest.fixture
async def fake():
    async with FakeOpenAIChat(require_key="sk-test") as api:
        yield api


def settings_for(fake: FakeOpenAIChat, **overrides) -> LLMSettings:
    values = {"provider": "openai", "model": "deepseek-chat", "base_url": fake.base_url,
              "api_key_env": "DEEPSEEK_API_KEY", "max_tokens": 512, "retry_base_delay": 0.01}
    return LLMSettings(**{**values, **overrides})


@pytest.fixture
async def gateway(fake):
    gateway = LLMGateway(settings_for(fake), {"DEEPSEEK_API_KEY": "sk-test"})
    yield gateway
    await gateway.close()


async def test_text_streams_in_deltas_and_ends_in_one_message(gateway, fake):
    events = [e async for e in gateway.stream_chat([{"role": "user", "content": "hi"}], [],
                                                   {"system": "be brief"})]
    deltas = [e["content"] for e in events if e["type"] == "delta"]
    assert len(deltas) > 1 and "".join(deltas) == TEXT_REPLY
    # The browser gets Messages-API stream events, whatever the provider.
    raw = [e["event"]["type"] for e in events if e["type"] == "stream_event"]
    assert raw[0] == "message_start" and raw[-2:] == ["message_delta", "message_stop"]
    done = events[-1]
    assert done["type"] == "done"
    assert done["message"]["content"] == [{"type": "text", "text": TEXT_REPLY}]
    assert done["message"]["stop_reason"] == "end_turn" and done["message"]["model"] == "deepseek-chat"
    assert done["usage"]["input_tokens"] > 0 and done["usage"]["output_tokens"] > 0
    assert done["cost_usd"] == 0.0  # no price is known for deepseek-chat; none is guessed
    # What the server got: the key from the named variable, the system prompt first.
    (sent,) = fake.requests
    assert fake.keys == ["Bearer sk-test"]
    assert sent["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["model"] == "deepseek-chat" and sent["max_tokens"] == 512
    assert "temperature" not in sent and "tools" not in sent


async def test_a_tool_call_round_trip(gateway, fake):
    fake.push(text("Writing it."), tool_call("write_note", {"path": "notes/a.md", "text": "x" * 40}, id="call_1"))
    fake.push(text("Written."))
    conversation = [{"role": "user", "content": "write a note"}]
    first = [e async for e in gateway.stream_chat(conversation, [WRITE_TOOL])]

    call = next(e for e in first if e["type"] == "tool_call")
    assert (call["toolCallId"], call["name"]) == ("call_1", "write_note")
    assert call["arguments"] == {"path": "notes/a.md", "text": "x" * 40}
    json_deltas = [e["event"]["delta"]["partial_json"] for e in first if e["type"] == "stream_event"
                   and e["event"].get("delta", {}).get("type") == "input_json_delta"]
    assert len(json_deltas) > 1  # the arguments streamed in pieces
    message = first[-1]["message"]
    assert message["stop_reason"] == "tool_use"
    assert [b["type"] for b in message["content"]] == ["text", "tool_use"]

    # The caller answers in Messages-API form; the server gets Chat Completions.
    conversation += [{"role": "assistant", "content": message["content"]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1",
                                                   "content": "wrote notes/a.md"}]}]
    second = [e async for e in gateway.stream_chat(conversation, [WRITE_TOOL])]
    assert "".join(e["content"] for e in second if e["type"] == "delta") == "Written."
    sent = fake.requests[-1]
    assert sent["tools"] == [{"type": "function", "function": {
        "name": "write_note", "description": "Write a note.", "parameters": WRITE_TOOL["input_schema"]}}]
    assert sent["messages"] == [
        {"role": "user", "content": "write a note"},
        {"role": "assistant", "content": "Writing it.", "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "write_note", "arguments": '{"path": "notes/a.md", "text": "' + "x" * 40 + '"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "wrote notes/a.md"},
    ]


async def test_a_forced_tool_call_returns_its_input(gateway, fake):
    fake.push(tool_call("write_note", {"path": "p", "text": "the body of the note"}))
    deltas: list[tuple[str, str]] = []
    result = await gateway.call_tool(system="s", prompt="p", tool=WRITE_TOOL,
                                     on_delta=lambda kind, chunk: deltas.append((kind, chunk)))
    assert result.input == {"path": "p", "text": "the body of the note"}
    assert result.stop_reason == "tool_use" and result.model == "deepseek-chat"
    assert result.input_tokens > 0 and result.output_tokens > 0
    assert "".join(c for k, c in deltas if k == "json") == '{"path": "p", "text": "the body of the note"}'
    assert fake.requests[-1]["tool_choice"] == {"type": "function", "function": {"name": "write_note"}}


async def test_the_prompt_scripts_the_fake_too(gateway, fake):
    result = await gateway.call_tool(system="s", prompt='please [tool: write_note {"path": "q", "text": "t"}]',
                                     tool=WRITE_TOOL)
    assert result.input == {"path": "q", "text": "t"}


async def test_a_refused_key_names_the_variable_and_is_not_retried(fake):
    gateway = LLMGateway(settings_for(fake), {"DEEPSEEK_API_KEY": "sk-wrong"})
    try:
        with pytest.raises(GatewayError) as caught:
            await gateway.call_tool(system="s", prompt="p", tool=WRITE_TOOL)
    finally:
        await gateway.close()
    assert (caught.value.status, caught.value.kind) == (401, "auth_failed")
    assert "DEEPSEEK_API_KEY" in str(caught.value) and "Incorrect API key" in str(caught.value)
    assert "sk-wrong" not in str(caught.value)
    assert len(fake.requests) == 1


async def test_a_server_that_wants_a_key_and_got_none_says_so(fake):
    gateway = LLMGateway(settings_for(fake, api_key_env=None), {})
    try:
        with pytest.raises(GatewayError) as caught:
            await gateway.call_tool(system="s", prompt="p", tool=WRITE_TOOL)
    finally:
        await gateway.close()
    assert caught.value.kind == "auth_failed" and "api_key_env" in str(caught.value)


async def test_a_local_server_is_reached_without_any_key():
    async with FakeOpenAIChat() as local:
        gateway = LLMGateway(LLMSettings(provider="openai", model="qwen2.5-coder:7b", base_url=local.base_url), {})
        assert gateway.has_credentials() and gateway.problem() is None
        try:
            events = [e async for e in gateway.stream_chat([{"role": "user", "content": "hi"}], [])]
        finally:
            await gateway.close()
    assert events[-1]["message"]["content"][0]["text"] == TEXT_REPLY


async def test_a_server_that_is_down_is_named_in_the_error():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    gateway = LLMGateway(LLMSettings(provider="openai", model="llama3.1", base_url=base_url,
                                     max_retries=1, retry_base_delay=0.01), {})
    try:
        events = []
        with pytest.raises(GatewayError) as caught:
            async for event in gateway.stream_chat([{"role": "user", "content": "hi"}], []):
                events.append(event)
    finally:
        await gateway.close()
    assert caught.value.kind == "connection_error" and caught.value.status is None
    assert base_url in str(caught.value) and "is it running" in str(caught.value)
    assert [e["type"] for e in events] == ["retry"]  # one retry, reported, then the error


async def test_a_busy_server_is_retried_then_answers(gateway, fake):
    fake.push_error(429, "Rate limit reached")
    fake.push("after the wait")
    events = [e async for e in gateway.stream_chat([{"role": "user", "content": "hi"}], [])]
    assert events[0]["type"] == "retry" and events[0]["status"] == 429
    assert "Rate limit reached" in events[0]["message"]
    assert "".join(e["content"] for e in events if e["type"] == "delta") == "after the wait"
    assert len(fake.requests) == 2


async def test_openai_base_url_and_key_come_from_the_environment_and_prices_are_known(fake):
    gateway = LLMGateway(LLMSettings(provider="openai", model="gpt-4.1-mini", max_tokens=64),
                         {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake.base_url})
    try:
        events = [e async for e in gateway.stream_chat([{"role": "user", "content": "hi"}], [])]
    finally:
        await gateway.close()
    assert fake.keys == ["Bearer sk-test"] and fake.requests[0]["max_tokens"] == 64
    assert events[-1]["cost_usd"] > 0


def test_openai_itself_is_asked_for_max_completion_tokens():
    # Its newer models refuse max_tokens; the servers that copy the API know only max_tokens.
    call = ChatRequest([{"role": "user", "content": "hi"}], "", [])
    official = OpenAIProvider().build(LLMSettings(provider="openai", model="gpt-4.1", max_tokens=64), {}, call)
    assert official["max_completion_tokens"] == 64 and "max_tokens" not in official


def test_settings_are_validated_with_clear_errors():
    bad = LLMSettings(provider="openai", model=" ", base_url="localhost:11434",
                      api_key_env="sk-proj-0123456789abcdef", max_tokens=0, temperature=3)
    problems = " | ".join(bad.problems())
    assert "model is empty" in problems
    assert "'localhost:11434' is not an http(s) URL" in problems
    assert "NAME of an environment variable" in problems and "0123456789abcdef" not in problems
    assert "max_tokens" in problems and "temperature" in problems
    with pytest.raises(InvalidLLMSettings):
        bad.validate()
    assert "must be one of 'anthropic', 'openai'" in LLMSettings(provider="gemini").problems()[0]
    assert LLMSettings().problems() == []
    assert LLMSettings(provider="openai", model="llama3.1", base_url="http://127.0.0.1:11434/v1").problems() == []


async def test_a_call_with_invalid_settings_is_refused_before_any_request(gateway, fake):
    with pytest.raises(GatewayError) as caught:
        await gateway.call_tool(system="s", prompt="p", tool=WRITE_TOOL,
                                settings=LLMSettings(provider="openai", model="", base_url=fake.base_url))
    assert caught.value.kind == "invalid_settings" and "model is empty" in str(caught.value)
    assert fake.requests == []


def test_which_key_an_openai_profile_needs():
    openai = LLMSettings(provider="openai", model="gpt-4.1")
    assert not has_credentials(openai, {}) and has_credentials(openai, {"OPENAI_API_KEY": "k"})
    assert "OPENAI_API_KEY" in (credentials_problem(openai, {}) or "")
    named = LLMSettings(provider="openai", model="kimi-k2", base_url="https://api.moonshot.ai/v1",
                        api_key_env="MOONSHOT_API_KEY")
    assert not has_credentials(named, {"OPENAI_API_KEY": "k"})
    assert "MOONSHOT_API_KEY" in (credentials_problem(named, {}) or "")
    assert has_credentials(named, {"MOONSHOT_API_KEY": "k"})
    local = LLMSettings(provider="openai", model="llama3.1", base_url="http://127.0.0.1:11434/v1")
    assert has_credentials(local, {}) and credentials_problem(local, {}) is None


def test_the_conversation_is_rewritten_for_chat_completions():
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                  "data": "AAAA"}}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                                          {"type": "tool_use", "id": "t1", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                                      "content": [{"type": "text", "text": "no page"}]}]},
    ]
    assert chat_messages("", messages) == [
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "t1", "content": "[the tool call failed] no page"},
    ]


def test_calls_a_server_does_not_number_are_told_apart_by_their_ids():
    # Some local servers put every call at index 0, each whole in one chunk.
    translator = ChunkTranslator("llama3.1")
    events = []
    for call_id, path in (("call_a", "a.md"), ("call_b", "b.md")):
        events += translator.chunk({"id": "x", "model": "llama3.1", "choices": [{"index": 0, "delta": {
            "tool_calls": [{"index": 0, "id": call_id, "type": "function",
                            "function": {"name": "write_note", "arguments": {"path": path}}}]}}]})
    events += translator.chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    events += translator.finish()
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [(b["id"], b["name"]) for b in starts] == [("call_a", "write_note"), ("call_b", "write_note")]
    arguments = [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"]
    assert arguments == ['{"path": "a.md"}', '{"path": "b.md"}']
    # "stop" after tool calls still means the model wants them run.
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


async def test_a_stream_that_breaks_off_is_a_gateway_error(gateway, fake):
    fake.push_drop("a long answer that never finishes", after=3)
    events = []
    with pytest.raises(GatewayError) as caught:
        async for event in gateway.stream_chat([{"role": "user", "content": "hi"}], []):
            events.append(event)
    assert caught.value.kind == "connection_error" and "broke off" in str(caught.value)
    assert fake.base_url in str(caught.value)
    assert any(e["type"] == "delta" for e in events)  # what arrived was shown before it broke
    assert not any(e["type"] == "done" for e in events)


async def test_a_stream_that_ends_without_finishing_is_an_error_not_an_answer(gateway, fake):
    # A proxy that gives up closes the stream cleanly: no finish reason, no [DONE].
    fake.push_cut("a long answer that never finishes", after=3)
    events = []
    with pytest.raises(GatewayError) as caught:
        async for event in gateway.stream_chat([{"role": "user", "content": "hi"}], []):
            events.append(event)
    assert caught.value.kind == "stream_cut" and "cut" in str(caught.value)
    assert fake.base_url in str(caught.value)
    assert not any(e["type"] == "done" for e in events)
    # What did arrive is handed over, so the caller can keep it marked as cut.
    shown = "".join(e["content"] for e in events if e["type"] == "delta")
    assert shown and caught.value.partial_text == shown


async def test_a_line_that_is_not_json_is_named_as_such(gateway, fake):
    fake.push_bad_line("an answer", after=2)
    with pytest.raises(GatewayError) as caught:
        async for _ in gateway.stream_chat([{"role": "user", "content": "hi"}], []):
            pass
    assert caught.value.kind == "invalid_response"
    assert "not valid JSON" in str(caught.value) and fake.base_url in str(caught.value)
