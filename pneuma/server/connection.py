"""One browser WebSocket with its own bounded send queue.

Messages are serialised once by the session and handed to every connection
as text. Each connection's writer task drains whatever has queued up and
sends it as a single frame of newline-separated JSON messages, so a burst of
stream deltas costs one frame, not one per delta; a message that arrives
on its own is written at once by ``send`` (see ``_write_now``). A browser
that falls too far behind is disconnected; it reconnects with
``session_subscribe`` and gets exactly what it missed.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Generator
from typing import Any

from aiohttp import web

log = logging.getLogger(__name__)

MAX_QUEUED_MESSAGES = 50_000
MAX_FRAME_BYTES = 1 << 20


class BrowserConnection:
    def __init__(self, ws: web.WebSocketResponse, *, max_queued: int = MAX_QUEUED_MESSAGES):
        self.ws = ws
        self.subscribed = False
        self.closed = False
        self._queue: deque[str] = deque()
        self._max_queued = max_queued
        self._wakeup = asyncio.Event()
        self._idle = False  # the writer waits for work (nothing of ours is being written)
        self._direct_used = False  # a message was sent directly in this loop turn
        self._unfinished: _Finish | None = None  # a direct send waiting for flow control
        self._writer = asyncio.get_running_loop().create_task(self._write_loop())

    def send(self, text: str) -> None:
        """Queue one serialised message; never blocks."""
        if self.closed:
            return
        queue = self._queue
        if queue:
            # The writer is already due to send what is queued (woken, or
            # between two frames): no need to wake it again.
            queue.append(text)
            if len(queue) > self._max_queued:
                self._fell_behind()
            return
        if self._idle and not self._direct_used and self._unfinished is None:
            if self._write_now(text):
                return
        queue.append(text)
        self._wakeup.set()

    def _fell_behind(self) -> None:
        log.warning("browser socket fell %d messages behind; disconnecting it", len(self._queue))
        self._queue.clear()
        self.closed = True
        asyncio.get_running_loop().create_task(
            self.ws.close(code=4008, message=b"too far behind; reconnect with session_subscribe")
        )

    def _write_now(self, text: str) -> bool:
        """Send a message that arrives on its own at once, from the caller,
        instead of waking the writer task: one loop turn less before it
        leaves (the latency of paced streams). Only the first message of a
        loop turn goes this way; the rest of a burst queues up behind it and
        the writer sends it as one frame. False: not possible now (queue it).

        aiohttp's ``send_str`` is a coroutine that, without compression,
        writes to the transport before its first await and only awaits when
        flow control says the socket is full. It is stepped once here; if it
        did have to wait, the writer task finishes it before anything else
        (so order is kept)."""
        ws = self.ws
        if ws.closed or ws.compress:
            return False  # compressed frames take aiohttp's lock: the writer's job
        self._direct_used = True
        asyncio.get_running_loop().call_soon(self._end_turn)
        coro = ws.send_str(text)
        try:
            waiting = coro.send(None)
        except StopIteration:
            return True
        except (ConnectionResetError, RuntimeError):
            self.closed = True
            return True
        # Flow control: the frame is written, aiohttp waits for the drain.
        self._unfinished = _Finish(coro, waiting)
        self._wakeup.set()
        return True

    def _end_turn(self) -> None:
        self._direct_used = False

    async def _write_loop(self) -> None:
        queue = self._queue
        try:
            while True:
                self._idle = True
                await self._wakeup.wait()
                self._idle = False
                self._wakeup.clear()
                if self._unfinished is not None:
                    unfinished, self._unfinished = self._unfinished, None
                    await unfinished
                while queue:
                    if len(queue) == 1:
                        frame = queue.popleft()
                    else:
                        batch: list[str] = []
                        size = 0
                        while queue and size < MAX_FRAME_BYTES:
                            item = queue.popleft()
                            batch.append(item)
                            size += len(item)
                        frame = "\n".join(batch)
                    if self.ws.closed:
                        return
                    await self.ws.send_str(frame)
        except (ConnectionResetError, RuntimeError, asyncio.CancelledError):
            return
        finally:
            self.closed = True

    async def drain(self, timeout: float = 2.0) -> None:
        """Wait until everything queued has been written (used before closing)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (self._queue or self._unfinished is not None) and not self.closed \
                and loop.time() < deadline:
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        self.closed = True
        self._writer.cancel()
        if not self.ws.closed:
            await self.ws.close()


class _Finish:
    """Awaitable that finishes a coroutine started by hand (``coro.send``)
    which stopped at ``waiting``, a future it awaits: the awaiting task
    first waits for that future as the coroutine would have, then resumes
    the coroutine (``yield from`` passes on results, exceptions and
    cancellation)."""

    def __init__(self, coro: Any, waiting: Any) -> None:
        self.coro = coro
        self.waiting = waiting

    def __await__(self) -> Generator[Any, None, Any]:
        try:
            yield self.waiting
        except BaseException:
            self.coro.close()
            raise
        return (yield from self.coro.__await__())
