"""One browser WebSocket with its own bounded send queue.

What a tab is sent travels as frames of newline-separated JSON messages,
UTF-8 encoded. The session joins and encodes what it broadcasts in one
event-loop turn once and hands the same bytes to every tab
(``send_frame``): a tab that is keeping up gets them written at once (see
``_write_now``), a tab that is behind queues them. Messages for one tab
alone (``send``, ``send_many``) are queued too. The writer task sends
whatever has queued up as frames of at most MAX_FRAME_BYTES. A browser
that falls too far behind (MAX_QUEUED_MESSAGES or MAX_QUEUED_BYTES) is
disconnected; it reconnects with ``session_subscribe`` and gets exactly
what it missed.

Bounds, and why: a frame closes at MAX_FRAME_BYTES (one message may be
bigger), because a browser handles a whole frame in one task and sees none
of its messages before the last byte has arrived; and nothing waits for a
slow tab: a write that would block is queued for that tab alone, so the
others get the same bytes at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Generator
from typing import Any

from aiohttp import WSMsgType, web

log = logging.getLogger(__name__)

MAX_QUEUED_MESSAGES = 50_000
# What a tab that stopped reading may hold in memory before it is cut off
# (4008): the message bound alone would let 50,000 big tool results pile up.
MAX_QUEUED_BYTES = 64 << 20
# A frame closes at this size. Small enough that a browser parses one in a
# few milliseconds and its first message is not held back for long behind
# the rest; big enough that one chunk of agent output (64 KiB of stdout, the
# stream-json bridge's batch) is still one frame.
MAX_FRAME_BYTES = 128 << 10

_TEXT = WSMsgType.TEXT


def encode(text: str) -> bytes:
    """UTF-8 for a frame. A lone surrogate (``json.dumps`` with
    ``ensure_ascii=False`` passes one through, e.g. from a ``"\\ud800"``
    escape the agent wrote) cannot be UTF-8: it is written as the same JSON
    escape, which stands for the same string (every such character of a
    message is inside a JSON string)."""
    return text.encode("utf-8", "backslashreplace")


def encode_frames(texts: list[str]) -> list[tuple[bytes, int]]:
    """Messages joined by newlines into frames of at most MAX_FRAME_BYTES
    (one message may be bigger), encoded: ``(bytes, messages)``."""
    data = encode("\n".join(texts))
    if len(data) <= MAX_FRAME_BYTES or len(texts) == 1:
        return [(data, len(texts))]
    frames: list[tuple[bytes, int]] = []
    batch: list[bytes] = []
    size = -1  # bytes of the frame being filled: its messages and the newlines between
    for text in texts:
        item = encode(text)
        if batch and size + 1 + len(item) > MAX_FRAME_BYTES:
            frames.append((b"\n".join(batch), len(batch)))
            batch = []
            size = -1
        batch.append(item)
        size += 1 + len(item)
    frames.append((b"\n".join(batch), len(batch)))
    return frames


class BrowserConnection:
    def __init__(self, ws: web.WebSocketResponse, *, max_queued: int | None = None):
        self.ws = ws
        self.subscribed = False
        self.closed = False
        # The server's own headless viewer (``?client=headless``), not a
        # person's tab: never counted as one (docs/viewer-contract.md).
        self.headless = False
        # Called before anything is sent to this tab alone: the session
        # hands out its pending broadcasts first, so the order is kept.
        self.before_send: Callable[[], None] | None = None
        self._queue: deque[tuple[bytes, int]] = deque()  # (frame bytes, messages in it)
        self._queued = 0  # messages in _queue
        self._queued_bytes = 0  # bytes in _queue
        self._max_queued = MAX_QUEUED_MESSAGES if max_queued is None else max_queued
        self._wakeup = asyncio.Event()
        self._idle = False  # the writer waits for work (nothing of ours is being written)
        self._unfinished: _Finish | None = None  # a direct send waiting for flow control
        self._writer = asyncio.get_running_loop().create_task(self._write_loop())

    def send(self, text: str) -> None:
        """Send one serialised message to this tab alone; never blocks.
        It goes through the writer task, which joins what queued up in the
        meantime into one frame (these are rare: the snapshot after a
        subscribe, an error, a request to this viewer)."""
        if self.before_send is not None:
            self.before_send()
        self._enqueue(encode(text), 1)

    def send_many(self, texts: list[str]) -> None:
        """Send serialised messages to this tab alone, in order, in few frames."""
        if not texts:
            return
        if self.before_send is not None:
            self.before_send()
        for data, count in encode_frames(texts):
            self._enqueue(data, count)

    def send_frame(self, data: bytes, count: int) -> None:
        """Send ``count`` messages already joined by newlines and encoded
        (the session hands the same bytes to every tab); never blocks.
        Written at once if this tab is keeping up, else queued."""
        if self._queue or not self._idle or self._unfinished is not None \
                or not self._write_now(data):
            self._enqueue(data, count)

    def _enqueue(self, data: bytes, count: int) -> None:
        if self.closed:
            return
        self._queue.append((data, count))
        self._queued += count
        self._queued_bytes += len(data)
        if self._queued > self._max_queued or self._queued_bytes > MAX_QUEUED_BYTES:
            self._fell_behind()
            return
        self._wakeup.set()

    def _fell_behind(self) -> None:
        log.warning("browser socket fell %d messages (%d bytes) behind; disconnecting it",
                    self._queued, self._queued_bytes)
        self._queue.clear()
        self._queued = 0
        self._queued_bytes = 0
        self.closed = True
        asyncio.get_running_loop().create_task(
            self.ws.close(code=4008, message=b"too far behind; reconnect with session_subscribe")
        )

    def _write_now(self, data: bytes) -> bool:
        """Write a frame at once, from the caller, instead of waking the
        writer task: one loop turn less before it leaves (the latency of
        paced streams), and no task switch per frame. (Broadcast frames are
        already batches: the session joins what a loop turn broadcasts.)
        False: not possible now (queue it).

        aiohttp's ``send_frame`` is a coroutine that, without compression,
        writes to the transport before its first await and only awaits when
        flow control says the socket is full. It is stepped once here; if it
        did have to wait, the writer task finishes it before anything else
        (so order is kept)."""
        ws = self.ws
        if self.closed or ws.closed or ws.compress:
            return False  # compressed frames take aiohttp's lock: the writer's job
        coro = ws.send_frame(data, _TEXT)
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
                    # What queued up goes out joined, in frames that close
                    # at MAX_FRAME_BYTES (a tab that is behind catches up in
                    # few frames, none of them unboundedly big).
                    frame, count = queue.popleft()
                    taken = len(frame)  # queued bytes this frame takes
                    if queue and taken + 1 + len(queue[0][0]) <= MAX_FRAME_BYTES:
                        parts = [frame]
                        size = taken
                        while queue and size + 1 + len(queue[0][0]) <= MAX_FRAME_BYTES:
                            item, more = queue.popleft()
                            parts.append(item)
                            size += 1 + len(item)
                            taken += len(item)
                            count += more
                        frame = b"\n".join(parts)
                    self._queued -= count
                    self._queued_bytes -= taken
                    if self.ws.closed:
                        return
                    await self.ws.send_frame(frame, _TEXT)
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
