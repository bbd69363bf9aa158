"""The baseline: a bare aiohttp WebSocket server pushing the same payloads.

No session, no replay buffer, no queue, no coalescing: each message is
serialised once (the same JSON pneuma sends, ``seq`` included) and written
with ``await ws.send_str(text)`` to every socket in turn. It can be fed
directly (``broadcast``) or from the same fake CLI pneuma's backend reads
(``start_cli`` + ``trigger``), parsing each stdout line as pneuma does.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from _common import (
    PYTHON,
    STREAM_CLI,
    burst_prompt,
    hold_socket,
    send_to_all,
    write_user_turn,
)
from aiohttp import web


class BareServer:
    def __init__(self) -> None:
        self.sockets: set[web.WebSocketResponse] = set()
        self.seq = 0
        self.runner: web.AppRunner | None = None
        self.url = ""
        self.cli: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/ws", self._handler)
        self.runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0, shutdown_timeout=0.5)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"ws://127.0.0.1:{port}/ws"

    async def _handler(self, request: web.Request) -> web.WebSocketResponse:
        return await hold_socket(request, self.sockets)

    async def wait_for_sockets(self, count: int, timeout: float = 10.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(self.sockets) < count:
            if loop.time() > deadline:
                raise RuntimeError(f"only {len(self.sockets)} of {count} sockets connected")
            await asyncio.sleep(0.005)

    async def broadcast(self, message: dict[str, Any]) -> None:
        self.seq += 1
        message["seq"] = self.seq
        await send_to_all(self.sockets, message)

    # --- fed by the fake CLI, like pneuma's backend ---

    async def start_cli(self, cwd: str) -> None:
        self.cli = await asyncio.create_subprocess_exec(
            PYTHON, str(STREAM_CLI), cwd=cwd, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, limit=64 * 1024 * 1024,
        )
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.cli is not None and self.cli.stdout is not None
        stream = self.cli.stdout
        while True:
            raw = await stream.readline()
            if not raw:
                return
            message = json.loads(raw)
            if message.get("type") == "stream_event":
                await self.broadcast({"type": "stream_event", "event": message.get("event"),
                                      "parent_tool_use_id": message.get("parent_tool_use_id")})

    async def trigger(self, count: int, rate: float = 0.0) -> None:
        assert self.cli is not None
        await write_user_turn(self.cli, burst_prompt(count, rate))

    async def stop(self) -> None:
        if self.cli is not None and self.cli.returncode is None:
            self.cli.stdin.close()  # type: ignore[union-attr]
            try:
                await asyncio.wait_for(self.cli.wait(), 2)
            except asyncio.TimeoutError:
                self.cli.kill()
                await self.cli.wait()
        if self._reader is not None:
            self._reader.cancel()
        for ws in list(self.sockets):
            await ws.close()
        if self.runner is not None:
            await self.runner.cleanup()
