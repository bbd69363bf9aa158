"""``LLMGateway``: the one model gateway in Pneuma.

Its providers are internals, chosen per call by ``LLMSettings.provider``:
``"anthropic"`` (the Messages API, ``anthropic_provider``) and ``"openai"``
(Chat Completions, ``openai_provider``: OpenAI and the servers that copy its
API). Whatever the provider, callers get the same events and errors below;
the conversation they pass is in Messages-API form.

Two ways to call a model:

``stream_chat(messages, tools, context)`` (the native agent loop) yields, in
order:

* ``{"type": "stream_event", "event": {...}}``: every Messages-API stream
  event as it arrives (the browser shows them as they are; another
  provider's stream is translated into these);
* ``{"type": "delta", "content": str}``: text as it streams;
* ``{"type": "tool_call", "toolCallId", "name", "arguments"}``: a complete
  tool call, once its JSON has fully arrived;
* ``{"type": "retry", "attempt", "max_retries", "status", "delay",
  "message"}``: the API answered 429/5xx (or could not be reached) before
  any output; we wait and try again, at most ``max_retries`` times;
* ``{"type": "done", "message": {id, role, content, stop_reason, model},
  "usage": {...}, "cost_usd": float}``.

``call_tool(system=, prompt=, tool=)`` (a structured answer: a plan, a
patch) forces one call of ``tool`` and returns its input.

Errors that cannot be retried raise ``GatewayError`` (with the HTTP status
when there is one). Cancelling the consuming task closes the HTTP stream.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from pneuma.llm.anthropic_provider import AnthropicProvider
from pneuma.llm.openai_provider import OpenAIProvider
from pneuma.llm.pricing import cost_of
from pneuma.llm.provider import CallFailure, ChatRequest, Provider
from pneuma.llm.settings import LLMSettings, credentials_problem, has_credentials

log = logging.getLogger(__name__)

DeltaCallback = Callable[[str, str], None]
"""``on_delta(kind, chunk)``: kind ``"text"`` for prose, ``"json"`` for tool input."""


class GatewayError(RuntimeError):
    """A model call failed for good. ``status`` is the HTTP status when the
    API answered one; ``kind`` says what went wrong: the API's error type
    (``overloaded_error``, ``invalid_request_error``, ...), ``auth_failed``,
    ``connection_error``, ``timeout``, ``no_tool_call``, ``unsupported_provider``,
    ``invalid_settings``, ``stream_cut`` (the stream ended before the model
    finished), ``invalid_response`` (the stream sent something that is not
    JSON) or ``api_error``. ``partial_text`` is the text that had streamed
    when a stream broke off or was cut ("" otherwise), for the caller to
    keep marked as cut, never as a finished answer."""

    def __init__(self, message: str, status: int | None = None, kind: str = "api_error",
                 partial_text: str = ""):
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.partial_text = partial_text


@dataclass(frozen=True)
class ToolCallResult:
    """What ``call_tool`` got back: the tool's input, any prose written
    before it, and the call's trace (model, tokens, stop reason, duration)."""

    input: dict[str, Any]
    text: str
    model: str
    input_tokens: int
    output_tokens: int
    stop_reason: str | None
    duration_ms: int


@dataclass(frozen=True)
class _Retry:
    attempt: int
    status: int | None
    delay: float
    message: str


_PROVIDERS: dict[str, Provider] = {p.name: p for p in (AnthropicProvider(), OpenAIProvider())}


class LLMGateway:
    """Model calls on lazily created SDK clients (one per provider, endpoint
    and key).

    ``env`` is where the key and endpoint are looked up (``os.environ`` when
    None). A call may pass its own ``LLMSettings`` (one gateway, several
    profiles): its provider, model, token limit, temperature, timeout and
    retries apply to that call; a profile with another provider, endpoint
    or key variable gets a client of its own, kept until ``close()``.
    Settings are checked at each call, not here, so a server with a wrong
    profile still starts and says what is wrong.
    """

    def __init__(self, settings: LLMSettings, env: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        self.env: Mapping[str, str] = os.environ if env is None else env
        self._clients: dict[tuple[Any, ...], Any] = {}

    def has_credentials(self, settings: LLMSettings | None = None) -> bool:
        """Whether the environment holds a key for ``settings`` (the gateway's
        own by default), or the settings need none (a local server)."""
        return has_credentials(settings or self.settings, self.env)

    def problem(self, settings: LLMSettings | None = None) -> str | None:
        """Why a call with ``settings`` cannot succeed (invalid settings, no
        key), in words for the person; None when it can."""
        return credentials_problem(settings or self.settings, self.env)

    @property
    def client(self) -> Any:
        """The client for the gateway's own settings."""
        return self._client_for(self.settings)

    def _client_for(self, settings: LLMSettings) -> Any:
        provider = _provider(settings)
        key = (provider.name, *provider.client_key(settings, self.env))
        client = self._clients.get(key)
        if client is None:
            # Retries are ours (they are reported to the person), never the SDK's.
            client = self._clients[key] = provider.make_client(settings, self.env,
                                                               self.settings.request_timeout)
        return client

    async def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()

    # -- the agent loop's call -------------------------------------------------

    async def stream_chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        context: dict[str, Any] | None = None,
        *,
        settings: LLMSettings | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """``context``: ``system`` (the system prompt) and optionally
        ``page``/``twin`` (appended to the system prompt as JSON)."""
        settings = settings or self.settings
        _check_settings(settings)
        context = context or {}
        system = context.get("system") or ""
        extra = {k: context[k] for k in ("page", "twin") if context.get(k)}
        if extra:
            system += "\n\n<runtime-context>\n" + json.dumps(extra, ensure_ascii=False) + "\n</runtime-context>"
        call = ChatRequest(messages, system, [_tool_param(t) for t in tools or []])
        # aclosing: a consumer that stops early closes the HTTP stream now, not at GC.
        async with aclosing(self._stream(call, settings)) as events:
            async for item in events:
                yield item

    # -- one structured answer ---------------------------------------------------

    async def call_tool(
        self,
        *,
        system: str,
        prompt: str,
        tool: dict[str, Any],
        on_delta: DeltaCallback | None = None,
        settings: LLMSettings | None = None,
    ) -> ToolCallResult:
        """Ask the model for exactly one call of ``tool`` (``name``,
        ``description``, ``input_schema``) and return its input.

        Text streams to ``on_delta("text", chunk)`` and the tool's JSON to
        ``on_delta("json", chunk)`` as they arrive. Raises ``GatewayError``
        when the call fails or the model does not call the tool.
        """
        settings = settings or self.settings
        _check_settings(settings)
        call = ChatRequest([{"role": "user", "content": prompt}], system, [_tool_param(tool)],
                           force_tool=tool["name"])
        started = time.monotonic()
        done: dict[str, Any] | None = None
        calls: list[dict[str, Any]] = []
        try:
            async with aclosing(self._stream(call, settings)) as events:
                async for event in events:
                    kind = event["type"]
                    if kind == "delta" and on_delta is not None:
                        on_delta("text", event["content"])
                    elif kind == "stream_event" and on_delta is not None:
                        delta = event["event"].get("delta") or {}
                        if delta.get("type") == "input_json_delta":
                            on_delta("json", delta.get("partial_json", ""))
                    elif kind == "tool_call":
                        calls.append(event)
                    elif kind == "done":
                        done = event
        except GatewayError:
            raise
        except Exception as exc:  # whatever the SDK or the transport raised on the way
            raise GatewayError(f"the model call failed: {type(exc).__name__}: {exc}"[:500],
                               None, "api_error") from exc
        if done is None:
            raise GatewayError("the model's stream ended without a message")
        message, usage = done["message"], done["usage"]
        text = "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")
        found = next((c for c in calls if c["name"] == tool["name"]), None)
        if found is None:
            said = f"; it said: {text[:300]}" if text else ""
            raise GatewayError(f"the model did not call {tool['name']}{said}", None, "no_tool_call")
        if found.get("input_error"):
            raise GatewayError(found["input_error"], None, "no_tool_call")
        return ToolCallResult(
            input=found["arguments"],
            text=text,
            model=message.get("model") or settings.model,
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            stop_reason=message.get("stop_reason"),
            duration_ms=int((time.monotonic() - started) * 1000),
        )

    # -- shared by both ----------------------------------------------------------

    async def _stream(self, call: ChatRequest, settings: LLMSettings) -> AsyncIterator[dict[str, Any]]:
        provider = _provider(settings)
        request = provider.build(settings, self.env, call)
        attempt = 0
        while True:
            opened = await self._open(provider, request, settings, attempt)
            if not isinstance(opened, _Retry):
                break
            attempt = opened.attempt
            yield {"type": "retry", "attempt": opened.attempt, "max_retries": settings.max_retries,
                   "status": opened.status, "delay": opened.delay, "message": opened.message}
            await asyncio.sleep(opened.delay)
        async with aclosing(self._consume(provider, opened, settings)) as items:
            async for item in items:
                yield item

    async def _open(self, provider: Provider, request: dict[str, Any], settings: LLMSettings,
                    attempt: int) -> Any:
        """The open stream, or a ``_Retry`` saying how long to wait before
        attempt ``attempt + 1``; raises ``GatewayError`` when retries are spent."""
        options: dict[str, Any] = {}
        if settings.request_timeout != self.settings.request_timeout:
            options["timeout"] = settings.request_timeout
        try:
            return await provider.open(self._client_for(settings), request, settings, self.env, options)
        except CallFailure as failure:
            if not failure.retryable or attempt >= settings.max_retries:
                raise GatewayError(failure.message, failure.status, failure.kind) from None
            delay = _retry_delay(failure.retry_after, attempt, settings.retry_base_delay)
            return _Retry(attempt + 1, failure.status, delay, failure.message)

    async def _consume(self, provider: Provider, stream: Any,
                       settings: LLMSettings) -> AsyncIterator[dict[str, Any]]:
        blocks: dict[int, dict[str, Any]] = {}
        partial: dict[int, list[str]] = {}
        message: dict[str, Any] = {"role": "assistant", "content": []}
        usage: dict[str, int] = {}
        try:
            async for raw in provider.events(stream, settings, self.env):
                yield {"type": "stream_event", "event": raw}
                kind = raw.get("type")
                if kind == "message_start":
                    start = raw.get("message") or {}
                    message.update(id=start.get("id"), model=start.get("model"))
                    usage.update({k: v for k, v in (start.get("usage") or {}).items()
                                  if isinstance(v, int)})
                elif kind == "content_block_start":
                    index = raw["index"]
                    blocks[index] = dict(raw.get("content_block") or {})
                    partial[index] = []
                elif kind == "content_block_delta":
                    index, delta = raw["index"], raw.get("delta") or {}
                    block = blocks.setdefault(index, {"type": "text", "text": ""})
                    if delta.get("type") == "text_delta":
                        block["text"] = block.get("text", "") + delta.get("text", "")
                        yield {"type": "delta", "content": delta.get("text", "")}
                    elif delta.get("type") == "input_json_delta":
                        partial.setdefault(index, []).append(delta.get("partial_json", ""))
                    elif delta.get("type") == "thinking_delta":
                        block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
                    elif delta.get("type") == "signature_delta":
                        block["signature"] = delta.get("signature", "")
                elif kind == "content_block_stop":
                    index = raw["index"]
                    block = blocks.get(index, {})
                    if block.get("type") == "tool_use":
                        yield _finish_tool_use(block, "".join(partial.get(index, [])))
                elif kind == "message_delta":
                    delta = raw.get("delta") or {}
                    if "stop_reason" in delta:
                        message["stop_reason"] = delta["stop_reason"]
                    usage.update({k: v for k, v in (raw.get("usage") or {}).items()
                                  if isinstance(v, int)})
        except CallFailure as failure:
            arrived = "".join(blocks[i].get("text", "") for i in sorted(blocks)
                              if blocks[i].get("type") == "text")
            raise GatewayError(failure.message, failure.status, failure.kind, arrived) from None
        message["content"] = [{k: v for k, v in blocks[i].items() if k != "input_error"}
                              for i in sorted(blocks)]
        model = message.get("model") or settings.model
        yield {"type": "done", "message": message, "usage": usage,
               "cost_usd": provider.cost(model, usage)}


def _provider(settings: LLMSettings) -> Provider:
    provider = _PROVIDERS.get(settings.provider)
    if provider is None:
        raise GatewayError(f"unknown LLM provider {settings.provider!r} (supported: "
                           + ", ".join(repr(name) for name in _PROVIDERS) + ")",
                           None, "unsupported_provider")
    return provider


def _check_settings(settings: LLMSettings) -> None:
    _provider(settings)
    found = settings.problems()
    if found:
        raise GatewayError("invalid LLM settings: " + "; ".join(found), None, "invalid_settings")


def _tool_param(tool: dict[str, Any]) -> dict[str, Any]:
    """The neutral tool shape; our tools name their schema ``schema`` or ``input_schema``."""
    return {"name": tool["name"], "description": tool.get("description") or "",
            "input_schema": tool.get("input_schema") or tool.get("schema") or {"type": "object"}}


def _finish_tool_use(block: dict[str, Any], text: str) -> dict[str, Any]:
    """Parse the tool input that streamed as JSON into ``block`` and return
    the ``tool_call`` event (with ``input_error`` when the JSON was broken)."""
    event: dict[str, Any] = {"type": "tool_call", "toolCallId": block.get("id"), "name": block.get("name")}
    try:
        block["input"] = json.loads(text) if text.strip() else {}
    except ValueError:
        block["input"] = {}
        block["input_error"] = event["input_error"] = f"the tool input was not valid JSON: {text[:200]}"
    event["arguments"] = block["input"]
    return event


def _retry_delay(after: float | None, attempt: int, base: float) -> float:
    """The server's ``retry-after`` when it sent one, else exponential backoff with jitter."""
    if after is not None:
        return min(30.0, max(0.0, after))
    return min(30.0, base * (2 ** attempt)) * (0.8 + 0.4 * random.random())


__all__ = ["DeltaCallback", "GatewayError", "LLMGateway", "ToolCallResult", "cost_of"]
