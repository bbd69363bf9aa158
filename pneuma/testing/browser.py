"""A browser tab, as a test sees one: the protocol socket of ``/ws/browser/{sid}``.

The server coalesces queued messages into one text frame, one JSON message
per line; ``FrameClient`` splits every frame and hands the messages out one
at a time, keeping all of them in ``received``. ``BrowserTab`` is the tab
the page opens, and also checks that seq numbers only grow (the promise the
replay logic makes to every page); ``BrowserTab.full_history`` reads the
whole conversation, the newest part from ``message_history`` and the rest
a ``history_page`` at a time, as a page that scrolls to the top does.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from collections.abc import Callable
from typing import Any

import aiohttp

TIMEOUT = 3.0
"""Seconds a test waits for a message before it fails (loopback is fast)."""


class FrameClient:
    """Reads frames only when asked (``recv``), so a test decides what has
    arrived; ``_pending`` holds the messages read but not yet handed out."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse):
        self.ws = ws
        self.received: list[dict[str, Any]] = []
        self._pending: deque[dict[str, Any]] = deque()

    def _on_frame(self, data: str) -> None:
        """Called with every text frame before it is split."""

    def _on_message(self, message: dict[str, Any]) -> None:
        """Called with every message as it is read."""
        self.received.append(message)
        self._pending.append(message)

    async def _read_frame(self, timeout: float) -> None:
        frame = await self.ws.receive(timeout=timeout)
        if frame.type != aiohttp.WSMsgType.TEXT:
            raise ConnectionError(f"socket ended: {frame.type!r} {frame.data!r} {frame.extra!r}")
        self._on_frame(frame.data)
        for line in frame.data.split("\n"):
            if line.strip():
                self._on_message(json.loads(line))

    async def recv(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next message (of any type)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self._pending:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise asyncio.TimeoutError("no message")
            await self._read_frame(remaining)
        return self._pending.popleft()

    async def wait_until(self, predicate: Callable[[dict[str, Any]], bool],
                         timeout: float = TIMEOUT,
                         what: str = "matching message") -> dict[str, Any]:
        """Skip messages until one matches ``predicate``; ``what`` names it
        in the error."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"no {what} within {timeout} s; got "
                                     f"{[m.get('type') for m in self.received]}")
            try:
                message = await self.recv(remaining)
            except asyncio.TimeoutError:
                continue
            if predicate(message):
                return message

    async def _take(self, predicate: Callable[[dict[str, Any]], bool],
                   timeout: float = TIMEOUT, what: str = "matching message") -> dict[str, Any]:
        """The first message, read or still to come, that matches
        ``predicate``; unlike ``wait_until`` the others stay to be read, in
        order (by ``recv``, ``wait_for``, ...)."""
        for message in self._pending:
            if predicate(message):
                self._pending.remove(message)
                return message
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            seen = len(self._pending)
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"no {what} within {timeout} s; got "
                                     f"{[m.get('type') for m in self.received]}")
            try:
                await self._read_frame(remaining)
            except asyncio.TimeoutError:
                continue
            for message in list(itertools.islice(self._pending, seen, None)):
                if predicate(message):
                    self._pending.remove(message)
                    return message

    async def drain(self, quiet: float = 0.15) -> list[dict[str, Any]]:
        """Everything that arrives until the socket is quiet for ``quiet`` s."""
        got = []
        while True:
            try:
                got.append(await self.recv(quiet))
            except asyncio.TimeoutError:
                return got

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_str(json.dumps(message))

    async def send_raw(self, text: str) -> None:
        await self.ws.send_str(text)

    async def close(self) -> None:
        await self.ws.close()


class BrowserTab(FrameClient):
    """A browser tab: tracks ``last_seq`` and fails if it ever goes back."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse):
        super().__init__(ws)
        self.last_seq = 0

    def _on_message(self, message: dict[str, Any]) -> None:
        if "seq" in message:
            if message["seq"] <= self.last_seq:
                raise AssertionError(
                    f"seq went from {self.last_seq} to {message['seq']}: {message}")
            self.last_seq = message["seq"]
        elif message.get("type") == "message_history":
            self.last_seq = message["last_seq"]
        super()._on_message(message)

    async def wait_for(self, kind: str, timeout: float = TIMEOUT,
                       where: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
        """Skip messages until one of type ``kind`` (matching ``where``) arrives."""
        return await self.wait_until(
            lambda m: m.get("type") == kind and (where is None or where(m)), timeout, repr(kind))

    async def subscribe(self, last_seq: int | None = None) -> dict[str, Any]:
        """Subscribe and return the first reply (message_history, or the
        first replayed event)."""
        await self.send({"type": "session_subscribe",
                         "last_seq": self.last_seq if last_seq is None else last_seq})
        return await self.recv()

    async def say(self, text: str, **fields: Any) -> None:
        """Send the person's chat message, as the page does (``user_message``)."""
        await self.send({"type": "user_message", "content": text, **fields})

    async def full_history(self, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """The whole conversation, oldest first, as a reloaded page shows it
        once scrolled to the very top.

        The server sends a new tab only the newest part of a long
        conversation (``message_history``, with ``has_more`` and a
        ``before`` cursor); this subscribes again from 0 for it, then asks
        for ``history_page`` after ``history_page`` until ``has_more`` is
        false. Everything else that arrives meanwhile (live broadcasts)
        stays to be read, in order; the subscription's status snapshot is
        consumed. Fails (AssertionError) if the server cannot read its
        log (``error`` ``history_unavailable``) or does not answer within
        ``timeout`` seconds a step.
        """
        # Replies to what this sends, not a history or snapshot still unread.
        unread = {id(m) for m in self._pending}
        await self.send({"type": "session_subscribe", "last_seq": 0})
        history = await self._take(
            lambda m: m.get("type") == "message_history" and id(m) not in unread, timeout,
            "message_history")
        await self._take(
            lambda m: m.get("type") == "status_change" and "seq" not in m and id(m) not in unread,
            timeout, "status snapshot")
        messages = list(history["messages"])
        before = history.get("before") if history.get("has_more") else None
        while before is not None:
            await self.send({"type": "history_page", "before": before})
            page = await self._take(
                lambda m: m.get("type") == "history_page"
                or (m.get("type") == "error" and "seq" not in m), timeout, "history_page")
            if page["type"] == "error":
                raise AssertionError(f"asking for the history before {before} failed: {page}")
            messages[:0] = page["messages"]
            before = page.get("before") if page.get("has_more") else None
        return messages

    def broadcasts(self) -> list[dict[str, Any]]:
        """The messages received that carry a seq (the session's broadcasts)."""
        return [m for m in self.received if "seq" in m]


async def join_session(tab: FrameClient, *, subscribe: bool = True) -> None:
    """What the page does on opening its socket: wait for ``session_init``;
    then (unless ``subscribe=False``) subscribe from 0 and consume the
    ``message_history`` and the status snapshot (a ``status_change`` with
    no seq), so that the next message is whatever happens next."""
    init = await tab.recv()
    if init.get("type") != "session_init":
        raise AssertionError(f"the socket opened with {init!r}, not session_init")
    if not subscribe:
        return
    await tab.send({"type": "session_subscribe", "last_seq": 0})
    history = await tab.recv()
    if history.get("type") != "message_history":
        raise AssertionError(f"subscribing answered {history!r}, not message_history")
    status = await tab.recv()
    if status.get("type") != "status_change" or "seq" in status:
        raise AssertionError(f"after the history came {status!r}, not the status snapshot")
