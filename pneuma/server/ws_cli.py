"""``/ws/cli/{sid}``: the NDJSON socket of ADR-002 for agents that connect
by WebSocket.

The agent speaks Claude Code stream-json (docs/protocol-cli-socket.md);
``pneuma.agents.socket_agent.SocketAgentBackend`` runs the socket once this
handler has let it in. The security middleware has already checked the
token, Host and Origin. Refusals are plain HTTP answers before the upgrade:
404 for another session id, 409 when this session does not take socket
agents (it was not started with ``--backend socket``) or already has one
connected, 503 while the server stops.
"""

from __future__ import annotations

from aiohttp import web

from pneuma.server.config import SESSION
from pneuma.server.security import json_error

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a line may carry a whole file
CLOSE_TIMEOUT = 2.0


async def cli_socket(request: web.Request) -> web.StreamResponse:
    from pneuma.agents.socket_agent import SocketAgentBackend

    session = request.app[SESSION]
    sid = request.match_info["sid"]
    if sid != session.id:
        return json_error(404, "unknown_session", f"no session {sid!r} on this server")
    backend = session.backend
    if not isinstance(backend, SocketAgentBackend):
        if backend is None:
            return json_error(
                409, "no_socket_agent",
                f"this session runs without an agent (--backend {session.backend_name}); "
                "start `pneuma run --backend socket` to let an agent connect here",
            )  # fmt: skip
        return json_error(
            409, "agent_running",
            f"this session already runs an agent ({getattr(backend, 'name', 'unknown')}); "
            "agents connect by WebSocket only to a session started with "
            "`pneuma run --backend socket`",
        )  # fmt: skip
    refusal = backend.claim()
    if refusal is not None:
        return json_error(refusal.status, refusal.code, refusal.message)
    ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=MAX_MESSAGE_BYTES,
                               timeout=CLOSE_TIMEOUT)  # fmt: skip
    try:
        await ws.prepare(request)
    except BaseException:
        backend.release()
        raise
    await backend.serve(ws)
    return ws


def setup(app: web.Application) -> None:
    app.router.add_get("/ws/cli/{sid}", cli_socket)
