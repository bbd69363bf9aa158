"""What the person and the model see when an OpenAI-compatible server's
answer goes wrong mid-way: a stream cut without a finish reason, tool-call
arguments that are not JSON, and a message that failed or was interrupted
before any answer (issue 25, item 3)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.openai_chat import FakeOpenAIChat, text, tool_call
from tests.native.test_openai_provider_turn import openai_env


@pytest.fixture
async def openai_api():
    async with FakeOpenAIChat(require_key="sk-qwen") as api:
        yield api


def said_to_model(request: dict[str, Any]) -> list[tuple[str, str]]:
    """The conversation a request carried, as (role, text) without the system prompt."""
    out = []
    for message in request["messages"]:
        if message["role"] == "system":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        out.append((message["role"], content or ""))
    return out


async def test_a_cut_stream_is_an_error_and_its_text_is_kept_marked_as_cut(make_native, openai_api):
    server = await make_native(env=openai_env(openai_api))
    tab = await server.tab()
    openai_api.push_cut(text("The plan has three parts: first", chunk=8), after=3)
    await server.say(tab, "make a plan")
    result = await tab.wait_for("result", 10)

    assert result["data"]["is_error"] is True and "cut off" in result["data"]["result"]
    error = next(m for m in tab.broadcasts() if m["type"] == "error")
    assert error["code"] == "stream_cut"
    # The page's message holds what arrived, marked as cut.
    shown = next(m for m in tab.broadcasts() if m["type"] == "assistant")
    shown_text = shown["message"]["content"][0]["text"]
    assert shown_text.startswith("The plan has") and "cut off" in shown_text

    # The next call replays it marked as cut, not as a finished answer.
    openai_api.push(text("Here is the whole plan."))
    await server.say(tab, "go on")
    await tab.wait_for("result", 10, lambda m: m["data"]["is_error"] is False)
    conversation = said_to_model(openai_api.requests[-1])
    assert conversation[0] == ("user", "make a plan")
    assert conversation[1][0] == "assistant" and conversation[1][1].startswith("The plan has")
    assert "cut off" in conversation[1][1]
    assert conversation[2] == ("user", "go on")
    await server.close()


async def test_arguments_that_are_not_json_are_named_to_the_model(make_native, openai_api):
    server = await make_native(env=openai_env(openai_api))
    tab = await server.tab()
    openai_api.push(tool_call("workspace_write_file", {}, id="call_bad",
                              raw='{"path": "notes.md", "content": "# Notes'))
    openai_api.push(text("I will try again."))
    await server.say(tab, "write notes")
    await tab.wait_for("result", 10)

    tool_result = next(m for m in tab.broadcasts() if m["type"] == "tool_result")
    assert tool_result["is_error"] is True
    assert "not valid JSON" in tool_result["content"] and "must be a string" not in tool_result["content"]
    answer = openai_api.requests[-1]["messages"][-1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == "call_bad"
    assert "not valid JSON" in answer["content"]
    assert not (server.workspace / "notes.md").exists()
    await server.close()


async def test_a_failed_message_stays_its_own_message_marked_failed(make_native, openai_api):
    server = await make_native(env=openai_env(openai_api))
    tab = await server.tab()
    openai_api.push_error(400, "the context is too long")
    await server.say(tab, "first question")
    await tab.wait_for("result", 10)

    await server.say(tab, "second question")
    await tab.wait_for("result", 10, lambda m: m["data"]["is_error"] is False)
    conversation = said_to_model(openai_api.requests[-1])
    assert conversation[0] == ("user", "first question")
    assert conversation[1][0] == "assistant" and "failed" in conversation[1][1]
    assert conversation[2] == ("user", "second question")
    await server.close()


async def test_an_interrupted_message_stays_its_own_message_marked_interrupted(make_native, openai_api):
    server = await make_native(env=openai_env(openai_api))
    tab = await server.tab()
    openai_api.push(text("A long answer. " * 40, chunk=4), delay=0.05)
    await server.say(tab, "first question")
    await tab.wait_for("stream_event", 5, lambda m: m["event"]["type"] == "content_block_delta")
    await tab.send({"type": "interrupt"})
    await tab.wait_for("result", 5)

    await server.say(tab, "second question")
    await tab.wait_for("result", 10, lambda m: m["data"]["subtype"] == "success")
    conversation = said_to_model(openai_api.requests[-1])
    assert conversation[0] == ("user", "first question")
    assert conversation[1][0] == "assistant" and "interrupted" in conversation[1][1]
    assert conversation[2] == ("user", "second question")
    await server.close()
