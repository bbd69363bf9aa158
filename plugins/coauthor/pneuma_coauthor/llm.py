"""The LLM port with three profiles (docs/design/coauthor.md, "LLM profiles"): fast, writer, reasoning.

Every call asks for exactly one tool (plan, edits, candidates) so the answer
is structured data rather than prose to scrape; it streams (the REPL shows
the model writing) and is traced: profile, model, tokens and duration become
an LlmCallTraced event in the task's log. The calls themselves go through
the host's one LLM gateway (``pneuma.api.LLMGateway``); a profile is the
gateway's settings with its own model, token limit and temperature, and
optionally its own provider, endpoint and key variable (an OpenAI-compatible
server for one profile, Anthropic for another).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pneuma.api import GatewayError, LLMGateway, LLMSettings
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


class GatewayLLM:
    """The port on the host's gateway. The gateway's client is created on
    the first call, so commands without a model (M0) never need an API key;
    the key and endpoint come from ``ANTHROPIC_API_KEY`` and
    ``ANTHROPIC_BASE_URL``, as for every model call Pneuma makes, unless a
    profile names its own ``provider``/``base_url``/``api_key_env``. Tests
    swap the model by handing it a gateway aimed at a fake API."""

    def __init__(self, config: CoAuthorConfig, gateway: LLMGateway | None = None) -> None:
        self.config = config
        self.gateway = gateway or LLMGateway(LLMSettings(model=config.profiles["writer"].model))

    def profile(self, name: str) -> Profile:
        return self.config.profiles[name]

    def settings(self, name: str) -> LLMSettings:
        """The gateway's settings with the profile's model and limits."""
        spec = self.profile(name)
        base = self.gateway.settings
        changes: dict[str, Any] = {"model": spec.model, "max_tokens": spec.max_tokens,
                                   "temperature": spec.temperature}
        if spec.provider is not None and spec.provider != base.provider:
            # Another provider's endpoint and key are never the gateway's.
            changes.update(provider=spec.provider, base_url=None, api_key_env=None)
        if spec.base_url is not None:
            changes["base_url"] = spec.base_url
        if spec.api_key_env is not None:
            changes["api_key_env"] = spec.api_key_env
        return dataclasses.replace(base, **changes)

    async def call_tool(
        self,
        profile: str,
        purpose: str,
        system: str,
        prompt: str,
        tool: dict[str, Any],
        on_delta: DeltaCallback | None = None,
    ) -> ToolResult:
        settings = self.settings(profile)
        trace = LlmCallTraced(profile=profile, model=settings.model, purpose=purpose)  # type: ignore[arg-type]
        started = time.monotonic()
        try:
            result = await self.gateway.call_tool(
                system=system, prompt=prompt, tool=tool, on_delta=on_delta, settings=settings
            )
        except GatewayError as exc:
            trace.duration_ms = int((time.monotonic() - started) * 1000)
            trace.error = str(exc)[:500]
            raise LLMError(f"{profile} model call failed: {trace.error}", trace) from exc
        trace.duration_ms = result.duration_ms
        trace.input_tokens = result.input_tokens
        trace.output_tokens = result.output_tokens
        trace.stop_reason = result.stop_reason
        return ToolResult(input=result.input, text=result.text, trace=trace)

    async def close(self) -> None:
        await self.gateway.close()


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
