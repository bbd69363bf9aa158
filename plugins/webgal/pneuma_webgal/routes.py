"""The webgal mode's routes on the Pneuma server.

``register_routes`` hands them to the server that serves the webgal mode:
``pneuma run``, or the headless server ``preview_scene`` starts when no
``pneuma run`` is up (``pneuma.api.ensure_headless_server``): the same app
either way, so every route sits behind the server's token, Host and Origin
checks. A browser is authorised by the HttpOnly cookie the server set when
it first loaded a page with ``?token=`` (the shell, or a URL ``preview_scene``
handed out), so the engine's page and its WebSocket need no token in their URLs.

``/webgal/``
    The real WebGAL engine (engine.py) with ``static/launcher.js`` added, which
    reads a fragment ``#scene=<file under game/scene/>&line=<1-based line>``
    and jumps there once the engine runs. ``/webgal/game/…`` is the
    workspace's ``game/`` folder (through the sandbox).

``/api/webgalsync``
    The editor-sync WebSocket the engine opens by itself (sync.py).

``POST /api/webgal/jump`` ``{scene, line?, wait?, pendingWait?, dedupe?}``
    Jump every open preview (or the next one to open) to a scene and line and,
    with ``wait`` seconds, report where it landed and the text it shows
    (``pendingWait``: how long to wait when no game is open yet), plus the
    page's ``url``.

``GET /api/webgal/status``
    The engine's availability and every connected preview's scene, line,
    speaker and text.

Write confirmations (a dry run's diff with Apply/Reject) are the host's:
``write_to_file`` opens them itself.
"""

from __future__ import annotations

import json
import mimetypes
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.api import Pneuma, ToolError

from .engine import LAUNCHER, NOT_BUILT_PAGE, engine_dir, engine_version, inject_launcher
from .sync import WebgalSync, jump_request, preview_url

_TEXT_TYPES = {".txt": "text/plain", ".json": "application/json", ".css": "text/css",
               ".js": "text/javascript", ".mjs": "text/javascript", ".html": "text/html"}
IMMUTABLE = "public, max-age=31536000, immutable"


def _json(body: Any, status: int = 200) -> web.Response:
    return web.json_response(body, status=status, dumps=lambda o: json.dumps(o, ensure_ascii=False))


async def _json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict):
        raise ToolError("E_BAD_ARGS", "the body must be a JSON object", details={"field": "(root)"})
    return body


def _file_response(path: Path, shown_as: str, cache: str = "no-cache") -> web.StreamResponse:
    if not path.is_file():
        raise ToolError("E_NOT_FOUND", f"no file {shown_as}", details={"path": shown_as})
    ctype = _TEXT_TYPES.get(path.suffix.lower())
    ctype = f"{ctype}; charset=utf-8" if ctype else mimetypes.guess_type(path.name)[0]
    headers = {"Cache-Control": cache}
    if ctype:
        headers["Content-Type"] = ctype
    return web.FileResponse(path, headers=headers)


def routes(pneuma: Pneuma) -> list[web.RouteDef]:
    """The webgal routes of one server; the sync hub lives as long as it does."""
    sync = WebgalSync(pneuma.workspace)
    pneuma.on_shutdown(sync.close)
    cache: dict[str, Any] = {}

    def index_html() -> str | None:
        engine = engine_dir()
        if engine is None:
            return None
        index = engine / "index.html"
        language = str(pneuma.params.get("language") or "")
        stamp = (str(index), index.stat().st_mtime_ns, language)
        if cache.get("stamp") != stamp:
            cache.update(stamp=stamp, html=inject_launcher(index.read_text(encoding="utf-8"),
                                                           language))
        return cache["html"]

    async def redirect(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/webgal/" + (f"?{request.query_string}" if request.query_string else ""))

    async def index(request: web.Request) -> web.StreamResponse:
        html = index_html()
        if html is None:
            return web.Response(text=NOT_BUILT_PAGE, status=503, content_type="text/html")
        return web.Response(text=html, content_type="text/html",
                            headers={"Cache-Control": "no-store"})

    async def launcher(request: web.Request) -> web.StreamResponse:
        return _file_response(LAUNCHER, "launcher.js")

    async def game_file(request: web.Request) -> web.StreamResponse:
        rel = "game/" + request.match_info["path"]
        return _file_response(pneuma.sandbox.resolve(rel), rel)

    async def engine_file(request: web.Request) -> web.StreamResponse:
        engine = engine_dir()
        if engine is None:
            raise ToolError("E_UNAVAILABLE", "the WebGAL engine is not set up",
                            hint="Run scripts/build-web in the Pneuma checkout.")
        rel = request.match_info["path"]
        root = engine.resolve()
        target = (root / rel).resolve()
        if root not in target.parents:
            raise ToolError("E_NOT_FOUND", f"no engine file {rel}", details={"path": rel})
        # Hashed asset names never change content: let the browser keep them.
        return _file_response(target, rel, IMMUTABLE if target.parent == root / "assets"
                              else "no-cache")

    async def sync_socket(request: web.Request) -> web.StreamResponse:
        return await sync.handle(request)

    async def jump(request: web.Request) -> web.Response:
        result = await jump_request(sync, await _json_body(request))
        result["url"] = preview_url(pneuma.api_url, result["scene"], result["line"])
        return _json(result)

    async def status(request: web.Request) -> web.Response:
        engine = engine_dir()
        return _json({"engine": {"available": engine is not None,
                                 "version": engine_version(engine)},
                      "url": preview_url(pneuma.api_url), **sync.status()})

    return [
        web.get("/webgal", redirect),
        web.get("/webgal/", index),
        web.get("/webgal/index.html", index),
        web.get("/webgal/_pneuma/launcher.js", launcher),
        web.get("/webgal/game/{path:.+}", game_file),
        web.get("/webgal/{path:.+}", engine_file),
        web.get("/api/webgalsync", sync_socket),
        web.post("/api/webgal/jump", jump),
        web.get("/api/webgal/status", status),
    ]
