"""The memory baseline: a bare aiohttp relay from a fake agent CLI to the
browser sockets, keeping nothing.

Run as its own process (so its RSS is its own): ``python _bare_relay.py
--cli <script>`` starts ``<script>`` (a fake Claude Code CLI) on a pipe,
serves ``/ws`` on 127.0.0.1 and prints ``ready ws://127.0.0.1:<port>/ws``.
A ``user_message`` from a socket becomes a user line on the CLI's stdin;
each stdout line is parsed, reshaped as pneuma's browser message
(``stream_event``, ``assistant``, ``result``), numbered, serialised once and
written with ``await ws.send_str`` to every socket. No history, no replay
buffer, no state files: what any relay of these lines must hold, and no
more.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from _common import hold_socket, send_to_all, serve_forever, write_user_turn
from aiohttp import web


class Relay:
    def __init__(self, cli: str) -> None:
        self.cli_script = cli
        self.sockets: set[web.WebSocketResponse] = set()
        self.seq = 0
        self.cli: asyncio.subprocess.Process | None = None

    async def start_cli(self) -> None:
        self.cli = await asyncio.create_subprocess_exec(
            sys.executable, self.cli_script, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, limit=64 * 1024 * 1024)
        asyncio.get_running_loop().create_task(self.read_cli())

    async def read_cli(self) -> None:
        assert self.cli is not None and self.cli.stdout is not None
        while True:
            raw = await self.cli.stdout.readline()
            if not raw:
                return
            line = json.loads(raw)
            kind = line.get("type")
            if kind == "stream_event":
                message: dict[str, Any] = {"type": "stream_event", "event": line.get("event"),
                                           "parent_tool_use_id": line.get("parent_tool_use_id")}
            elif kind == "assistant":
                message = {"type": "assistant", "message": line.get("message"),
                           "parent_tool_use_id": line.get("parent_tool_use_id")}
            elif kind == "result":
                message = {"type": "result", "data": {k: line.get(k) for k in (
                    "subtype", "is_error", "duration_ms", "num_turns", "total_cost_usd",
                    "result", "usage")}}
            else:
                continue
            self.seq += 1
            message["seq"] = self.seq
            await send_to_all(self.sockets, message)

    async def to_cli(self, content: str) -> None:
        assert self.cli is not None
        await write_user_turn(self.cli, content)

    async def handler(self, request: web.Request) -> web.WebSocketResponse:
        return await hold_socket(request, self.sockets, self.on_text)

    async def on_text(self, text: str) -> None:
        data = json.loads(text)
        if data.get("type") == "user_message":
            await self.to_cli(data.get("content", ""))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    args = parser.parse_args()
    relay = Relay(args.cli)
    await relay.start_cli()
    app = web.Application()
    app.router.add_get("/ws", relay.handler)
    await serve_forever(app, "ready ws://127.0.0.1:{port}/ws")


if __name__ == "__main__":
    asyncio.run(main())
