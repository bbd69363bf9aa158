"""Issue 25, item 3 under stress: the gateway's openai provider against the
fake Chat Completions server cutting its stream at every point, sending a
line that is not JSON at every point, and streaming tool-call arguments cut
at every length. No cut stream may come out as a finished answer, no bad
line may be called a connection error, and no broken arguments may reach a
tool as empty ones."""

from __future__ import annotations

import json
import random
import time

import pytest

from pneuma.api import GatewayError, LLMGateway, LLMSettings
from tests.fakes.openai_chat import FakeOpenAIChat, text, tool_call
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

ROUNDS = 120  # per fault kind
BUDGET_S = 40.0  # the whole part stops early rather than run long on a busy machine
ANSWER = "The plan has three parts: gather, draft, and check each slide twice. " * 2
ARGUMENTS = json.dumps({"path": "notes/plan.md", "content": "# Plan\n\n- gather\n- draft\n"})
WRITE = {"name": "workspace_write_file", "description": "Write a file.",
         "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}


async def _call(gateway: LLMGateway) -> tuple[list[dict], GatewayError | None]:
    events: list[dict] = []
    try:
        async for event in gateway.stream_chat([{"role": "user", "content": "hi"}], [WRITE]):
            events.append(event)
    except GatewayError as exc:
        return events, exc
    return events, None


async def test_cut_streams_bad_lines_and_broken_arguments_are_never_taken_as_good():
    rng = random.Random(25)
    started = time.monotonic()
    tried = {"cut": 0, "bad line": 0, "broken arguments": 0}
    wrong: list[str] = []
    async with FakeOpenAIChat() as api:
        settings = LLMSettings(provider="openai", model="qwen-plus", base_url=api.base_url,
                               max_tokens=256, retry_base_delay=0.01)
        gateway = LLMGateway(settings, {})
        try:
            for _ in range(ROUNDS):
                if time.monotonic() - started > BUDGET_S:
                    break
                # A stream cut after 1..all chunks (the role chunk, the deltas, not the finish).
                api.push_cut(text(ANSWER, chunk=rng.randint(3, 12)), after=rng.randint(1, 12))
                events, error = await _call(gateway)
                shown = "".join(e["content"] for e in events if e["type"] == "delta")
                tried["cut"] += 1
                if error is None or error.kind != "stream_cut" or error.partial_text != shown:
                    wrong.append(f"cut: {error and error.kind} {shown[:40]!r}")

                api.push_bad_line(text(ANSWER, chunk=rng.randint(3, 12)), after=rng.randint(1, 12))
                events, error = await _call(gateway)
                tried["bad line"] += 1
                if error is None or error.kind != "invalid_response":
                    wrong.append(f"bad line: {error and error.kind}")

                raw = ARGUMENTS[:rng.randint(1, len(ARGUMENTS) - 1)]
                api.push(tool_call("workspace_write_file", {}, raw=raw))
                events, error = await _call(gateway)
                tried["broken arguments"] += 1
                calls = [e for e in events if e["type"] == "tool_call"]
                if error is not None or len(calls) != 1 or "not valid JSON" not in calls[0].get("input_error", ""):
                    wrong.append(f"broken arguments {raw!r}: {calls}")
        finally:
            await gateway.close()
    record("25.3 openai stream faults", "" + ", ".join(
        f"{count(n)} {kind}" for kind, n in tried.items()) + f"; {len(wrong)} taken as good")
    assert not wrong, wrong[:5]
    assert all(n > 0 for n in tried.values())
