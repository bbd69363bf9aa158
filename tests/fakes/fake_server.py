"""What the fake model APIs (``anthropic_api.py``, ``openai_chat.py``,
``openai_responses.py``) share: an aiohttp server on 127.0.0.1 at a port the
kernel picks, the record of what clients asked for, Server-Sent Events, and
the queue of replies a test scripts.

Each fake keeps its own protocol (routes, event shapes, error bodies,
defaults) in its own file; only the plumbing that is the same for all of
them lives here, so a fix to starting, stopping or streaming lands in one
place.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Self, TypeVar

from aiohttp import web

ReplyT = TypeVar("ReplyT")


def chunks(value: str, size: int) -> list[str]:
    """``value`` in pieces of ``size`` characters, as a model streams deltas;
    an empty string is one empty piece (a delta is still sent)."""
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


def text_of_content(content: Any) -> str:
    """The text of an OpenAI message's ``content``: a str, or a list of parts
    whose ``text`` fields are joined; anything else is no text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def sse(data: dict[str, Any], event: str | None = None) -> bytes:
    """One Server-Sent Event: ``data`` as JSON, after an ``event:`` line when
    the protocol names its events (Anthropic, Responses; Chat does not)."""
    head = f"event: {event}\n" if event is not None else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


async def open_event_stream(request: web.Request, request_id_header: str | None = None) -> web.StreamResponse:
    """Start a ``text/event-stream`` answer to ``request``; with
    ``request_id_header`` it carries a fresh ``req_fake_…`` id under that
    name, as the real APIs do (``request-id``, ``x-request-id``)."""
    headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    if request_id_header is not None:
        headers[request_id_header] = "req_fake_" + uuid.uuid4().hex[:12]
    response = web.StreamResponse(headers=headers)
    await response.prepare(request)
    return response


class FakeModelServer:
    """A fake model API served by aiohttp on 127.0.0.1 (random port).

    Subclasses add their routes in ``add_routes`` and read request bodies
    with ``read_body`` (which keeps them in ``requests``); every path asked
    for, whatever the method and route, is kept in ``paths``. ``start()``
    returns ``base_url``: ``http://127.0.0.1:PORT`` followed by
    ``api_root`` (``/v1`` where clients expect it in the base URL).

        async with FakeXxx() as api:  # or: await api.start() ... await api.close()
            api.base_url
    """

    api_root = ""  # appended to http://127.0.0.1:PORT in base_url
    client_max_size = 64 * 1024 * 1024  # request bodies carry whole conversations
    shutdown_timeout = 60.0  # seconds close() waits for requests still being answered

    def __init__(self, model: str) -> None:
        self.model = model
        self.requests: list[dict[str, Any]] = []  # every body read by read_body, in order
        self.paths: list[str] = []  # every path asked for, whatever the method
        self.base_url = ""
        self._ids = itertools.count(1)  # numbers the ids of messages, calls, responses
        self._runner: web.AppRunner | None = None

    def add_routes(self, app: web.Application) -> None:
        raise NotImplementedError

    async def read_body(self, request: web.Request) -> dict[str, Any]:
        body = await request.json()
        self.requests.append(body)
        return body

    @web.middleware
    async def _record_path(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        self.paths.append(request.path)
        return await handler(request)

    async def start(self) -> str:
        app = web.Application(client_max_size=self.client_max_size, middlewares=[self._record_path])
        self.add_routes(app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=self.shutdown_timeout)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}{self.api_root}"
        return self.base_url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class ScriptedFakeModelServer(FakeModelServer, Generic[ReplyT]):
    """A fake whose replies a test queues (``push…``) before or while its
    client runs, and which can be told to fail every request
    (``fail_always``, a revoked key or an outage). The reply types and the
    defaults for an empty queue are each protocol's own."""

    def __init__(self, model: str) -> None:
        super().__init__(model)
        self._script: deque[ReplyT] = deque()
        self.failing: ReplyT | None = None  # set by fail_always(): every request gets this error

    def queue(self, reply: ReplyT) -> ReplyT:
        self._script.append(reply)
        return reply

    def take_queued(self) -> ReplyT | None:
        """The next queued reply, or None when the test queued nothing more."""
        return self._script.popleft() if self._script else None

    @property
    def pending(self) -> int:
        """How many queued replies no request has taken yet."""
        return len(self._script)
