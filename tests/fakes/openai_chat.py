"""A fake OpenAI Chat Completions API (``POST /v1/chat/completions``) on
127.0.0.1, for the LLM gateway's openai provider.

It streams ``chat.completion.chunk`` Server-Sent Events in the real shapes:
a first chunk with ``delta.role``, content deltas, ``delta.tool_calls``
(the first piece of a call carries ``id``, ``type`` and ``function.name``,
later pieces only ``function.arguments``), a chunk with the
``finish_reason``, and — when the request asks for
``stream_options.include_usage`` — a last chunk with empty ``choices`` and
the ``usage``, then ``data: [DONE]``. Errors answer OpenAI's error body
(``{"error": {"message", "type", "param", "code"}}``).

A test scripts the model's turns by pushing replies (like
``tests/fakes/anthropic_api.py``), or by words in the latest user message
when nothing is pushed:

- ``[tool: NAME {json}]``  a call of tool NAME with that JSON; once the tool
                           result comes back, ``Done: <the result>``
- ``[error: STATUS]``      an API error of that status
- anything else            ``TEXT_REPLY`` in small deltas

``push_drop`` closes the connection mid-stream (a server that crashed);
``push_cut`` ends the stream cleanly after some chunks, with no finish reason
and no ``[DONE]`` (a proxy that gave up); ``push_bad_line`` sends a line
that is not JSON after some chunks; ``tool_call(..., raw=...)`` streams
arguments that are not valid JSON.

With ``require_key`` set, a request without ``Authorization: Bearer
<that key>`` gets 401 ``invalid_api_key``. Every request body is kept
(``requests``), and its Authorization header (``keys``).

    async with FakeOpenAIChat(require_key="sk-test") as api:
        api.base_url                       # http://127.0.0.1:PORT/v1
        api.push(text("Hello"), tool_call("write", {"path": "a"}))
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.fake_server import (
    ScriptedFakeModelServer,
    chunks,
    open_event_stream,
    sse,
    text_of_content,
)

TEXT_REPLY = "Hello from the fake Chat Completions API."
_TOOL = re.compile(r"\[tool:\s*([A-Za-z0-9_.-]+)\s*(\{.*?\})\s*\]", re.S)
_ERROR = re.compile(r"\[error:\s*(\d{3})\s*\]")
_ERROR_TYPES = {401: ("invalid_request_error", "invalid_api_key"), 404: ("invalid_request_error", "model_not_found"),
                429: ("requests", "rate_limit_exceeded"), 500: ("server_error", None)}


@dataclass
class Text:
    text: str
    chunk: int = 6  # characters per content delta


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]
    id: str = field(default_factory=lambda: "call_" + uuid.uuid4().hex[:24])
    chunk: int = 12  # characters of JSON per arguments delta
    raw: str | None = None  # the arguments exactly as sent (may be broken JSON)

    @property
    def arguments_text(self) -> str:
        return self.raw if self.raw is not None else json.dumps(self.arguments)


@dataclass
class Reply:
    parts: list[Text | ToolCall]
    delay: float = 0.0  # seconds between chunks
    status: int = 200  # anything else answers an API error of that status
    message: str = "scripted error"
    drop_after: int | None = None  # close the connection after this many chunks (a crash mid-stream)
    cut_after: int | None = None  # end the stream cleanly after this many chunks, no finish, no [DONE]
    bad_line_after: int | None = None  # after this many chunks, a data line that is not JSON

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if any(isinstance(p, ToolCall) for p in self.parts) else "stop"


def text(value: str, chunk: int = 6) -> Text:
    return Text(value, chunk)


def tool_call(name: str, arguments: dict[str, Any], id: str | None = None, raw: str | None = None) -> ToolCall:
    call = ToolCall(name, arguments, id) if id else ToolCall(name, arguments)
    call.raw = raw
    return call


class _StreamEnds(Exception):
    """The scripted reply stops its stream here (cut, or after a bad line)."""


class FakeOpenAIChat(ScriptedFakeModelServer[Reply]):
    api_root = "/v1"
    shutdown_timeout = 0.5

    def __init__(self, model: str = "gpt-fake-1", require_key: str | None = None) -> None:
        super().__init__(model)
        self.require_key = require_key
        self.keys: list[str | None] = []  # each request's Authorization header

    # -- scripting -------------------------------------------------------------

    def push(self, *parts: Text | ToolCall | str, delay: float = 0.0) -> Reply:
        """Queue the next reply; a plain str is a text part."""
        return self.queue(Reply([text(p) if isinstance(p, str) else p for p in parts], delay=delay))

    def push_drop(self, *parts: Text | ToolCall | str, after: int = 2) -> Reply:
        """Queue a reply whose connection is closed after ``after`` chunks."""
        reply = self.push(*parts)
        reply.drop_after = after
        return reply

    def push_cut(self, *parts: Text | ToolCall | str, after: int = 2) -> Reply:
        """Queue a reply whose stream ends cleanly after ``after`` chunks,
        without a finish reason or ``[DONE]``."""
        reply = self.push(*parts)
        reply.cut_after = after
        return reply

    def push_bad_line(self, *parts: Text | ToolCall | str, after: int = 2) -> Reply:
        """Queue a reply that sends a data line that is not JSON after ``after`` chunks."""
        reply = self.push(*parts)
        reply.bad_line_after = after
        return reply

    def push_error(self, status: int, message: str = "scripted error") -> Reply:
        return self.queue(Reply([], status=status, message=message))

    def fail_always(self, status: int, message: str) -> None:
        self.failing = Reply([], status=status, message=message)

    # -- server ----------------------------------------------------------------

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_route("*", "/{tail:.*}", self._other)

    # -- handlers --------------------------------------------------------------

    async def _other(self, request: web.Request) -> web.Response:
        return _error(404, f"Unknown request URL: {request.method} {request.path}", "invalid_request_error", None)

    def _scripted(self, body: dict[str, Any]) -> Reply:
        if self.failing is not None:
            return self.failing
        if (queued := self.take_queued()) is not None:
            return queued
        messages = body.get("messages") or []
        if messages and messages[-1].get("role") == "tool":
            return Reply([text("Done: " + text_of_content(messages[-1].get("content"))[:200])])
        said = next((text_of_content(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
        if match := _ERROR.search(said):
            return Reply([], status=int(match.group(1)), message="scripted by the prompt")
        if match := _TOOL.search(said):
            return Reply([tool_call(match.group(1), json.loads(match.group(2)))])
        return Reply([text(TEXT_REPLY)])

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await self.read_body(request)
        header = request.headers.get("Authorization")
        self.keys.append(header)
        if self.require_key is not None and header != f"Bearer {self.require_key}":
            return _error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        reply = self._scripted(body)
        if reply.status != 200:
            kind, code = _ERROR_TYPES.get(reply.status, ("api_error", None))
            return _error(reply.status, reply.message, kind, code)
        completion_id = f"chatcmpl-fake{next(self._ids):04d}"
        model = body.get("model") or self.model
        if not body.get("stream"):
            return web.json_response(self._whole(completion_id, model, reply, body))
        return await self._stream(request, completion_id, model, reply, body)

    def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        prompt = max(1, len(json.dumps(body.get("messages") or [])) // 4)
        completion = max(1, sum(len(p.text) if isinstance(p, Text) else len(p.arguments_text)
                                for p in reply.parts) // 4)
        return {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                              "accepted_prediction_tokens": 0,
                                              "rejected_prediction_tokens": 0}}

    def _whole(self, completion_id: str, model: str, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        content = "".join(p.text for p in reply.parts if isinstance(p, Text)) or None
        calls = [{"id": p.id, "type": "function", "function": {"name": p.name, "arguments": p.arguments_text}}
                 for p in reply.parts if isinstance(p, ToolCall)]
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        if calls:
            message["tool_calls"] = calls
        return {"id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": reply.finish_reason}],
                "usage": self._usage(body, reply), "system_fingerprint": "fp_fake"}

    async def _stream(self, request: web.Request, completion_id: str, model: str, reply: Reply,
                      body: dict[str, Any]) -> web.StreamResponse:
        response = await open_event_stream(request, "x-request-id")
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        created = int(time.time())
        sent = itertools.count(1)

        async def send(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> None:
            number = next(sent)
            if reply.drop_after is not None and number > reply.drop_after:
                assert request.transport is not None
                request.transport.close()  # mid-body: the client sees an incomplete chunked read
                raise ConnectionResetError("the fake dropped the stream")
            if reply.cut_after is not None and number > reply.cut_after:
                raise _StreamEnds
            if reply.bad_line_after is not None and number > reply.bad_line_after:
                await response.write(b'data: {"id": "chatcmpl-broken", "choices": [\n\n')
                raise _StreamEnds
            chunk: dict[str, Any] = {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                                     "model": model, "system_fingerprint": "fp_fake", "choices": choices}
            if include_usage:
                chunk["usage"] = usage
            await response.write(sse(chunk))
            if reply.delay:
                await asyncio.sleep(reply.delay)

        def choice(delta: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
            return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]

        try:
            await self._write_reply(reply, send, choice)
            if include_usage:  # the last chunk: no choices, only the usage
                await send([], self._usage(body, reply))
        except ConnectionResetError:
            return response
        except _StreamEnds:
            await response.write_eof()
            return response
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _write_reply(self, reply: Reply, send: Any, choice: Any) -> None:
        """The role chunk, the content and tool-call deltas, the finish reason."""
        await send(choice({"role": "assistant", "content": "", "refusal": None}))
        call_index = 0
        for part in reply.parts:
            if isinstance(part, Text):
                for piece in chunks(part.text, part.chunk):
                    await send(choice({"content": piece}))
                continue
            await send(choice({"tool_calls": [{"index": call_index, "id": part.id, "type": "function",
                                               "function": {"name": part.name, "arguments": ""}}]}))
            for piece in chunks(part.arguments_text, part.chunk):
                await send(choice({"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]}))
            call_index += 1
        await send(choice({}, reply.finish_reason))


def _error(status: int, message: str, kind: str, code: str | None) -> web.Response:
    return web.json_response({"error": {"message": message, "type": kind, "param": None, "code": code}},
                             status=status)
