"""One browser WebSocket with its own bounded send queue.

Messages are serialised once by the session and handed to every connection
as text. Each connection's writer task drains whatever has queued up and
sends it as a single frame of newline-separated JSON messages, so a burst of
stream deltas costs one frame, not one per delta. A browser that falls too
far behind is disconnected; it reconnects with ``session_subscribe`` and
gets exactly what it missed.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque

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
        self._writer = asyncio.get_running_loop().create_task(self._write_loop())

    def send(self, text: str) -> None:
        """Queue one serialised message; never blocks."""
        if self.closed:
            return
        self._queue.append(text)
        if len(self._queue) > self._max_queued:
            log.warning("browser socket fell %d messages behind; disconnecting it", len(self._queue))
            self._queue.clear()
            self.closed = True
            asyncio.get_running_loop().create_task(
                self.ws.close(code=4008, message=b"too far behind; reconnect with session_subscribe")
            )
        self._wakeup.set()

    async def _write_loop(self) -> None:
        queue = self._queue
        try:
            while True:
                await self._wakeup.wait()
                self._wakeup.clear()
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
        deadline = asyncio.get_running_loop().time() + timeout
        while self._queue and not self.closed and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        self.closed = True
        self._writer.cancel()
        if not self.ws.closed:
            await self.ws.close()
