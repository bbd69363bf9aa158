"""``/ws/browser/{sid}``: the page's socket (docs/design/browser-protocol.md, "Two sockets").

On connect the tab gets ``session_init``; it then sends
``session_subscribe {last_seq}`` (or passes ``?last_seq=`` in the URL) and
receives what it missed followed by everything live. A malformed message
gets an ``error`` reply; the socket stays open.
"""

from __future__ import annotations

import logging

from aiohttp import WSMsgType, web

from pneuma.core.messages import BadBrowserMessage, parse_browser_message
from pneuma.server.config import served_session
from pneuma.server.connection import BrowserConnection

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 32 * 1024 * 1024


async def browser_socket(request: web.Request) -> web.StreamResponse:
    session = served_session(request)
    # No permessage-deflate, though every browser offers it: the socket is
    # on 127.0.0.1, so compressing saves nothing, and it would cost a zlib
    # pass per tab for every frame (each tab has its own compression
    # context, so the frame the session encodes once for all tabs could
    # not be shared) and move every write to aiohttp's locked path: with
    # ten tabs that was most of the server's time in a stream.
    ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=MAX_MESSAGE_BYTES, compress=False)
    await ws.prepare(request)
    connection = BrowserConnection(ws)
    connection.headless = request.query.get("client") == "headless"
    session.attach(connection)
    if "last_seq" in request.query:
        try:
            session.subscribe(connection, max(0, int(request.query["last_seq"])))
        except ValueError:
            session.error_to(connection, "last_seq must be an integer")
    try:
        async for frame in ws:
            if frame.type == WSMsgType.TEXT:
                for line in frame.data.split("\n"):
                    if not line.strip():
                        continue
                    try:
                        message = parse_browser_message(line)
                    except BadBrowserMessage as exc:
                        session.error_to(connection, str(exc))
                        continue
                    except Exception as exc:  # a parser bug must not kill the socket either
                        log.exception("parsing a browser message failed")
                        session.error_to(connection, f"could not parse the message: {exc}")
                        continue
                    try:
                        await session.handle(connection, message)
                    except Exception as exc:  # one bad message never kills the socket
                        log.exception("handling a browser message failed")
                        session.error_to(connection, f"internal error: {exc}", "internal")
            elif frame.type == WSMsgType.BINARY:
                session.error_to(connection, "binary frames are not part of the protocol")
            elif frame.type == WSMsgType.ERROR:
                break
    finally:
        session.detach(connection)
        await connection.close()
    return ws


def setup(app: web.Application) -> None:
    app.router.add_get("/ws/browser/{sid}", browser_socket)
