"""BrowserConnection sends a lone message at once (no writer-task hop),
coalesces bursts into one frame, and keeps the order when aiohttp's flow
control makes a direct send wait."""

from __future__ import annotations

import asyncio

from pneuma.server.connection import BrowserConnection


class FakeSocket:
    """What BrowserConnection uses of a WebSocketResponse. ``gate``: a
    future every send awaits after writing (a full socket)."""

    def __init__(self) -> None:
        self.closed = False
        self.compress = 0
        self.frames: list[str] = []
        self.gate: asyncio.Future[None] | None = None

    async def send_str(self, text: str) -> None:
        self.frames.append(text)
        if self.gate is not None:
            await self.gate

    async def close(self, **_: object) -> None:
        self.closed = True


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_lone_message_is_written_before_send_returns():
    ws = FakeSocket()
    connection = BrowserConnection(ws)  # type: ignore[arg-type]
    await _settle()  # the writer waits for work
    connection.send("one")
    assert ws.frames == ["one"]
    await _settle()
    connection.send("two")  # a later loop turn: direct again
    assert ws.frames == ["one", "two"]
    await connection.close()


async def test_a_burst_costs_two_frames_in_order():
    ws = FakeSocket()
    connection = BrowserConnection(ws)  # type: ignore[arg-type]
    await _settle()
    for i in range(100):
        connection.send(f"m{i}")
    await _settle()
    assert ws.frames == ["m0", "\n".join(f"m{i}" for i in range(1, 100))]
    await connection.close()


async def test_a_direct_send_held_by_flow_control_keeps_the_order():
    ws = FakeSocket()
    connection = BrowserConnection(ws)  # type: ignore[arg-type]
    await _settle()
    ws.gate = asyncio.get_running_loop().create_future()
    connection.send("first")  # written, then aiohttp waits for the drain
    await _settle()
    connection.send("second")
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
    ws = FakeSocket()
    ws.compress = 15
    connection = BrowserConnection(ws)  # type: ignore[arg-type]
    await _settle()
    connection.send("one")
    assert ws.frames == []
    await _settle()
    assert ws.frames == ["one"]
    await connection.close()


async def test_a_socket_too_far_behind_is_closed():
    ws = FakeSocket()
    connection = BrowserConnection(ws, max_queued=10)  # type: ignore[arg-type]
    await _settle()
    ws.gate = asyncio.get_running_loop().create_future()  # the browser stopped reading
    for i in range(20):
        connection.send(f"m{i}")
    await _settle()
    assert connection.closed and ws.closed
    connection.send("after")
    assert "after" not in "".join(ws.frames)
    ws.gate.cancel()
    await connection.close()
