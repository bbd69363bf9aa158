"""``POST /api/tools/<name>``: a mode's tools on the running server (token
protected like every route), through the same runtime as ``pneuma tool`` and
``pneuma mcp``; ``GET /api/tools`` lists the enabled ones with their schemas.

The body is the tool's arguments (a JSON object). The answer is the tool's
response with 200, or ``{"error": {...}}`` with the code's HTTP status.
Tools called here can talk to the person (``ctx.interact``) through the
browser's confirmation channel.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from pneuma.server.app import CONFIG, SESSION
from pneuma.server.channels import BrowserRequestTimeout, NoBrowserConnected
from pneuma.tools.errors import HTTP_STATUS, ToolError
from pneuma.tools.runtime import ToolRuntime

RUNTIME = web.AppKey("tool_runtime", ToolRuntime)


class SessionInteraction:
    """Questions and completion notices shown in the Pneuma page."""

    def __init__(self, session: Any, timeout: float):
        self.session = session
        self.timeout = timeout

    async def ask(self, question: str, options: list[str] | None = None) -> str:
        try:
            approved, message = await self.session.confirmations.request(
                "question", question, {"options": list(options or [])}, timeout=self.timeout)
        except NoBrowserConnected as exc:
            raise ToolError("E_UNSUPPORTED", str(exc), recoverable=True) from None
        except BrowserRequestTimeout as exc:
            raise ToolError("E_TIMEOUT", f"no answer: {exc}") from None
        return message or ("yes" if approved else "no")

    async def complete(self, summary: str) -> bool:
        self.session.emit({"type": "tool_completion", "summary": summary})
        return True


def _json(result: dict[str, Any]) -> web.Response:
    status = 200
    error = result.get("error") if len(result) == 1 else None
    if isinstance(error, dict):
        status = HTTP_STATUS.get(error.get("code", ""), 500)
    return web.json_response(result, status=status,
                             dumps=lambda o: json.dumps(o, ensure_ascii=False))


async def call(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    try:
        raw = await request.read()
        args = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (ValueError, UnicodeDecodeError) as exc:
        return _json(ToolError("E_BAD_ARGS", f"the body must be a JSON object: {exc}",
                               details={"field": "(root)"}).to_dict())
    runtime = request.app[RUNTIME]
    runtime.server_url = request.app[CONFIG].api_url  # the port is known once bound
    return _json(await runtime.call_async(name, args))


async def list_tools(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    try:
        specs = runtime.enabled_specs()
    except ToolError as exc:
        return _json(exc.to_dict())
    tools = [{"name": s.name, "description": s.description, "inputSchema": s.input_schema,
              "outputSchema": s.output_schema, "devOnly": s.dev_only} for s in specs]
    return web.json_response({"tools": tools})


def setup(app: web.Application) -> None:
    config = app[CONFIG]
    app[RUNTIME] = ToolRuntime(
        config.mode,
        config.workspace,
        server_url=config.api_url,
        server_token=config.token,
        interact=SessionInteraction(app[SESSION], config.action_timeout * 5),
        params=config.params,
    )
    app.router.add_get("/api/tools", list_tools)
    app.router.add_post("/api/tools/{name}", call)
