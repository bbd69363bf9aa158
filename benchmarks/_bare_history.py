"""The replay baseline: a bare aiohttp server that holds a stored
conversation in memory and sends it whole to each new tab.

Run as its own process (its RSS and start-up are its own): ``python
_bare_history.py --history <history.json>`` reads the file (pneuma's old
``{"version", "lastSeq", "messages"}`` document), serves ``GET
/api/session`` and ``/ws`` on 127.0.0.1 and prints ``ready
http://127.0.0.1:<port>/``. A socket gets ``session_init`` on connecting and,
for ``session_subscribe``, one ``message_history`` holding every message,
serialised then. No log, no window, no paging: what the simplest server
that keeps a conversation does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from _common import dumps, serve_forever
from aiohttp import web


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--history", required=True)
    args = parser.parse_args()
    stored = json.loads(Path(args.history).read_text(encoding="utf-8"))
    messages = stored["messages"]
    last_seq = stored["lastSeq"]

    async def session(request: web.Request) -> web.Response:
        return web.json_response({"session_id": "bare", "last_seq": last_seq})

    async def browser(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        await ws.send_str(dumps({"type": "session_init", "session": {"last_seq": last_seq}}))
        async for frame in ws:
            if json.loads(frame.data).get("type") == "session_subscribe":
                await ws.send_str(dumps({"type": "message_history", "messages": messages,
                                          "last_seq": last_seq}))
                await ws.send_str(dumps({"type": "status_change", "status": "idle"}))
        return ws

    app = web.Application()
    app.router.add_get("/api/session", session)
    app.router.add_get("/ws", browser)
    await serve_forever(app, "ready http://127.0.0.1:{port}/")


if __name__ == "__main__":
    asyncio.run(main())
