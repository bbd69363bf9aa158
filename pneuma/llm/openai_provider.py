"""``provider = "openai"``: the Chat Completions API on the official
``openai`` SDK — OpenAI itself, and the servers that copy its API (DeepSeek,
Kimi, Qwen, Ollama, vLLM, llama.cpp, LM Studio).

The streamed ``chat.completion.chunk`` objects are turned into the
Messages-API stream events the gateway's callers already read: text deltas
become a text block's ``text_delta``s, each tool call (``delta.tool_calls``
by index) a ``tool_use`` block whose arguments stream as
``input_json_delta``, the finish reason the ``stop_reason`` and the final
usage chunk the usage.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

from pneuma.llm.anthropic_provider import error_text, retry_after
from pneuma.llm.openai_messages import chat_messages, chat_tool
from pneuma.llm.pricing import openai_cost_of
from pneuma.llm.provider import CallFailure, ChatRequest
from pneuma.llm.settings import (
    NO_KEY_PLACEHOLDER,
    OPENAI_DEFAULT_BASE_URL,
    LLMSettings,
    api_credentials,
    key_variable,
    openai_base_url,
)

STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use",
                "length": "max_tokens", "content_filter": "refusal"}


class OpenAIProvider:
    name = "openai"

    def client_key(self, settings: LLMSettings, env: Mapping[str, str]) -> tuple[Any, ...]:
        return tuple(sorted(api_credentials(settings, env).items()))

    def make_client(self, settings: LLMSettings, env: Mapping[str, str], timeout: float) -> Any:
        import openai

        credentials = api_credentials(settings, env)
        # The SDK refuses to start without a key; a local server takes any.
        return openai.AsyncOpenAI(api_key=credentials.get("api_key") or NO_KEY_PLACEHOLDER,
                                  base_url=credentials["base_url"], max_retries=0, timeout=timeout)

    def build(self, settings: LLMSettings, env: Mapping[str, str], call: ChatRequest) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": settings.model,
            "messages": chat_messages(call.system, call.messages),
            "stream": True,
            # Without it there is no usage at all in a stream.
            "stream_options": {"include_usage": True},
        }
        # OpenAI's newer models take only max_completion_tokens; the servers
        # that copy the API (Ollama, DeepSeek, older vLLM) know max_tokens.
        if openai_base_url(settings, env) == OPENAI_DEFAULT_BASE_URL:
            request["max_completion_tokens"] = settings.max_tokens
        else:
            request["max_tokens"] = settings.max_tokens
        if settings.temperature is not None:
            request["temperature"] = settings.temperature
        if call.tools:
            request["tools"] = [chat_tool(t) for t in call.tools]
        if call.force_tool:
            request["tool_choice"] = {"type": "function", "function": {"name": call.force_tool}}
        return request

    async def open(self, client: Any, request: dict[str, Any], settings: LLMSettings,
                   env: Mapping[str, str], options: dict[str, Any]) -> Any:
        import openai

        where = openai_base_url(settings, env)
        try:
            return await client.chat.completions.create(**request, **options)
        except openai.APIStatusError as exc:
            status = exc.status_code
            if status in (401, 403):
                raise CallFailure(_auth_message(exc, where, key_variable(settings, env)),
                                  status=status, kind="auth_failed") from None
            raise CallFailure(f"{where}: {error_text(exc)}", status=status, kind=_error_kind(exc),
                              retryable=status == 429 or status >= 500,
                              retry_after=retry_after(exc)) from None
        except openai.APITimeoutError:
            raise CallFailure(f"{where} did not answer within {settings.request_timeout:g} s",
                              kind="timeout", retryable=True) from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise CallFailure(f"could not reach the OpenAI-compatible server at {where} "
                              f"({type(cause).__name__}: {cause}); is it running, and is base_url "
                              "right (it usually ends in /v1)?",
                              kind="connection_error", retryable=True) from None

    async def events(self, stream: Any, settings: LLMSettings,
                     env: Mapping[str, str]) -> AsyncIterator[dict[str, Any]]:
        import openai

        translator = ChunkTranslator(settings.model)
        try:
            async for chunk in stream:
                for event in translator.chunk(chunk.model_dump(mode="json", exclude_none=True)):
                    yield event
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise CallFailure(f"the model's stream from {openai_base_url(settings, env)} broke off: "
                              f"{type(cause).__name__}: {cause}", kind="connection_error") from None
        except openai.APIError as exc:  # an error event inside the stream
            raise CallFailure(f"the model's stream from {openai_base_url(settings, env)} broke off: "
                              f"{error_text(exc)}", status=getattr(exc, "status_code", None)) from None
        except ValueError as exc:  # the SDK parses each data line with json.loads
            raise CallFailure(f"the model's stream from {openai_base_url(settings, env)} sent a line "
                              f"that is not valid JSON ({exc})", kind="invalid_response") from None
        except Exception as exc:  # the transport dropping the connection, unwrapped
            raise CallFailure(f"the model's stream from {openai_base_url(settings, env)} broke off: "
                              f"{type(exc).__name__}: {exc}", kind="connection_error") from None
        finally:
            try:
                await stream.close()
            except Exception:  # closing a finished or broken stream may fail; nothing to do
                pass
        if not translator.finished:
            # A stream that stops without a finish reason or [DONE] (a proxy
            # or server that gave up) is a cut answer, never a complete one.
            raise CallFailure(f"the model's stream from {openai_base_url(settings, env)} ended before "
                              "the model finished (no finish reason, no [DONE]): the answer was cut off",
                              kind="stream_cut")
        for event in translator.finish():
            yield event

    def cost(self, model: str, usage: Mapping[str, int]) -> float:
        return openai_cost_of(model, usage)


class ChunkTranslator:
    """``chat.completion.chunk`` dicts in, Messages-API stream events out."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.started = False
        self.next_index = 0
        self.text_index: int | None = None  # the open text block
        self.tool_index: dict[int, int] = {}  # the API's tool-call index -> our block index
        self.open_tools: list[int] = []
        self.tool_ids: dict[int, str] = {}  # our block index -> the call's id
        self.finish_reason: str | None = None
        self.usage: dict[str, int] = {}

    @property
    def finished(self) -> bool:
        """Whether the model said it finished (a finish reason arrived)."""
        return self.finish_reason is not None

    def chunk(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        events = self._start(chunk)
        if isinstance(chunk.get("usage"), dict):
            self.usage = _usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue  # we ask for one choice; ignore any other
            delta = choice.get("delta") or {}
            if delta.get("content"):
                events += self._text(delta["content"])
            for call in delta.get("tool_calls") or []:
                events += self._tool_call(call)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return events

    def finish(self) -> list[dict[str, Any]]:
        events = self._start({})
        events += self._close_text()
        for index in self.open_tools:
            events.append({"type": "content_block_stop", "index": index})
        self.open_tools = []
        stop = STOP_REASONS.get(self.finish_reason or "stop", "end_turn")
        if self.tool_index and stop == "end_turn":
            stop = "tool_use"  # some local servers say "stop" after a tool call
        events.append({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                       "usage": dict(self.usage)})
        events.append({"type": "message_stop"})
        return events

    def _start(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        if self.started:
            return []
        self.started = True
        return [{"type": "message_start", "message": {
            "id": chunk.get("id") or "chatcmpl-" + uuid.uuid4().hex[:24], "type": "message",
            "role": "assistant", "model": chunk.get("model") or self.model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0}}}]

    def _text(self, text: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        if self.text_index is None:
            self.text_index = self.next_index
            self.next_index += 1
            events.append({"type": "content_block_start", "index": self.text_index,
                           "content_block": {"type": "text", "text": ""}})
        events.append({"type": "content_block_delta", "index": self.text_index,
                       "delta": {"type": "text_delta", "text": text}})
        return events

    def _close_text(self) -> list[dict[str, Any]]:
        if self.text_index is None:
            return []
        index, self.text_index = self.text_index, None
        return [{"type": "content_block_stop", "index": index}]

    def _tool_call(self, call: dict[str, Any]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        function = call.get("function") or {}
        api_index = int(call.get("index") or 0)
        index = self.tool_index.get(api_index)
        if index is not None and call.get("id") and call["id"] != self.tool_ids.get(index):
            # A server that numbers no calls (every one "index 0") but gives
            # each its own id: a new id is a new call.
            index = None
        if index is None:
            events += self._close_text()
            index = self.tool_index[api_index] = self.next_index
            self.next_index += 1
            self.open_tools.append(index)
            call_id = self.tool_ids[index] = call.get("id") or "call_" + uuid.uuid4().hex[:24]
            events.append({"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": call_id, "name": function.get("name") or "", "input": {}}})
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send parsed JSON
            arguments = json.dumps(arguments)
        if arguments:
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": arguments}})
        return events


def _usage(raw: dict[str, Any]) -> dict[str, int]:
    usage = {"input_tokens": int(raw.get("prompt_tokens") or 0),
             "output_tokens": int(raw.get("completion_tokens") or 0)}
    cached = (raw.get("prompt_tokens_details") or {}).get("cached_tokens")
    if isinstance(cached, int) and cached:
        usage["cached_input_tokens"] = cached
    return usage


def _auth_message(exc: Any, where: str, variable: str | None) -> str:
    said = error_text(exc)
    if variable:
        return (f"{where} refused the API key in {variable} ({said}); "
                f"check {variable}, or set api_key_env to the variable that holds this server's key")
    return (f"{where} wants an API key and none was sent ({said}); "
            "set api_key_env to the name of the environment variable that holds it")


def _error_kind(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error") if isinstance(body.get("error"), dict) else body
        if isinstance(error.get("type"), str) and error["type"]:
            return error["type"]
    return "api_error"
