"""``POST /api/tools/<name>``: a mode's tools on the running server (token
protected like every route), through the same runtime as ``pneuma tool`` and
``pneuma mcp``; ``GET /api/tools`` lists the enabled ones with their schemas.

The body is the tool's arguments (a JSON object). The answer is the tool's
response with 200, or ``{"error": {...}}`` with the code's HTTP status.
Tools called here can talk to the person (``ctx.interact``) through the
browser's confirmation channel.

``POST /api/confirmations`` ``{kind, summary?, details?, key?, wait?}`` opens a
confirmation dialog in the page without waiting (kind ``write``: details
``{path, diff, newHash}``, the dry run's line diff) and answers its record
``{id, kind, status: "pending", ...}``, or 503 ``E_UNAVAILABLE`` when no
page is connected;
``GET /api/confirmations/{id}?wait=S`` answers the record once the person
decided (``status`` ``approved`` / ``rejected`` / ``superseded`` /
``timeout`` / ``no_browser``, ``approved`` true or false) or after ``S``
seconds (at most 600) still ``pending``. This is how ``write_to_file`` run
by ``pneuma mcp`` / ``pneuma tool`` shows its dry runs (pneuma/tools/confirm.py).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from pneuma.core.channels import BrowserRequestTimeout, NoBrowserConnected
from pneuma.core.errors import HTTP_STATUS, ToolError
from pneuma.server.config import CONFIG, SESSION
from pneuma.server.errors import json_text
from pneuma.server.routes_files import too_deep
from pneuma.tools.confirm import ConfirmationRegistry
from pneuma.tools.diff import check_line_diff
from pneuma.tools.runtime import ToolRuntime

RUNTIME = web.AppKey("tool_runtime", ToolRuntime)
CONFIRMATIONS = web.AppKey("confirmations", ConfirmationRegistry)
MAX_WAIT = 600.0


class SessionInteraction:
    """Questions and completion notices shown in the Pneuma page."""

    def __init__(self, session: Any, timeout: float,
                 confirmations: ConfirmationRegistry | None = None):
        self.session = session
        self.timeout = timeout
        # Write confirmations for handlers running in this server (confirm.py).
        self.confirmations = confirmations or ConfirmationRegistry(session)

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
    """A tool's result: 200, or the status of its error's code (the runtime
    turns a tool's ``ToolError`` into ``{"error": {...}}``)."""
    status = 200
    error = result.get("error") if len(result) == 1 else None
    if isinstance(error, dict):
        status = HTTP_STATUS.get(error.get("code", ""), 500)
    return web.json_response(result, status=status,
                             dumps=json_text)


async def call(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    try:
        raw = await request.read()
        args = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (ValueError, UnicodeDecodeError) as exc:
        raise ToolError("E_BAD_ARGS", f"the body must be a JSON object: {exc}",
                        details={"field": "(root)"}) from None
    except RecursionError:
        raise too_deep() from None
    runtime = request.app[RUNTIME]
    runtime.server_url = request.app[CONFIG].api_url  # the port is known once bound
    request.app[CONFIRMATIONS].loop = asyncio.get_running_loop()
    return _json(await runtime.call_async(name, args))


def _bad(message: str, field: str) -> ToolError:
    return ToolError("E_BAD_ARGS", message, details={"field": field})


def _wait_seconds(value: Any) -> float:
    if value is None or value is False:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(value)
    return max(0.0, min(float(value), MAX_WAIT))


async def open_confirmation(request: web.Request) -> web.Response:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        body = None
    except RecursionError:
        raise too_deep() from None
    if not isinstance(body, dict):
        raise _bad("the body must be a JSON object", "(root)")
    try:  # the record goes to the page as it is: it must be text UTF-8 can carry
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise _bad("the body holds text that is not valid Unicode (a lone surrogate)",
                   "(root)") from None
    kind = body.get("kind")
    if not isinstance(kind, str) or not kind:
        raise _bad("'kind' is required (e.g. \"write\")", "kind")
    details = body.get("details", {})
    if not isinstance(details, dict):
        raise _bad("'details' must be an object", "details")
    summary = body.get("summary")
    if kind == "write":
        path, diff = details.get("path"), details.get("diff")
        if not isinstance(path, str) or not path:
            raise _bad("details.path is required for a write", "details.path")
        check_line_diff(diff, "details.diff")  # shown in the page as it is
        if not isinstance(summary, str) or not summary:
            from pneuma.tools.confirm import write_summary

            summary = write_summary(path, diff)
    if not isinstance(summary, str) or not summary:
        raise _bad("'summary' is required", "summary")
    key = body.get("key") if isinstance(body.get("key"), str) else None
    try:
        wait = _wait_seconds(body.get("wait"))
    except ValueError:
        raise _bad("'wait' must be a number of seconds", "wait") from None
    registry = request.app[CONFIRMATIONS]
    record = registry.start(kind, summary, details, key=key)
    if record is None:
        raise ToolError("E_UNAVAILABLE", "No browser connected: open the Pneuma page",
                        details={"reason": "no_browser"},
                        hint="A write made without the page open is not shown to the person first.")
    if wait:
        record = await registry.wait(record["id"], wait) or record
    return web.json_response(record, dumps=json_text)


async def confirmation_status(request: web.Request) -> web.Response:
    try:
        wait = _wait_seconds(request.query.get("wait"))
    except ValueError:
        raise _bad("'wait' must be a number of seconds", "wait") from None
    record = await request.app[CONFIRMATIONS].wait(request.match_info["id"], wait)
    if record is None:
        raise ToolError("E_NOT_FOUND", "no such confirmation (the server may have restarted)",
                        details={"id": request.match_info["id"]})
    return web.json_response(record, dumps=json_text)


async def list_tools(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    specs = runtime.enabled_specs()  # a ToolError (a broken policy file) is answered as is
    tools = [{"name": s.name, "description": s.description, "inputSchema": s.input_schema,
              "outputSchema": s.output_schema, "devOnly": s.dev_only} for s in specs]
    return web.json_response({"tools": tools})


def setup(app: web.Application) -> None:
    config = app[CONFIG]
    registry = ConfirmationRegistry(app[SESSION])
    app[CONFIRMATIONS] = registry
    app[RUNTIME] = ToolRuntime(
        config.mode,
        config.workspace,
        server_url=config.api_url,
        server_token=config.token,
        interact=SessionInteraction(app[SESSION], config.action_timeout * 5, registry),
        params=config.params,
    )

    async def remember_loop(app: web.Application) -> None:
        registry.loop = asyncio.get_running_loop()

    app.on_startup.append(remember_loop)
    app.router.add_post("/api/confirmations", open_confirmation)
    app.router.add_get("/api/confirmations/{id}", confirmation_status)
    app.router.add_get("/api/tools", list_tools)
    app.router.add_post("/api/tools/{name}", call)
