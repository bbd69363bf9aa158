"""BrowserConnection writes a broadcast frame at once when the tab keeps up
(no writer-task hop), queues and joins everything else, keeps the order
when aiohttp's flow control makes a direct write wait, and cuts off a tab
that falls too far behind."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import WSMsgType

from pneuma.server.connection import MAX_FRAME_BYTES, BrowserConnection, encode_frames


class FakeSocket:
    """What BrowserConnection uses of a WebSocketResponse. ``gate``: a
    future every send awaits after writing (a full socket)."""

    def __init__(self) -> None:
        self.closed = False
        self.close_code: int | None = None
        self.compress = 0
        self.frames: list[str] = []
        self.gate: asyncio.Future[None] | None = None

    async def send_frame(self, data: bytes, opcode: WSMsgType) -> None:
        assert opcode == WSMsgType.TEXT
        self.frames.append(data.decode())
        if self.gate is not None:
            await self.gate

    async def close(self, *, code: int = 1000, message: bytes = b"") -> None:
        self.closed = True
        self.close_code = code


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def connected(*, compress: int = 0,
                    **options: Any) -> tuple[FakeSocket, BrowserConnection]:
    """A connection over a fake socket, its writer task started and
    waiting for work."""
    ws = FakeSocket()
    ws.compress = compress
    connection = BrowserConnection(ws, **options)  # type: ignore[arg-type]
    await _settle()
    return ws, connection


def frame(*texts: str) -> tuple[bytes, int]:
    return "\n".join(texts).encode(), len(texts)


async def test_a_broadcast_frame_is_written_before_send_frame_returns():
    ws, connection = await connected()
    connection.send_frame(*frame("one"))
    assert ws.frames == ["one"]
    connection.send_frame(*frame("two", "three"))  # same turn: still at once
    assert ws.frames == ["one", "two\nthree"]
    await connection.close()


async def test_messages_for_one_tab_are_joined_by_the_writer_in_order():
    ws, connection = await connected()
    for i in range(100):
        connection.send(f"m{i}")
    connection.send_frame(*frame("b1", "b2"))  # behind them, not before
    assert ws.frames == []
    await _settle()
    assert ws.frames == ["\n".join([f"m{i}" for i in range(100)] + ["b1", "b2"])]
    await connection.close()


async def test_before_send_runs_before_a_message_for_one_tab():
    ws, connection = await connected()
    connection.before_send = lambda: connection.send_frame(*frame("broadcast"))
    connection.send("mine")
    await _settle()
    assert ws.frames == ["broadcast", "mine"]
    await connection.close()


async def test_a_direct_send_held_by_flow_control_keeps_the_order():
    ws, connection = await connected()
    ws.gate = asyncio.get_running_loop().create_future()
    connection.send_frame(*frame("first"))  # written, then aiohttp waits for the drain
    await _settle()
    connection.send_frame(*frame("second"))
    connection.send("third")
    await _settle()
    assert ws.frames == ["first"]  # nothing overtakes the unfinished send
    gate, ws.gate = ws.gate, None
    gate.set_result(None)
    await _settle()
    assert ws.frames == ["first", "second\nthird"]
    await connection.drain(1.0)
    await connection.close()


async def test_compressed_sockets_always_use_the_writer():
    ws, connection = await connected(compress=15)
    connection.send_frame(*frame("one"))
    assert ws.frames == []
    await _settle()
    assert ws.frames == ["one"]
    await connection.close()


async def test_a_socket_too_far_behind_is_closed_with_4008():
    ws, connection = await connected(max_queued=10)
    ws.gate = asyncio.get_running_loop().create_future()  # the browser stopped reading
    connection.send_frame(*frame("m0"))  # written; aiohttp now waits for the drain
    for i in range(1, 6):
        connection.send_frame(*frame(f"m{i}a", f"m{i}b"))  # 10 messages queued: not yet
    assert not connection.closed
    connection.send_frame(*frame("m6"))  # the 11th
    await _settle()
    assert connection.closed and ws.closed and ws.close_code == 4008
    connection.send_frame(*frame("after"))
    connection.send("after")
    assert "after" not in "".join(ws.frames)
    ws.gate.cancel()
    await connection.close()


def test_big_batches_are_cut_into_frames_of_about_max_frame_bytes():
    text = "x" * (MAX_FRAME_BYTES // 3)
    frames = encode_frames([text] * 7 + ["é"])
    assert sum(count for _, count in frames) == 8
    assert all(len(data) <= MAX_FRAME_BYTES for data, _ in frames)
    assert b"\n".join(data for data, _ in frames).decode().split("\n") == [text] * 7 + ["é"]
    # One message bigger than the limit is still one frame.
    assert encode_frames(["y" * (MAX_FRAME_BYTES + 5)]) == [(b"y" * (MAX_FRAME_BYTES + 5), 1)]
