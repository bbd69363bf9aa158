"""The webgal mode's routes on the Pneuma server, and the engine's own site.

``register_routes`` hands them to the server that serves the webgal mode:
``pneuma run``, or the headless server ``preview_scene`` starts when no
``pneuma run`` is up (``pneuma.api.ensure_headless_server``): the same app
either way, so every route here sits behind the server's token, Host and
Origin checks.

The engine itself (the game's scenes and assets are workspace content) is
not served here: it runs on an origin of its own, the content site
(``pneuma.api.ContentSite``, as engine_site.py sets it up), a read-only site
with its own token that the server starts and stops with itself. On that
site:

``/webgal/``
    The real WebGAL engine (engine.py) with ``static/launcher.js`` added, which
    reads a fragment ``#scene=<file under game/scene/>&line=<1-based line>``,
    jumps there once the engine runs, and talks to the page framing it with
    ``postMessage``. ``/webgal/game/…`` is the workspace's ``game/`` folder
    (the content site's own, through the fd-based sandbox); ``/api/webgalsync``
    the editor-sync socket the engine opens by itself (sync.py).

On the Pneuma server:

``/webgal/``
    The preview page the viewer frames: the engine's site in a frame, and
    ``static/bridge.js``, which gives the viewer ``window.pneumaWebgal``
    (state, jump) by ``postMessage`` to that frame. A fragment is passed on.

``/api/webgalsync``
    The same editor-sync hub, for editors holding the server's token.

``POST /api/webgal/jump`` ``{scene, line?, wait?, pendingWait?, dedupe?}``
    Jump every open preview (or the next one to open) to a scene and line and,
    with ``wait`` seconds, report where it landed and the text it shows
    (``pendingWait``: how long to wait when no game is open yet), plus
    ``url``: the engine page at that line, with the engine site's own token
    (it opens in any browser and can only read the game).

``GET /api/webgal/status``
    The engine's availability, its page's ``url`` and every connected
    preview's scene, line, speaker and text.

Write confirmations (a dry run's diff with Apply/Reject) are the host's:
``write_to_file`` opens them itself.
"""

from __future__ import annotations

import json
import mimetypes
import re
from collections.abc import Awaitable, Callable
from html import escape as html_escape
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.api import ContentSite, Pneuma, ToolError

from .engine import (
    BRIDGE,
    LAUNCHER,
    NOT_BUILT_PAGE,
    engine_dir,
    engine_version,
    inject_launcher,
)
from .engine_site import engine_headers, engine_site, page_url
from .sync import WebgalSync, jump_request

_TEXT_TYPES = {".txt": "text/plain", ".json": "application/json", ".css": "text/css",
               ".js": "text/javascript", ".mjs": "text/javascript", ".html": "text/html"}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
IMMUTABLE = "public, max-age=31536000, immutable"
SNAPSHOT_PAGE = "/webgal/snapshot/{ref}/{side}/"
SNAPSHOT_PARAM = re.compile(r"[A-Za-z0-9]{1,40}/(?:before|after)")


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


def _file_response(path: Path, shown_as: str, cache: str = "no-cache", *,
                   headers: dict[str, str] | None = None) -> web.StreamResponse:
    if not path.is_file():
        raise ToolError("E_NOT_FOUND", f"no file {shown_as}", details={"path": shown_as})
    ctype = _TEXT_TYPES.get(path.suffix.lower())
    ctype = f"{ctype}; charset=utf-8" if ctype else mimetypes.guess_type(path.name)[0]
    headers = {**(headers or {}), "Cache-Control": cache}
    if ctype:
        headers["Content-Type"] = ctype
    return web.FileResponse(path, headers=headers)


def relay_page(engine_src: str, engine_origin: str) -> tuple[str, str]:
    """The Pneuma server's ``/webgal/`` page and its policy: the engine's site
    in a frame, and bridge.js. Only Pneuma's own script runs on this origin."""
    html = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>WebGAL preview</title>
<style>html,body{{margin:0;height:100%;background:#000;overflow:hidden}}
iframe{{display:block;border:0;width:100%;height:100%}}</style>
<script defer src="/webgal/_pneuma/bridge.js" data-engine-src="{html_escape(engine_src, quote=True)}"
 data-engine-origin="{html_escape(engine_origin, quote=True)}"></script>
</head><body><iframe id="pneuma-webgal-engine" title="WebGAL game" allow="autoplay; fullscreen"></iframe></body></html>
"""
    policy = "; ".join((
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'unsafe-inline'",
        f"frame-src {engine_origin}",
        "frame-ancestors 'self'",
        "base-uri 'none'",
        "form-action 'none'",
    ))
    return html, policy


def routes(pneuma: Pneuma) -> list[web.RouteDef]:
    """The webgal routes of one server; the sync hub and the engine's site
    live as long as it does."""
    sync = WebgalSync(pneuma.workspace)
    site = engine_site(pneuma)
    site.add_routes(engine_routes(pneuma, site, sync))
    # Shutdown callbacks run newest first: the games' sockets are closed
    # before the site (registered by engine_site) waits for its connections to end.
    pneuma.on_shutdown(sync.close)

    async def redirect(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/webgal/" + (f"?{request.query_string}" if request.query_string else ""))

    async def index(request: web.Request) -> web.StreamResponse:
        if engine_dir() is None:
            return web.Response(text=NOT_BUILT_PAGE, status=503, content_type="text/html")
        if not site.running:
            raise ToolError("E_UNAVAILABLE", "the WebGAL engine's site is not running")
        # The engine frame is named as this page was opened (localhost or
        # 127.0.0.1), so that it is same-site with it and keeps its cookie.
        hostname = request.host.rpartition(":")[0] or request.host
        snapshot = request.query.get("snapshot")
        if snapshot is not None and not SNAPSHOT_PARAM.fullmatch(snapshot):
            raise ToolError("E_BAD_ARGS", f"snapshot={snapshot!r} is not {{ref}}/{{before|after}}",
                            details={"field": "snapshot"})
        html, policy = relay_page(page_url(site, hostname=hostname, snapshot=snapshot),
                                  site.origin(hostname))
        return web.Response(text=html, content_type="text/html",
                            headers={"Cache-Control": "no-store",
                                     "Content-Security-Policy": policy})

    async def bridge(request: web.Request) -> web.StreamResponse:
        return _file_response(BRIDGE, "bridge.js")

    async def jump(request: web.Request) -> web.Response:
        result = await jump_request(sync, await _json_body(request))
        result["url"] = page_url(site, result["scene"], result["line"])
        return _json(result)

    async def status(request: web.Request) -> web.Response:
        engine = engine_dir()
        return _json({"engine": {"available": engine is not None,
                                 "version": engine_version(engine),
                                 "origin": site.origin() if site.running else None},
                      "url": page_url(site) if site.running else None, **sync.status()})

    return [
        *_page_routes(redirect, index, sync),
        web.get("/webgal/_pneuma/bridge.js", bridge),
        web.post("/api/webgal/jump", jump),
        web.get("/api/webgal/status", status),
    ]


def _page_routes(redirect: Handler, index: Handler, sync: WebgalSync) -> list[web.RouteDef]:
    """What both sites answer alike: ``/webgal`` (each its own redirect and
    page) and the sync socket."""
    async def sync_socket(request: web.Request) -> web.StreamResponse:
        return await sync.handle(request)

    return [
        web.get("/webgal", redirect),
        web.get("/webgal/", index),
        web.get("/webgal/index.html", index),
        web.get("/api/webgalsync", sync_socket),
    ]


def engine_routes(pneuma: Pneuma, site: ContentSite, sync: WebgalSync) -> list[web.RouteDef]:
    """The engine's routes on its own site (engine_site.py); the game's files
    (``/webgal/game/``) are the site's own."""
    cache: dict[str, Any] = {}

    def index_html() -> str | None:
        engine = engine_dir()
        if engine is None:
            return None
        index = engine / "index.html"
        language = str(pneuma.params.get("language") or "")
        parents = " ".join(site.main_origins())
        stamp = (str(index), index.stat().st_mtime_ns, language, parents)
        if cache.get("stamp") != stamp:
            cache.update(stamp=stamp, html=inject_launcher(index.read_text(encoding="utf-8"),
                                                           language, parents))
        return cache["html"]

    async def redirect(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/webgal/" + (f"?{request.query_string}" if request.query_string else ""))

    async def index(request: web.Request) -> web.StreamResponse:
        html = index_html()
        if html is None:
            return web.Response(text=NOT_BUILT_PAGE, status=503, content_type="text/html",
                                headers=engine_headers(site))
        return web.Response(text=html, content_type="text/html",
                            headers=engine_headers(site, {"Cache-Control": "no-store"}))

    async def launcher(request: web.Request) -> web.StreamResponse:
        return _file_response(LAUNCHER, "launcher.js", headers=engine_headers(site))

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
                              else "no-cache", headers=engine_headers(site))

    async def snapshot_game(request: web.Request) -> web.StreamResponse:
        info = request.match_info
        return await site.serve_snapshot(f"{info['ref']}/{info['side']}/{info['path']}")

    # The page's routes first: /webgal/index.html is the page, not an engine file.
    # Under /webgal/snapshot/{ref}/{side}/ the same engine plays a checkpoint's
    # game/ (Compare and the timeline; pneuma/server/snapshot_site.py).
    return [
        web.get("/", redirect),
        *_page_routes(redirect, index, sync),
        web.get("/webgal/_pneuma/launcher.js", launcher),
        web.get(SNAPSHOT_PAGE, index),
        web.get(SNAPSHOT_PAGE + "index.html", index),
        web.get(SNAPSHOT_PAGE + "_pneuma/launcher.js", launcher),
        web.get(SNAPSHOT_PAGE + "game/{path:.*}", snapshot_game),
        web.get(SNAPSHOT_PAGE + "{path:.+}", engine_file),
        web.get("/webgal/{path:.+}", engine_file),
    ]
