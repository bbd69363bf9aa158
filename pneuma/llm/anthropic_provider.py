"""``provider = "anthropic"``: the Messages API on the ``anthropic`` SDK.
Its stream events are already the gateway's neutral shape."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from pneuma.llm.pricing import cost_of
from pneuma.llm.provider import CallFailure, ChatRequest
from pneuma.llm.settings import LLMSettings, api_credentials


class AnthropicProvider:
    name = "anthropic"

    def client_key(self, settings: LLMSettings, env: Mapping[str, str]) -> tuple[Any, ...]:
        return tuple(sorted(api_credentials(settings, env).items()))

    def make_client(self, settings: LLMSettings, env: Mapping[str, str], timeout: float) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(**api_credentials(settings, env), max_retries=0, timeout=timeout)

    def build(self, settings: LLMSettings, env: Mapping[str, str], call: ChatRequest) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": settings.model,
            "max_tokens": settings.max_tokens,
            "messages": call.messages,
            "stream": True,
        }
        if call.system:
            request["system"] = call.system
        if settings.temperature is not None:
            # Not a named parameter of every SDK version (2.x dropped it); the API takes it.
            request["extra_body"] = {"temperature": settings.temperature}
        if call.tools:
            request["tools"] = [{"name": t["name"], "description": t["description"],
                                 "input_schema": t["input_schema"]} for t in call.tools]
        if call.force_tool:
            request["tool_choice"] = {"type": "tool", "name": call.force_tool}
        return request

    async def open(self, client: Any, request: dict[str, Any], settings: LLMSettings,
                   env: Mapping[str, str], options: dict[str, Any]) -> Any:
        import anthropic

        try:
            return await client.messages.create(**request, **options)
        except anthropic.APIStatusError as exc:
            status = exc.status_code
            raise CallFailure(error_text(exc), status=status, kind=_error_kind(exc),
                              retryable=status == 429 or status >= 500,
                              retry_after=retry_after(exc)) from None
        except (anthropic.APIConnectionError, anthropic.APITimeoutError) as exc:
            if isinstance(exc, anthropic.APITimeoutError):
                raise CallFailure(f"the Messages API did not answer within {settings.request_timeout:g} s",
                                  kind="timeout", retryable=True) from None
            raise CallFailure(f"could not reach the Messages API: {exc}",
                              kind="connection_error", retryable=True) from None

    async def events(self, stream: Any, settings: LLMSettings,
                     env: Mapping[str, str]) -> AsyncIterator[dict[str, Any]]:
        import anthropic

        try:
            async for event in stream:
                yield event.model_dump(mode="json", exclude_none=True)
        except anthropic.APIError as exc:
            raise CallFailure(f"the model's stream broke off: {error_text(exc)}",
                              status=getattr(exc, "status_code", None)) from None
        finally:
            try:
                await stream.close()
            except Exception:  # closing a finished or broken stream may fail; nothing to do
                pass

    def cost(self, model: str, usage: Mapping[str, int]) -> float:
        return cost_of(model, usage)


def error_text(exc: Any) -> str:
    """``"<status> <type>: <message>"`` from an SDK error's body (both SDKs)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error") if isinstance(body.get("error"), dict) else body
        if isinstance(error, dict) and error.get("message"):
            return f"{getattr(exc, 'status_code', '')} {error.get('type') or ''}: {error['message']}".strip()
    return str(exc)


def _error_kind(exc: Any) -> str:
    status = getattr(exc, "status_code", None)
    if status in (401, 403):
        return "auth_failed"
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"].get("type") or "api_error"
    return "api_error"


def retry_after(exc: Any) -> float | None:
    """The server's ``retry-after`` header, in seconds, when it sent one."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    after = headers.get("retry-after") if hasattr(headers, "get") else None
    if after:
        try:
            return max(0.0, float(after))
        except ValueError:
            return None
    return None
