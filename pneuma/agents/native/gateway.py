"""``LLMGateway``: one streamed model call with tools, on the anthropic SDK.

``stream_chat(messages, tools, context)`` yields, in order:

* ``{"type": "stream_event", "event": {...}}``: every Messages-API stream
  event as it arrives (the browser shows them as they are);
* ``{"type": "delta", "content": str}``: text as it streams;
* ``{"type": "tool_call", "toolCallId", "name", "arguments"}``: a complete
  tool call, once its JSON has fully arrived;
* ``{"type": "retry", "attempt", "status", "delay", "message"}``: the API
  answered 429/5xx (or could not be reached) before any output; we wait and
  try again, at most ``max_retries`` times;
* ``{"type": "done", "message": {id, role, content, stop_reason, model},
  "usage": {...}, "cost_usd": float}``.

Errors that cannot be retried raise ``GatewayError`` (with the HTTP status
when there is one). Cancelling the consuming task closes the HTTP stream.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import AsyncIterator
from typing import Any

from pneuma.agents.native.config import NativeConfig, api_credentials

log = logging.getLogger(__name__)

# USD per million tokens (input, output), by model-name prefix; first match wins.
PRICES: list[tuple[str, float, float]] = [
    ("claude-opus-4-5", 5.0, 25.0),
    ("claude-opus", 15.0, 75.0),
    ("claude-3-opus", 15.0, 75.0),
    ("claude-haiku-4", 1.0, 5.0),
    ("claude-3-5-haiku", 0.8, 4.0),
    ("claude-3-haiku", 0.25, 1.25),
    ("claude-sonnet", 3.0, 15.0),
    ("claude-3", 3.0, 15.0),
]
DEFAULT_PRICE = (3.0, 15.0)


def cost_of(model: str, usage: dict[str, int]) -> float:
    price_in, price_out = next(((i, o) for p, i, o in PRICES if model.startswith(p)), DEFAULT_PRICE)
    tokens_in = (usage.get("input_tokens") or 0) + (usage.get("cache_creation_input_tokens") or 0) * 1.25
    tokens_in += (usage.get("cache_read_input_tokens") or 0) * 0.1
    return round((tokens_in * price_in + (usage.get("output_tokens") or 0) * price_out) / 1e6, 6)


class GatewayError(RuntimeError):
    def __init__(self, message: str, status: int | None = None, kind: str = "api_error"):
        super().__init__(message)
        self.status = status
        self.kind = kind


class LLMGateway:
    def __init__(self, config: NativeConfig, env: dict[str, str]) -> None:
        self.config = config
        self.env = env
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            import anthropic

            self._client = anthropic.AsyncAnthropic(
                **api_credentials(self.env), max_retries=0, timeout=self.config.request_timeout
            )
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def stream_chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        context: dict[str, Any] | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """``context``: ``system`` (the system prompt) and optionally
        ``page``/``twin`` (appended to the system prompt as JSON)."""
        import anthropic

        context = context or {}
        system = context.get("system") or ""
        extra = {k: context[k] for k in ("page", "twin") if context.get(k)}
        if extra:
            system += "\n\n<runtime-context>\n" + json.dumps(extra, ensure_ascii=False) + "\n</runtime-context>"
        request: dict[str, Any] = {
            "model": self.config.model,
            "max_tokens": self.config.max_tokens,
            "messages": messages,
            "stream": True,
        }
        if system:
            request["system"] = system
        if tools:
            request["tools"] = [
                {"name": t["name"], "description": t["description"],
                 "input_schema": t.get("schema") or t.get("input_schema") or {"type": "object"}}
                for t in tools
            ]
        attempt = 0
        while True:
            try:
                stream = await self.client.messages.create(**request)
                break
            except anthropic.APIStatusError as exc:
                status = exc.status_code
                retryable = status == 429 or status >= 500
                message = _error_text(exc)
                if not retryable or attempt >= self.config.max_retries:
                    raise GatewayError(message, status, _error_kind(exc)) from None
                delay = _retry_delay(exc, attempt, self.config.retry_base_delay)
            except (anthropic.APIConnectionError, anthropic.APITimeoutError) as exc:
                message = f"could not reach the Messages API: {exc}"
                status = None
                if attempt >= self.config.max_retries:
                    raise GatewayError(message, None, "connection_error") from None
                delay = _retry_delay(None, attempt, self.config.retry_base_delay)
            attempt += 1
            yield {"type": "retry", "attempt": attempt, "max_retries": self.config.max_retries,
                   "status": status, "delay": delay, "message": message}
            await asyncio.sleep(delay)
        async for item in self._consume(stream):
            yield item

    async def _consume(self, stream: Any) -> AsyncIterator[dict[str, Any]]:
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
                        text = "".join(partial.get(index, []))
                        try:
                            block["input"] = json.loads(text) if text.strip() else {}
                        except ValueError:
                            block["input"] = {}
                            block["input_error"] = f"the tool input was not valid JSON: {text[:200]}"
                        yield {"type": "tool_call", "toolCallId": block.get("id"),
                               "name": block.get("name"), "arguments": block["input"]}
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
        content = []
        for index in sorted(blocks):
            block = {k: v for k, v in blocks[index].items() if k != "input_error"}
            content.append(block)
        message["content"] = content
        model = message.get("model") or self.config.model
        yield {"type": "done", "message": message, "usage": usage, "cost_usd": cost_of(model, usage)}


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
