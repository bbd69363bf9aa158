"""A fake Anthropic Messages API for driving the real Claude Code CLI offline.

The CLI posts ``/v1/messages?beta=true`` with ``stream: true`` and reads
Server-Sent Events. A test scripts the model's turns by pushing replies
(lists of blocks) before or while the CLI runs; every request body is kept
so the test can check what the CLI sent (tool results, the resumed history).

Requests that carry no tools are the CLI's own side requests (titles, quota
probes, summaries); they never consume a scripted reply and get a short text.
A conversation request with an empty script gets ``DEFAULT_TEXT``.

    api = FakeAnthropicAPI()
    await api.start()                      # api.base_url -> ANTHROPIC_BASE_URL
    api.push(text("Hello there"))
    api.push(tool_use("Write", {"file_path": "a.txt", "content": "x"}), text("done"))
    ...
    api.conversation_requests()[-1]["messages"]
    await api.close()
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.fake_server import (
    ScriptedFakeModelServer,
    chunks,
    open_event_stream,
    sse,
)

DEFAULT_TEXT = "(the fake API has no scripted reply)"
SIDE_TEXT = "ok"


@dataclass
class TextBlock:
    text: str
    chunk: int = 8  # characters per text_delta


@dataclass
class ToolUseBlock:
    name: str
    input: dict[str, Any]
    id: str = field(default_factory=lambda: "toolu_" + uuid.uuid4().hex[:24])
    chunk: int = 16  # characters of JSON per input_json_delta


@dataclass
class Reply:
    blocks: list[TextBlock | ToolUseBlock]
    delay: float = 0.0  # seconds between deltas (interrupt tests stream slowly)
    status: int = 200  # anything else answers an API error of that status
    error_type: str = "api_error"
    error_message: str = "scripted error"

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(isinstance(b, ToolUseBlock) for b in self.blocks) else "end_turn"


def text(value: str, chunk: int = 8) -> TextBlock:
    return TextBlock(value, chunk)


def tool_use(name: str, input: dict[str, Any], id: str | None = None) -> ToolUseBlock:
    return ToolUseBlock(name, input, id) if id else ToolUseBlock(name, input)


class FakeAnthropicAPI(ScriptedFakeModelServer[Reply]):
    """An aiohttp server on 127.0.0.1 (random port) speaking enough of the Messages API.

    ``requests`` holds every POSTed /v1/messages body, in order."""

    client_max_size = 256 * 1024 * 1024
    shutdown_timeout = 0.5

    def __init__(self, model: str = "claude-fake-1") -> None:
        super().__init__(model)
        self.streams_started = asyncio.Event()  # set when a conversation stream begins
        self.streams_finished = 0
        self.streams_aborted = 0  # client went away mid-stream (an interrupt)

    # -- scripting -------------------------------------------------------------

    def push(self, *blocks: TextBlock | ToolUseBlock | str, delay: float = 0.0) -> Reply:
        """Queue the next conversation reply; a plain str is a text block."""
        return self.queue(Reply([text(b) if isinstance(b, str) else b for b in blocks], delay=delay))

    def push_error(self, status: int, error_type: str, message: str) -> Reply:
        """Queue an API error (e.g. 401 authentication_error) for the next conversation request."""
        return self.queue(Reply([], status=status, error_type=error_type, error_message=message))

    def fail_always(self, status: int, error_type: str, message: str) -> None:
        """Answer every request with this API error (a revoked key, an outage)."""
        self.failing = Reply([], status=status, error_type=error_type, error_message=message)

    def conversation_requests(self) -> list[dict[str, Any]]:
        """Requests from the agent loop itself (they offer tools)."""
        return [r for r in self.requests if r.get("tools")]

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool_result block the CLI sent back, oldest first, without repeats."""
        seen: dict[str, dict[str, Any]] = {}
        for body in self.conversation_requests():
            for message in body.get("messages", []):
                content = message.get("content")
                if message.get("role") != "user" or not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        seen.setdefault(block["tool_use_id"], block)
        return list(seen.values())

    # -- server ----------------------------------------------------------------

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/messages/count_tokens", self._count_tokens)
        app.router.add_route("*", "/{tail:.*}", self._other)

    # -- handlers --------------------------------------------------------------

    async def _other(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"type": "error", "error": {"type": "not_found_error", "message": f"no route {request.path}"}},
            status=404,
        )

    async def _count_tokens(self, request: web.Request) -> web.Response:
        body = await request.json()
        return web.json_response({"input_tokens": max(1, len(json.dumps(body)) // 4)})

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        if self.failing is not None:
            return self.failing
        if not body.get("tools"):
            return Reply([text(SIDE_TEXT)])
        if (queued := self.take_queued()) is not None:
            return queued
        return Reply([text(DEFAULT_TEXT)])

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await self.read_body(request)
        reply = self._next_reply(body)
        if reply.status != 200:
            return web.json_response(
                {"type": "error", "error": {"type": reply.error_type, "message": reply.error_message}},
                status=reply.status,
                headers={"request-id": "req_fake_" + uuid.uuid4().hex[:12]},
            )
        message_id = f"msg_fake_{next(self._ids):04d}"
        if not body.get("stream"):
            return web.json_response(self._whole_message(message_id, reply, body))
        return await self._stream(request, message_id, reply, body)

    def _whole_message(self, message_id: str, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for block in reply.blocks:
            if isinstance(block, TextBlock):
                content.append({"type": "text", "text": block.text})
            else:
                content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
        return {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": body.get("model", self.model),
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    async def _stream(
        self, request: web.Request, message_id: str, reply: Reply, body: dict[str, Any]
    ) -> web.StreamResponse:
        response = await open_event_stream(request, "request-id")
        conversation = bool(body.get("tools"))
        if conversation:
            self.streams_started.set()

        async def send(event: str, data: dict[str, Any], pause: bool = False) -> None:
            await response.write(sse(data, event))
            if pause and reply.delay:
                await asyncio.sleep(reply.delay)

        try:
            await send(
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": body.get("model", self.model),
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {
                            "input_tokens": 10,
                            "output_tokens": 1,
                            "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 0,
                        },
                    },
                },
            )
            for index, block in enumerate(reply.blocks):
                if isinstance(block, TextBlock):
                    start = {"type": "text", "text": ""}
                    deltas = [{"type": "text_delta", "text": c} for c in chunks(block.text, block.chunk)]
                else:
                    start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
                    deltas = [
                        {"type": "input_json_delta", "partial_json": c}
                        for c in chunks(json.dumps(block.input), block.chunk)
                    ]
                await send("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
                for delta in deltas:
                    await send(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                        pause=True,
                    )
                await send("content_block_stop", {"type": "content_block_stop", "index": index})
            await send(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            )
            await send("message_stop", {"type": "message_stop"})
            await response.write_eof()
        except (ConnectionResetError, asyncio.CancelledError):
            self.streams_aborted += 1
            raise
        self.streams_finished += 1
        return response
