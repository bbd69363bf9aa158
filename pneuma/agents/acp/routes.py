"""The ACP backend's part of the page and its one route: the agent's own
modes as a menu in the header (``static/agent-modes.js``, named by
``BackendSpec.browser_module``, so the shell imports it without naming any
backend), and ``POST /api/acp/mode`` ``{modeId}`` switching to one of them
(``session/set_mode``); ``GET /api/acp/mode`` lists them (``{modes,
modeId}``) for a page opened after the agent started. Behind the session token like every route; errors
in the one error shape: ``E_BAD_ARGS`` (no such mode), ``E_UNAVAILABLE``
(the agent is not running, or refused)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.api import Pneuma, ToolError

URL = "/backends/acp/agent-modes.js"
FILE = Path(__file__).with_name("static") / "agent-modes.js"


async def browser_module(request: web.Request) -> web.FileResponse:
    return web.FileResponse(FILE, headers={"Content-Type": "text/javascript; charset=utf-8"})


def acp_routes(pneuma: Pneuma) -> list[web.RouteDef]:
    def running() -> Any:
        from .backend import AcpBackend

        backend = pneuma.backend
        if not isinstance(backend, AcpBackend):
            raise ToolError("E_UNAVAILABLE", "the ACP agent is not running in this session")
        return backend

    async def modes(request: web.Request) -> web.Response:
        updates = running().updates
        return web.json_response({"modes": updates.modes, "modeId": updates.current_mode})

    async def set_mode(request: web.Request) -> web.Response:
        backend = running()
        try:
            body: Any = await request.json()
        except ValueError:
            body = None
        mode_id = body.get("modeId") if isinstance(body, dict) else None
        offered = [m["id"] for m in backend.updates.modes]
        if not isinstance(mode_id, str) or mode_id not in offered:
            raise ToolError("E_BAD_ARGS", f"modeId must be one of the agent's modes: "
                            f"{', '.join(offered) or 'it offers none'}")
        if not await backend.updates.choose_mode(mode_id):
            raise ToolError("E_UNAVAILABLE", f"the ACP agent did not switch to {mode_id!r}",
                            hint="the agent may have stopped; send a message to start it again")
        return web.json_response({"modeId": mode_id})

    return [web.get(URL, browser_module), web.get("/api/acp/mode", modes),
            web.post("/api/acp/mode", set_mode)]
