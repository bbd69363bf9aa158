"""``/ws/cli/{sid}``: the NDJSON socket for agents that connect by WebSocket
(docs/design/browser-protocol.md, "Two sockets").

The agent speaks Claude Code stream-json (docs/protocol-cli-socket.md);
the backend that takes it (``core.backend.TakesAgentSocket``; today
``--backend socket``) runs the socket once this handler has let it in. The security middleware has already checked the
token, Host and Origin. Refusals are HTTP answers in the one error shape
before the upgrade: ``E_NOT_FOUND`` (404) for another session id,
``E_CONFLICT`` (409) when this session does not take socket agents (it was
not started with ``--backend socket``) or already has one connected,
``E_UNAVAILABLE`` (503) while the server stops; ``details.reason`` says which.
"""

from __future__ import annotations

from aiohttp import web

from pneuma.core.backend import TakesAgentSocket
from pneuma.core.errors import ErrorCode, ToolError
from pneuma.server.config import served_session

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a line may carry a whole file
CLOSE_TIMEOUT = 2.0
# The socket backend's refusals by their status: 409 another agent socket is
# connected, 503 the server is stopping.
_REFUSAL_CODES: dict[int, ErrorCode] = {409: "E_CONFLICT", 503: "E_UNAVAILABLE"}


async def cli_socket(request: web.Request) -> web.StreamResponse:
    session = served_session(request)
    backend = session.backend
    if not isinstance(backend, TakesAgentSocket):
        if backend is None:
            raise ToolError(
                "E_CONFLICT",
                f"this session runs without an agent (--backend {session.backend_name}); "
                "only a session started with `pneuma run --backend socket` takes an agent socket",
                details={"reason": "no_socket_agent"},
                hint="restart with `pneuma run --backend socket` to let an agent connect here",
            )  # fmt: skip
        raise ToolError(
            "E_CONFLICT",
            f"this session already runs an agent ({getattr(backend, 'name', 'unknown')}); "
            "agents connect by WebSocket only to a session started with "
            "`pneuma run --backend socket`",
            details={"reason": "agent_running"},
            hint="restart with `pneuma run --backend socket` to let an agent connect here",
        )  # fmt: skip
    refusal = backend.claim()
    if refusal is not None:
        raise ToolError(_REFUSAL_CODES.get(refusal.status, "E_CONFLICT"), refusal.message,
                        details={"reason": refusal.code})
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
