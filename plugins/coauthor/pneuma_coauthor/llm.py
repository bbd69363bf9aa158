"""LLMClient with three profiles (§11): fast, writer, reasoning.

Every call asks for exactly one tool (plan, edits, candidates) so the answer
is structured data rather than prose to scrape; it streams (the REPL shows
the model writing) and is traced: profile, model, tokens and duration become
an LlmCallTraced event in the task's log.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pneuma_coauthor.config import CoAuthorConfig, Profile
from pneuma_coauthor.domain.events import LlmCallTraced

DeltaCallback = Callable[[str, str], None]  # (kind "text"|"json", chunk)


class LLMError(RuntimeError):
    def __init__(self, message: str, trace: LlmCallTraced | None = None):
        super().__init__(message)
        self.trace = trace


@dataclass
class ToolResult:
    input: dict[str, Any]
    text: str  # any prose the model wrote before the tool call
    trace: LlmCallTraced


class LLMPort(Protocol):
    def profile(self, name: str) -> Profile: ...

    async def call_tool(
        self,
        profile: str,
        purpose: str,
        system: str,
        prompt: str,
        tool: dict[str, Any],
        on_delta: DeltaCallback | None = None,
    ) -> ToolResult: ...


class AnthropicLLM:
    """The anthropic SDK behind the port; the client is created lazily so
    that commands without a model (M0) never need an API key."""

    def __init__(self, config: CoAuthorConfig, client: Any | None = None) -> None:
        self.config = config
        self._client = client

    def profile(self, name: str) -> Profile:
        return self.config.profiles[name]

    @property
    def client(self) -> Any:
        if self._client is None:
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic(max_retries=2)
        return self._client

    async def call_tool(
        self,
        profile: str,
        purpose: str,
        system: str,
        prompt: str,
        tool: dict[str, Any],
        on_delta: DeltaCallback | None = None,
    ) -> ToolResult:
        spec = self.profile(profile)
        started = time.monotonic()
        trace = LlmCallTraced(profile=profile, model=spec.model, purpose=purpose)  # type: ignore[arg-type]
        kwargs: dict[str, Any] = {
            "model": spec.model,
            "max_tokens": spec.max_tokens,
            "system": system,
            "messages": [{"role": "user", "content": prompt}],
            "tools": [tool],
            "tool_choice": {"type": "tool", "name": tool["name"]},
        }
        if spec.temperature is not None:
            kwargs["temperature"] = spec.temperature
        try:
            async with self.client.messages.stream(**kwargs) as stream:
                async for event in stream:
                    if on_delta is None:
                        continue
                    if event.type == "text":
                        on_delta("text", event.text)
                    elif event.type == "input_json":
                        on_delta("json", event.partial_json)
                message = await stream.get_final_message()
        except Exception as exc:  # the SDK's errors, timeouts, refused connections
            trace.duration_ms = int((time.monotonic() - started) * 1000)
            trace.error = f"{type(exc).__name__}: {exc}"[:500]
            raise LLMError(f"{profile} model call failed: {trace.error}", trace) from exc
        trace.duration_ms = int((time.monotonic() - started) * 1000)
        usage = getattr(message, "usage", None)
        trace.input_tokens = int(getattr(usage, "input_tokens", 0) or 0)
        trace.output_tokens = int(getattr(usage, "output_tokens", 0) or 0)
        trace.stop_reason = getattr(message, "stop_reason", None)
        text = "".join(getattr(b, "text", "") for b in message.content if getattr(b, "type", "") == "text")
        for block in message.content:
            if getattr(block, "type", "") == "tool_use" and block.name == tool["name"]:
                data = block.input if isinstance(block.input, dict) else json.loads(block.input or "{}")
                return ToolResult(input=data, text=text, trace=trace)
        trace.error = f"the model did not call {tool['name']}"
        raise LLMError(trace.error + (f"; it said: {text[:300]}" if text else ""), trace)


# -- the tools each step asks for ----------------------------------------------

_STRINGS = {"type": "array", "items": {"type": "string"}}

PLAN_TOOL: dict[str, Any] = {
    "name": "post_plan",
    "description": "Post the plan for this task for the person to read before any patch.",
    "input_schema": {
        "type": "object",
        "properties": {
            "goal": {"type": "string", "description": "What the change achieves, in one sentence."},
            "issues": {**_STRINGS, "description": "What is wrong or missing in the text now."},
            "strategy": {**_STRINGS, "description": "How you will change it."},
            "scope": {**_STRINGS, "description": "Files and line ranges the patch will touch, e.g. sections/method.tex:12-18."},
            "risks": {**_STRINGS, "description": "Repetition, weakened claims, citations or facts needed."},
            "questions": {
                **_STRINGS,
                "description": "Blocking questions: facts you need from the person (what a figure shows, a result, "
                "a number, a source). Non-empty means you stop and ask; never guess them.",
            },
            "files": {**_STRINGS, "description": "Workspace-relative paths of every file the patch will change."},
            "patchNeeded": {"type": "boolean", "description": "False when the request is a question to answer, not a change."},
            "answer": {"type": "string", "description": "The answer, when patchNeeded is false."},
        },
        "required": ["goal", "issues", "strategy", "scope", "risks", "questions", "files", "patchNeeded"],
    },
}

EDITS_TOOL: dict[str, Any] = {
    "name": "propose_edits",
    "description": "Propose the patch as line-range replacements; the system turns them into a unified diff for review.",
    "input_schema": {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "description": "One line: what the patch changes and why."},
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "lineStart": {"type": "integer", "description": "First line replaced (1-based, as numbered in the context)."},
                        "lineEnd": {
                            "type": "integer",
                            "description": "Last line replaced, inclusive. lineEnd = lineStart - 1 inserts before lineStart without replacing.",
                        },
                        "replacement": {"type": "string", "description": "The new lines (LaTeX, one sentence per line)."},
                    },
                    "required": ["path", "lineStart", "lineEnd", "replacement"],
                },
            },
        },
        "required": ["summary", "edits"],
    },
}

CANDIDATES_TOOL: dict[str, Any] = {
    "name": "offer_candidates",
    "description": "Offer alternative rewrites of the selected lines; the person picks one.",
    "input_schema": {
        "type": "object",
        "properties": {
            "candidates": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "summary": {"type": "string", "description": "How this alternative differs, in a few words."},
                        "replacement": {"type": "string", "description": "The full replacement for the selected lines."},
                    },
                    "required": ["summary", "replacement"],
                },
            }
        },
        "required": ["candidates"],
    },
}
