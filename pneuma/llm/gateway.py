"""``LLMGateway``: the one Anthropic client in Pneuma.

Two ways to call a model:

``stream_chat(messages, tools, context)`` (the native agent loop) yields, in
order:

* ``{"type": "stream_event", "event": {...}}``: every Messages-API stream
  event as it arrives (the browser shows them as they are);
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

from pneuma.llm.pricing import cost_of
from pneuma.llm.settings import LLMSettings, api_credentials, has_credentials

log = logging.getLogger(__name__)

DeltaCallback = Callable[[str, str], None]
"""``on_delta(kind, chunk)``: kind ``"text"`` for prose, ``"json"`` for tool input."""


class GatewayError(RuntimeError):
    """A model call failed for good. ``status`` is the HTTP status when the
    API answered one; ``kind`` says what went wrong: the API's error type
    (``overloaded_error``, ``invalid_request_error``, ...), ``auth_failed``,
    ``connection_error``, ``timeout``, ``no_tool_call``, ``unsupported_provider``
    or ``api_error``."""

    def __init__(self, message: str, status: int | None = None, kind: str = "api_error"):
        super().__init__(message)
        self.status = status
        self.kind = kind


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


class LLMGateway:
    """Model calls on lazily created ``anthropic.AsyncAnthropic`` clients.

    ``env`` is where the key and endpoint are looked up (``os.environ`` when
    None). A call may pass its own ``LLMSettings`` (one gateway, several
    profiles): its model, token limit, temperature, timeout and retries
    apply to that call; a profile with another endpoint or key variable
    gets a client of its own, kept until ``close()``.
    """

    def __init__(self, settings: LLMSettings, env: Mapping[str, str] | None = None) -> None:
        _check_provider(settings)
        self.settings = settings
        self.env: Mapping[str, str] = os.environ if env is None else env
        self._clients: dict[tuple[tuple[str, Any], ...], Any] = {}

    def has_credentials(self, settings: LLMSettings | None = None) -> bool:
        """Whether the environment holds a key for ``settings`` (the gateway's own by default)."""
        return has_credentials(settings or self.settings, self.env)

    @property
    def client(self) -> Any:
        """The client for the gateway's own settings."""
        return self._client_for(self.settings)

    def _client_for(self, settings: LLMSettings) -> Any:
        credentials = api_credentials(settings, self.env)
        key = tuple(sorted(credentials.items()))
        client = self._clients.get(key)
        if client is None:
            import anthropic

            # Retries are ours (they are reported to the person), never the SDK's.
            client = self._clients[key] = anthropic.AsyncAnthropic(
                **credentials, max_retries=0, timeout=self.settings.request_timeout)
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
        _check_provider(settings)
        context = context or {}
        system = context.get("system") or ""
        extra = {k: context[k] for k in ("page", "twin") if context.get(k)}
        if extra:
            system += "\n\n<runtime-context>\n" + json.dumps(extra, ensure_ascii=False) + "\n</runtime-context>"
        request = _request(settings, messages, system)
        if tools:
            request["tools"] = [_tool_param(t) for t in tools]
        # aclosing: a consumer that stops early closes the HTTP stream now, not at GC.
        async with aclosing(self._stream(request, settings)) as events:
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
        _check_provider(settings)
        request = _request(settings, [{"role": "user", "content": prompt}], system)
        request["tools"] = [_tool_param(tool)]
        request["tool_choice"] = {"type": "tool", "name": tool["name"]}
        started = time.monotonic()
        done: dict[str, Any] | None = None
        calls: list[dict[str, Any]] = []
        try:
            async with aclosing(self._stream(request, settings)) as events:
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
        call = next((c for c in calls if c["name"] == tool["name"]), None)
        if call is None:
            said = f"; it said: {text[:300]}" if text else ""
            raise GatewayError(f"the model did not call {tool['name']}{said}", None, "no_tool_call")
        if call.get("input_error"):
            raise GatewayError(call["input_error"], None, "no_tool_call")
        return ToolCallResult(
            input=call["arguments"],
            text=text,
            model=message.get("model") or settings.model,
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            stop_reason=message.get("stop_reason"),
            duration_ms=int((time.monotonic() - started) * 1000),
        )

    # -- shared by both ----------------------------------------------------------

    async def _stream(self, request: dict[str, Any], settings: LLMSettings) -> AsyncIterator[dict[str, Any]]:
        attempt = 0
        while True:
            opened = await self._open(request, settings, attempt)
            if not isinstance(opened, _Retry):
                break
            attempt = opened.attempt
            yield {"type": "retry", "attempt": opened.attempt, "max_retries": settings.max_retries,
                   "status": opened.status, "delay": opened.delay, "message": opened.message}
            await asyncio.sleep(opened.delay)
        async with aclosing(self._consume(opened, settings)) as items:
            async for item in items:
                yield item

    async def _open(self, request: dict[str, Any], settings: LLMSettings, attempt: int) -> Any:
        """The open stream, or a ``_Retry`` saying how long to wait before
        attempt ``attempt + 1``; raises ``GatewayError`` when retries are spent."""
        import anthropic

        options: dict[str, Any] = {}
        if settings.request_timeout != self.settings.request_timeout:
            options["timeout"] = settings.request_timeout
        try:
            return await self._client_for(settings).messages.create(**request, **options)
        except anthropic.APIStatusError as exc:
            status = exc.status_code
            message = _error_text(exc)
            if not (status == 429 or status >= 500) or attempt >= settings.max_retries:
                raise GatewayError(message, status, _error_kind(exc)) from None
            delay = _retry_delay(exc, attempt, settings.retry_base_delay)
            return _Retry(attempt + 1, status, delay, message)
        except (anthropic.APIConnectionError, anthropic.APITimeoutError) as exc:
            timed_out = isinstance(exc, anthropic.APITimeoutError)
            message = (f"the Messages API did not answer within {settings.request_timeout:g} s"
                       if timed_out else f"could not reach the Messages API: {exc}")
            if attempt >= settings.max_retries:
                raise GatewayError(message, None, "timeout" if timed_out else "connection_error") from None
            return _Retry(attempt + 1, None, _retry_delay(None, attempt, settings.retry_base_delay), message)

    async def _consume(self, stream: Any, settings: LLMSettings) -> AsyncIterator[dict[str, Any]]:
        import anthropic

        blocks: dict[int, dict[str, Any]] = {}
        partial: dict[int, list[str]] = {}
        message: dict[str, Any] = {"role": "assistant", "content": []}
        usage: dict[str, int] = {}
        try:
            async for event in stream:
                raw = event.model_dump(mode="json", exclude_none=True)
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
                        call = _finish_tool_use(block, "".join(partial.get(index, [])))
                        yield call
                elif kind == "message_delta":
                    delta = raw.get("delta") or {}
                    if "stop_reason" in delta:
                        message["stop_reason"] = delta["stop_reason"]
                    usage.update({k: v for k, v in (raw.get("usage") or {}).items()
                                  if isinstance(v, int)})
        except anthropic.APIError as exc:
            raise GatewayError(f"the model's stream broke off: {_error_text(exc)}",
                               getattr(exc, "status_code", None)) from None
        finally:
            try:
                await stream.close()
            except Exception:  # closing a finished or broken stream may fail; nothing to do
                pass
        message["content"] = [{k: v for k, v in blocks[i].items() if k != "input_error"}
                              for i in sorted(blocks)]
        model = message.get("model") or settings.model
        yield {"type": "done", "message": message, "usage": usage, "cost_usd": cost_of(model, usage)}


def _check_provider(settings: LLMSettings) -> None:
    if settings.provider != "anthropic":
        raise GatewayError(f"unknown LLM provider {settings.provider!r} (only 'anthropic' is supported)",
                           None, "unsupported_provider")


def _request(settings: LLMSettings, messages: list[dict[str, Any]], system: str) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": settings.model,
        "max_tokens": settings.max_tokens,
        "messages": messages,
        "stream": True,
    }
    if system:
        request["system"] = system
    if settings.temperature is not None:
        # Not a named parameter of every SDK version (2.x dropped it); the API takes it.
        request["extra_body"] = {"temperature": settings.temperature}
    return request


def _tool_param(tool: dict[str, Any]) -> dict[str, Any]:
    """The API's tool shape; our tools name their schema ``schema`` or ``input_schema``."""
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


def _error_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return f"{getattr(exc, 'status_code', '')} {error.get('type', '')}: {error['message']}".strip()
    return str(exc)


def _error_kind(exc: Any) -> str:
    status = getattr(exc, "status_code", None)
    if status in (401, 403):
        return "auth_failed"
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"].get("type") or "api_error"
    return "api_error"


def _retry_delay(exc: Any, attempt: int, base: float) -> float:
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    after = headers.get("retry-after") if hasattr(headers, "get") else None
    if after:
        try:
            return min(30.0, max(0.0, float(after)))
        except ValueError:
            pass
    return min(30.0, base * (2 ** attempt)) * (0.8 + 0.4 * random.random())


__all__ = ["DeltaCallback", "GatewayError", "LLMGateway", "ToolCallResult", "cost_of"]
