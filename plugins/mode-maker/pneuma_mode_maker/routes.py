"""The mode-maker's routes: the Play frame's page, and Check, Install and
Package on the workspace's package (docs/mode-maker.md).

The Play page runs the workspace's code, which is untrusted: it is served
with a ``sandbox`` policy without ``allow-same-origin`` (an opaque origin:
no cookie, ``Origin: null``, which the security middleware refuses) and
``connect-src 'none'``, so the viewer under construction cannot reach
``/api``, the socket or the token (docs/security.md). Its one script is
the harness, inline with a fresh nonce; the viewer's modules arrive by
``postMessage`` and run as ``blob:`` modules.
"""

from __future__ import annotations

import asyncio
import html
import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.api import Pneuma, ToolError
from pneuma_mode_maker.package import ensure_package, find_package

STATIC = Path(__file__).resolve().parent / "static"
HARNESS = STATIC / "play-harness.js"


def play_policy(nonce: str) -> str:
    return "; ".join((
        "sandbox allow-scripts",
        "default-src 'none'",
        f"script-src 'nonce-{nonce}' blob:",
        "style-src 'unsafe-inline' blob: data:",
        "img-src blob: data:",
        "font-src blob: data:",
        "media-src blob: data:",
        "connect-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'self'",
    ))


async def play_page(request: web.Request) -> web.Response:
    nonce = secrets.token_urlsafe(18)
    script = HARNESS.read_text(encoding="utf-8")
    body = ("<!doctype html><html><head><meta charset=\"utf-8\"><title>Play</title>"
            "<style>html,body{margin:0;height:100%}#pm-play-root{height:100%}</style>"
            f"<script nonce=\"{html.escape(nonce)}\">{script}</script></head>"
            "<body><div id=\"pm-play-root\"></div></body></html>")
    return web.Response(text=body, content_type="text/html", headers={
        "Content-Security-Policy": play_policy(nonce),
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
    })


class PackageJobs:
    """Check, Install and Package, one at a time: a second while one runs is
    ``E_BUSY`` (pip and the check's Chromium must not race)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.running: str | None = None

    async def run(self, what: str, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        if self.running is not None:
            raise ToolError("E_BUSY", f"{self.running} is still running; try again when it ends")
        self.running = what
        try:
            return await asyncio.to_thread(work)
        finally:
            self.running = None

    def check(self, only: list[str] | None) -> dict[str, Any]:
        from pneuma.api import check_mode

        find_package(self.workspace)
        report = check_mode(self.workspace, only=only)
        answer = report.to_json()  # the report as JSON text (docs/api.md)
        parsed: dict[str, Any] = json.loads(answer) if isinstance(answer, str) else answer
        return parsed

    def install(self, anyway: bool) -> dict[str, Any]:
        from pneuma.api import install_mode

        find_package(self.workspace)
        mode = install_mode(str(self.workspace), editable=True, check=False if anyway else None)
        return {"name": mode.name, "distribution": mode.distribution, "version": mode.version,
                "source": mode.source, "editable": mode.editable}

    def package(self) -> dict[str, Any]:
        from pneuma.api import build_mode_wheel

        find_package(self.workspace)
        wheel = build_mode_wheel(self.workspace, self.workspace / "dist")
        try:
            shown = wheel.relative_to(self.workspace).as_posix()
        except ValueError:
            shown = str(wheel)
        return {"wheel": shown}


def mode_maker_routes(pneuma: Pneuma) -> list[web.RouteDef]:
    # The workspace becomes the new mode's package before the agent starts;
    # a name the template refuses is said in the page, not a failed start.
    seed_problem: str | None = None
    try:
        ensure_package(pneuma.workspace, dict(pneuma.params))
    except ToolError as exc:
        seed_problem = exc.message
    jobs = PackageJobs(pneuma.workspace)

    async def check(request: web.Request) -> web.Response:
        only = (await _json_body(request)).get("only")
        if only is not None and not (isinstance(only, list) and all(isinstance(n, str) for n in only)):
            raise ToolError("E_BAD_ARGS", "'only' must be a list of check names, e.g. [\"manifest\", \"locales\"]")
        return web.json_response(await jobs.run("a check", lambda: jobs.check(only)))

    async def install(request: web.Request) -> web.Response:
        body = await _json_body(request)
        anyway = body.get("anyway") is True
        return web.json_response(await jobs.run("an install", lambda: jobs.install(anyway)))

    async def package(request: web.Request) -> web.Response:
        return web.json_response(await jobs.run("a build", jobs.package))

    async def status(request: web.Request) -> web.Response:
        return web.json_response({"seedProblem": seed_problem, "running": jobs.running})

    return [
        web.get("/mode-maker/play", play_page),
        web.post("/api/mode-maker/check", check),
        web.post("/api/mode-maker/install", install),
        web.post("/api/mode-maker/package", package),
        web.get("/api/mode-maker/status", status),
    ]


async def _json_body(request: web.Request) -> dict[str, Any]:
    if not request.can_read_body:
        return {}
    try:
        body = await request.json()
    except ValueError:
        raise ToolError("E_BAD_ARGS", "the request body is not JSON") from None
    if not isinstance(body, dict):
        raise ToolError("E_BAD_ARGS", "the request body must be a JSON object")
    return body
