"""Agents that connect by WebSocket: ``pneuma run --backend socket``.

The agent comes to the server instead of being started by it
(docs/design/browser-protocol.md, "Two sockets"): it
opens ``/ws/cli/{session id}`` and speaks the Claude Code CLI's
stream-json over the socket exactly as the CLI does over stdio (see
docs/protocol-cli-socket.md). The translation is the one the stdio backend
uses (``pneuma.agents.stream_json.StreamJsonBridge``); this module only
manages the socket.

How an agent attaches (the choice made here): sockets are accepted only by
a session started with ``--backend socket``. That backend exists from the
start, so the person's messages are queued while no agent is connected and
delivered, in order, when one connects; the chat says where to connect.
A session that runs another backend answers ``/ws/cli`` with 409 (the
stdio CLI already is its agent; ``--backend none`` promises no agent). One
agent socket at a time: a second one gets 409 until the first closes; an
agent that drops may reconnect (``cli_connected`` / ``cli_disconnected``
tell the browser; docs/design/browser-protocol.md, "Pending queue").

On connect the server sends, in this order, the ``initialize``
control_request of the SDKs, ``set_model`` when a model was chosen
(``--model`` or the browser), then every queued user line (the mode's
greeting first on a fresh session). Permission prompts are always shown to
the person: the agent chose its own permission mode, and if it asks, the
person answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, NamedTuple

from pneuma.agents.stream_json import AgentLink
from pneuma.agents.stream_json_backend import StreamJsonBackend
from pneuma.core.backend import AgentEventSink, BackendOptions

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger(__name__)

CLOSE_GRACE = 2.0  # seconds stop() waits for the agent socket to close


class Refusal(NamedTuple):
    """Why an agent socket may not attach: the HTTP answer it gets."""

    status: int
    code: str
    message: str


class _SocketLink(AgentLink):
    """One agent WebSocket; every line goes out as its own text frame."""

    transport = "the agent socket"

    def __init__(self, ws: web.WebSocketResponse) -> None:
        super().__init__()
        self.ws = ws

    @property
    def alive(self) -> bool:
        return not self.ws.closed

    async def send_text(self, line: str) -> None:
        await self.ws.send_str(line)


class SocketAgentBackend(StreamJsonBackend):
    """An ``AgentBackend`` whose agent connects to ``/ws/cli/{sid}``."""

    name = "socket"

    def __init__(self, options: BackendOptions, sink: AgentEventSink) -> None:
        super().__init__(options, sink, permission_mode=None, logger=log)
        self._link: _SocketLink | None = None
        self._claimed = False  # a socket passed the checks and is being set up
        self._served: asyncio.Event | None = None  # set when the current socket is done
        self._lock = asyncio.Lock()  # keeps connect-time and later writes in order
        self._stopped = False
        self._told_waiting = False  # the chat was told where to connect

    @property
    def connected(self) -> bool:
        return self._link is not None and self._link.alive

    def connect_url(self) -> str:
        """Where an agent connects (without the token)."""
        base = self.options.api_url
        if base.startswith("https://"):
            base = "wss://" + base[len("https://"):]
        elif base.startswith("http://"):
            base = "ws://" + base[len("http://"):]
        return f"{base.rstrip('/')}/ws/cli/{self.options.session_id}"

    def waiting_text(self) -> str:
        return (
            "No agent is connected to this session yet. Messages you send wait and are "
            f"delivered when an agent connects to {self.connect_url()} with the session token "
            "(`Authorization: Bearer $PNEUMA_TOKEN`, or `?token=` with the token of the URL "
            "`pneuma run` printed) and speaks Claude Code stream-json "
            "(docs/protocol-cli-socket.md)."
        )

    def _set_reason(self, reason: str | None) -> None:
        # What session_init reports to a tab that opens now (Session.no_agent_reason).
        if hasattr(self.sink, "no_agent_reason"):
            self.sink.no_agent_reason = reason  # type: ignore[attr-defined]

    # -- AgentBackend ------------------------------------------------------------

    async def start(self) -> None:
        self._stopped = False
        if self.options.greeting and not self.agent_session_id:
            # Delivered first when the agent connects, never echoed to the chat.
            self.bridge.queue_user_message(self.options.greeting)
        if not self.connected:
            self._set_reason(self.waiting_text())
        log.info("waiting for an agent to connect to %s", self.connect_url())

    async def send_user_message(self, text: str, images: list[dict[str, str]]) -> None:
        self.bridge.queue_user_message(text, images)
        if self.connected:
            await self._pump()
            return
        if not self._told_waiting:
            self._told_waiting = True
            self.sink.emit({"type": "system_note", "code": "agent_waiting",
                            "message": self.waiting_text()})  # fmt: skip
        # Nothing runs until an agent takes the message.
        self.sink.emit({"type": "status_change", "status": "idle"})

    async def stop(self) -> None:
        self._stopped = True
        link, served = self._link, self._served
        if link is not None and not link.ws.closed:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    link.ws.close(code=1001, message=b"the Pneuma server is stopping"), CLOSE_GRACE
                )
        if served is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(served.wait(), CLOSE_GRACE)
        self.bridge.cancel_tasks()

    # -- the socket ------------------------------------------------------------

    def claim(self) -> Refusal | None:
        """Reserve the agent slot for a new socket: None when it is now
        reserved (then call ``serve``, or ``release`` if the socket never
        opens), else why it cannot attach."""
        if self._stopped:
            return Refusal(503, "stopping", "the Pneuma server is stopping")
        if self._claimed or self.connected:
            return Refusal(409, "agent_connected",
                           "an agent is already connected to this session "
                           "(one agent socket at a time)")  # fmt: skip
        self._claimed = True
        return None

    def release(self) -> None:
        """Give up a claim whose socket never got to ``serve``."""
        if self._link is None:
            self._claimed = False

    async def serve(self, ws: web.WebSocketResponse) -> None:
        """Run one prepared agent socket until it closes."""
        from aiohttp import WSMsgType

        link = _SocketLink(ws)
        served = asyncio.Event()
        self._served = served
        try:
            async with self._lock:
                self._link = link
                self.bridge.link = link
                self._told_waiting = False
                self._set_reason(None)
                log.info("an agent connected to %s", self.connect_url())
                self.sink.emit({"type": "cli_connected"})
                await self.bridge.initialize(link)
                if self.model:
                    await self.bridge.set_model(self.model, wait=False)
                await self.bridge.flush(link)
            feed = self.bridge.feed
            async for frame in ws:
                if frame.type == WSMsgType.TEXT:
                    feed(link, frame.data)
                elif frame.type == WSMsgType.BINARY:
                    feed(link, frame.data)  # NDJSON as UTF-8 bytes
                elif frame.type == WSMsgType.ERROR:
                    log.info("the agent socket failed: %s", ws.exception())
                    break
        finally:
            self._disconnected(link, ws.close_code)
            served.set()

    async def _pump(self) -> None:
        async with self._lock:
            link = self._link
            if link is not None and link.alive:
                await self.bridge.flush(link)

    def _disconnected(self, link: _SocketLink, close_code: int | None) -> None:
        bridge = self.bridge
        bridge.drop_link(link, "the agent disconnected")
        if self._link is link:
            self._link = None
        self._claimed = False
        bridge.end_link()
        log.info("the agent disconnected (close code %s)", close_code)
        self.sink.emit({"type": "cli_disconnected", "exit_code": None, "close_code": close_code,
                        "stderr": []})  # fmt: skip
        if not self._stopped:
            self._set_reason(self.waiting_text())
