"""The webgal mode's routes on the ``pneuma run`` server.

Registered through the ``register_routes`` hook when the served mode is
``webgal``; every route sits behind the server's token, Host and Origin checks
(the browser is authorised by the HttpOnly cookie the shell's first page load
set, so the engine's page and its WebSocket need no token in their URLs).

``/webgal/``
    The real WebGAL engine (npm ``webgal-engine``; its ``dist/`` is copied to
    ``static/engine/`` by ``scripts/build-web``). ``index.html`` is served with
    one ``<script>`` added, ``static/launcher.js``, which reads a fragment
    ``#scene=<file under game/scene/>&line=<1-based line>`` and jumps there once
    the engine runs. ``/webgal/game/…`` is the workspace's ``game/`` folder.

``/api/webgalsync``
    The editor-sync WebSocket the engine opens by itself, at its own origin
    (``ws://<host>:<port>/api/webgalsync``, no subprotocol). The engine reports
    ``{"event": "message", "data": {"command": 1 (SYNCFC), "sceneMsg": {"scene",
    "sentence"}, "stageSyncMsg": <stage>, "message": "sync"}}`` every second and
    obeys ``command: 0`` (JUMP). Editors may also connect: legacy messages are
    relayed to the other connections as WebGAL Terre does; with the subprotocol
    ``webgal-editor-preview-sync.v1`` a ``preview.command.sync-scene`` request is
    turned into a JUMP and answered with a ``response``.

``POST /api/webgal/jump`` ``{scene, line?, wait?, pendingWait?}``
    Jump every open preview (or the next one to open) to a scene and line and,
    with ``wait`` seconds, report where it landed and the text it shows
    (``pendingWait``: how long to wait when no game is open yet). Python
    code in the server calls ``app[WEBGAL_SYNC].jump(...)`` / ``jump_and_wait``.
    The background preview server (preview.py) serves the same route.

``GET /api/webgal/status``
    The engine's availability and every connected preview's scene, line, speaker
    and text.

Write confirmations (a dry run's diff with Apply/Reject) are the host's:
``write_to_file`` opens them itself, see ``pneuma/tools/confirm.py`` and
``POST /api/confirmations`` in ``pneuma/server/routes_tools.py``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import mimetypes
import os
import time
from html import escape as html_escape
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

PACKAGE_DIR = Path(__file__).resolve().parent
LAUNCHER = PACKAGE_DIR / "static" / "launcher.js"
SUBPROTOCOL_V1 = "webgal-editor-preview-sync.v1"

# Editor-sync commands (engine 4.5.x enum DebugCommand).
JUMP, SYNCFC, SYNCFE = 0, 1, 2
STALE_AFTER = 6.0  # seconds without a SYNCFC after which a game counts as gone

log = logging.getLogger(__name__)


def engine_dir() -> Path | None:
    """The folder holding the engine's ``index.html`` and ``assets/``, if set up."""
    candidates = []
    if os.environ.get("PNEUMA_WEBGAL_ENGINE_DIR"):
        candidates.append(Path(os.environ["PNEUMA_WEBGAL_ENGINE_DIR"]))
    candidates.append(PACKAGE_DIR / "static" / "engine")
    for candidate in candidates:
        if (candidate / "index.html").is_file() and (candidate / "assets").is_dir():
            return candidate
    return None


def engine_version(engine: Path | None) -> str | None:
    if engine is None:
        return None
    try:
        return json.loads((engine / "VERSIONS.json").read_text())["versions"]["webgal-engine"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def normalize_scene(scene: Any) -> str:
    """``station_en`` / ``station_en.txt`` / ``game/scene/station_en.txt`` →
    ``station_en.txt`` (relative to game/scene/, as the engine names scenes)."""
    if not isinstance(scene, str) or not scene.strip():
        raise ValueError("'scene' must be a scene file name, e.g. start.txt")
    name = scene.strip().replace("\\", "/").lstrip("./")
    for prefix in ("game/scene/", "scene/"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    if not name.endswith(".txt"):
        name += ".txt"
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts) or "\0" in name:
        raise ValueError(f"{scene!r} is not a scene file name")
    return name


def jump_message(scene: str, line: int, *, exp: bool = False) -> dict[str, Any]:
    """The legacy editor-sync JUMP (engine 4.5.x; still accepted by Terre 4.6)."""
    return {
        "event": "message",
        "data": {
            "command": JUMP,
            "sceneMsg": {"scene": scene, "sentence": int(line)},
            "stageSyncMsg": {},
            "message": "exp" if exp else "Sync",
        },
    }


def preview_url(base: str, scene: str | None = None, line: int | None = None) -> str:
    """``<base>/webgal/#scene=<scene>&line=<line>`` (the fragment only with a scene)."""
    from urllib.parse import quote

    url = base.rstrip("/") + "/webgal/"
    if scene:
        url += "#scene=" + quote(normalize_scene(scene), safe="/")
        if line and int(line) > 1:
            url += f"&line={int(line)}"
    return url


# --- the sync hub ---------------------------------------------------------------


@dataclass
class SyncClient:
    ws: web.WebSocketResponse
    id: str
    protocol: str  # "legacy" | "v1"
    connected_at: float = field(default_factory=time.time)
    is_engine: bool = False  # it has sent SYNCFC, i.e. it is a running game
    scene: str = ""
    sentence: int = 0
    speaker: str = ""
    text: str = ""
    background: str = ""
    updated: float = 0.0  # monotonic time of the last SYNCFC

    def info(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scene": self.scene,
            "line": self.sentence,
            "speaker": self.speaker,
            "text": self.text,
            "background": self.background,
            "connectedAt": self.connected_at,
        }


class WebgalSync:
    """Every connection of ``/api/webgalsync``; jumps the running games."""

    def __init__(self, workspace: Path | None = None):
        self.workspace = workspace
        self.clients: dict[web.WebSocketResponse, SyncClient] = {}
        self.pending: dict[str, Any] | None = None  # a jump for the next game that opens
        self.last_jump: dict[str, Any] | None = None
        self._changed = asyncio.Event()
        self._counter = 0

    # -- what other code calls --

    @property
    def previews(self) -> list[SyncClient]:
        """Running games: they report every second, so one silent for longer
        than STALE_AFTER seconds is gone (a closed tab may not say goodbye)."""
        now = time.monotonic()
        return [c for c in self.clients.values()
                if c.is_engine and not c.ws.closed and now - c.updated < STALE_AFTER]

    def status(self) -> dict[str, Any]:
        return {
            "previews": [c.info() for c in self.previews],
            "connections": len(self.clients),
            "pendingJump": self.pending,
            "lastJump": self.last_jump,
        }

    def scene_lines(self, scene: str) -> int | None:
        """Number of lines of game/scene/<scene> in the workspace (None: missing)."""
        if self.workspace is None:
            return None
        path = self.workspace / "game" / "scene" / scene
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            return None
        return len(text.replace("\r", "").split("\n"))

    async def jump(self, scene: str, line: int = 1, *, exp: bool = False,
                   dedupe: float = 0.0) -> int:
        """Send a JUMP to every running game; returns how many got it. With no
        game open the jump waits for the next one (``pending``). ``dedupe``
        seconds: an identical jump sent that recently is not sent again."""
        scene = normalize_scene(scene)
        line = max(1, int(line or 1))
        now = time.monotonic()
        last = self.last_jump
        if (dedupe and last and last["scene"] == scene and last["line"] == line
                and now - last["_at"] < dedupe):
            return last["delivered"]
        text = json.dumps(jump_message(scene, line, exp=exp), ensure_ascii=False)
        delivered = 0
        for client in self.previews:
            try:
                await client.ws.send_str(text)
                delivered += 1
            except (ConnectionError, RuntimeError):
                pass
        self.pending = None if delivered else {"scene": scene, "line": line, "exp": exp}
        self.last_jump = {"scene": scene, "line": line, "delivered": delivered,
                          "at": time.time(), "_at": now}
        return delivered

    async def wait_landed(self, scene: str, line: int, timeout: float,
                          since: float | None = None) -> SyncClient | None:
        """The first game reporting ``scene`` at ``line`` or later after ``since``."""
        scene = normalize_scene(scene)
        since = time.monotonic() if since is None else since
        deadline = time.monotonic() + timeout
        while True:
            for client in self.previews:
                if client.updated > since and client.scene == scene and client.sentence >= line:
                    return client
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            event = self._changed
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except asyncio.TimeoutError:
                return None

    async def jump_and_wait(self, scene: str, line: int = 1, *, timeout: float = 8.0,
                            exp: bool = False, dedupe: float = 0.0,
                            pending_timeout: float | None = None) -> dict[str, Any]:
        """Jump and report ``{scene, line, delivered, landed, preview?}``; a line
        past the end of the scene is clamped to its last line. With no game
        open, wait ``pending_timeout`` seconds (default ``timeout``) for one
        to open and land."""
        scene = normalize_scene(scene)
        total = self.scene_lines(scene)
        line = max(1, int(line or 1))
        if total is not None:
            line = min(line, total)
        sent_at = time.monotonic()
        delivered = await self.jump(scene, line, exp=exp, dedupe=dedupe)
        result: dict[str, Any] = {"scene": scene, "line": line, "delivered": delivered,
                                  "landed": False}
        if total is not None:
            result["sceneLines"] = total
        if not delivered and pending_timeout is not None:
            timeout = min(timeout, pending_timeout)
        if timeout > 0 and (delivered or self.pending):
            # Reports sent before the engine has fetched the new scene still
            # describe the old one: only those a little after the jump count.
            client = await self.wait_landed(scene, line, timeout, since=sent_at + 0.2)
            if client is not None:
                result["landed"] = True
                result["preview"] = client.info()
        return result

    # -- the socket --

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(protocols=(SUBPROTOCOL_V1,), heartbeat=30,
                                   max_msg_size=16 * 1024 * 1024)
        await ws.prepare(request)
        self._counter += 1
        client = SyncClient(ws=ws, id=f"p{self._counter}",
                            protocol="v1" if ws.ws_protocol == SUBPROTOCOL_V1 else "legacy")
        self.clients[ws] = client
        try:
            async for message in ws:
                if message.type != WSMsgType.TEXT:
                    continue
                try:
                    data = json.loads(message.data)
                except ValueError:
                    continue
                if isinstance(data, dict):
                    await self._receive(client, data, message.data)
        finally:
            self.clients.pop(ws, None)
            self._notify()
        return ws

    async def _receive(self, client: SyncClient, data: dict[str, Any], raw: str) -> None:
        if client.protocol == "v1" or data.get("kind") == "request":
            await self._receive_v1(client, data)
            return
        body = data.get("data")
        if not isinstance(body, dict):
            return
        command = body.get("command")
        if command == SYNCFC:
            client.is_engine = True
            scene_msg = body.get("sceneMsg") or {}
            stage = body.get("stageSyncMsg") or {}
            client.scene = str(scene_msg.get("scene") or "")
            try:
                client.sentence = int(scene_msg.get("sentence") or 0)
            except (TypeError, ValueError):
                client.sentence = 0
            if isinstance(stage, dict):
                client.speaker = str(stage.get("showName") or "")
                client.text = str(stage.get("showText") or "")
                client.background = str(stage.get("bgName") or "")
            client.updated = time.monotonic()
            self._notify()
            # A jump asked for while no game was open goes to the first one
            # whose start scene has loaded.
            if self.pending and client.scene:
                await self._deliver_pending(client)
            await self._relay(client, raw, engines=False)
            return
        # Anything else (an editor's JUMP, EXE_COMMAND, …): to everyone else,
        # as Terre does; games ignore what they do not understand.
        await self._relay(client, raw, engines=True)

    async def _deliver_pending(self, client: SyncClient) -> None:
        pending, self.pending = self.pending, None
        if pending is None:
            return
        try:
            await client.ws.send_str(json.dumps(
                jump_message(pending["scene"], pending["line"], exp=pending.get("exp", False)),
                ensure_ascii=False))
        except (ConnectionError, RuntimeError):
            self.pending = pending
            return
        if self.last_jump is not None:
            self.last_jump["delivered"] = max(1, self.last_jump.get("delivered", 0))

    async def _receive_v1(self, client: SyncClient, data: dict[str, Any]) -> None:
        request_id = data.get("requestId")
        kind, type_ = data.get("kind"), data.get("type")
        reply: dict[str, Any] = {"kind": "response", "requestId": request_id, "type": type_}
        if kind == "request" and type_ == "preview.command.sync-scene":
            payload = data.get("payload") or {}
            try:
                scene = normalize_scene(payload.get("sceneName"))
                line = int(payload.get("sentenceId") or 1)
            except (TypeError, ValueError) as exc:
                reply.update(ok=False, error={"code": "bad_request", "message": str(exc)})
            else:
                delivered = await self.jump(scene, line)
                reply.update(ok=True, payload={"delivered": delivered,
                                               "pending": self.pending is not None})
        elif kind == "request" and type_ == "preview.query.status":
            reply.update(ok=True, payload=self.status())
        else:
            reply.update(ok=False, error={"code": "unsupported",
                                          "message": f"unsupported message {kind}/{type_}"})
        if kind == "request":
            await client.ws.send_str(json.dumps(reply, ensure_ascii=False))

    async def _relay(self, sender: SyncClient, raw: str, *, engines: bool) -> None:
        for other in list(self.clients.values()):
            if other is sender or other.protocol != "legacy" or other.ws.closed:
                continue
            if other.is_engine and not engines:
                continue
            try:
                await other.ws.send_str(raw)
            except (ConnectionError, RuntimeError):
                pass

    def _notify(self) -> None:
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    async def close(self) -> None:
        for ws in list(self.clients):
            try:
                await ws.close()
            except Exception:  # shutting down: nothing to do about it
                pass


# --- shared by pneuma run and the background preview server (preview.py) ---------


def inject_launcher(html: str, language: str = "") -> str:
    """The engine's index.html with ``static/launcher.js`` added; a classic
    script in ``<head>`` runs before the engine's module script."""
    tag = (f'<script src="./_pneuma/launcher.js" data-ui-language="'
           f'{html_escape(language, quote=True)}"></script>')
    if "</head>" in html:
        return html.replace("</head>", f"    {tag}\n  </head>", 1)
    return tag + html


async def jump_request(sync: WebgalSync, body: Any, base_url: str) -> tuple[int, dict[str, Any]]:
    """``POST /api/webgal/jump`` ``{scene, line?, wait?, pendingWait?, dedupe?}``:
    (HTTP status, answer). ``wait`` (default 5, at most 60) seconds for a game
    to land; ``pendingWait`` (default ``wait``) when no game is open yet."""
    if not isinstance(body, dict):
        return 400, {"error": {"code": "E_BAD_ARGS", "message": "the body must be a JSON object"}}
    try:
        scene = normalize_scene(body.get("scene"))
        line = body.get("line", 1)
        if isinstance(line, bool) or not isinstance(line, (int, float)) or line < 1:
            raise ValueError("'line' must be a 1-based line number")
        waits = []
        for name, default in (("wait", 5), ("pendingWait", None)):
            value = body.get(name, default)
            if value is not None and (isinstance(value, bool)
                                      or not isinstance(value, (int, float))):
                raise ValueError(f"'{name}' must be a number of seconds")
            waits.append(None if value is None else max(0.0, min(float(value), 60.0)))
    except ValueError as exc:
        return 400, {"error": {"code": "E_BAD_ARGS", "message": str(exc)}}
    if sync.scene_lines(scene) is None:
        return 404, {"error": {"code": "E_NOT_FOUND",
                               "message": f"game/scene/{scene} does not exist",
                               "details": {"path": f"game/scene/{scene}"}}}
    result = await sync.jump_and_wait(scene, int(line), timeout=waits[0] or 0.0,
                                      pending_timeout=waits[1],
                                      dedupe=1.0 if body.get("dedupe") else 0.0)
    result["url"] = preview_url(base_url, scene, result["line"])
    result["pending"] = sync.pending is not None
    return 200, result


# --- the aiohttp side -------------------------------------------------------------

WEBGAL_SYNC = web.AppKey("webgal_sync", WebgalSync)


def _json_error(status: int, code: str, message: str, **extra: Any) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message, **extra}},
                             status=status)


async def _json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        raise web.HTTPBadRequest(
            text=json.dumps({"error": {"code": "E_BAD_ARGS",
                                       "message": "the body must be a JSON object"}}),
            content_type="application/json") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(
            text=json.dumps({"error": {"code": "E_BAD_ARGS",
                                       "message": "the body must be a JSON object"}}),
            content_type="application/json")
    return body


_NOT_BUILT = """<!doctype html><meta charset="utf-8"><title>WebGAL engine missing</title>
<body style="font:15px system-ui;background:#111;color:#ddd;display:grid;place-items:center;height:100vh;margin:0">
<div style="max-width:34em"><h2>The WebGAL engine is not set up</h2>
<p>The preview serves the real engine (npm <code>webgal-engine</code> 4.5.18), fetched at
setup. Run <code>scripts/build-web</code> in the Pneuma checkout (or <code>npm ci &amp;&amp;
npm run build</code> in <code>plugins/webgal/web/</code>), then reload this page.</p></div>"""


def _file_response(path: Path, cache: str = "no-cache") -> web.StreamResponse:
    if not path.is_file():
        return _json_error(404, "not_found", f"no file {path.name}")
    ctype, _ = mimetypes.guess_type(path.name)
    if path.suffix.lower() in (".txt", ".json", ".css", ".js", ".mjs", ".html"):
        ctype = {".txt": "text/plain", ".json": "application/json", ".css": "text/css",
                 ".js": "text/javascript", ".mjs": "text/javascript",
                 ".html": "text/html"}[path.suffix.lower()] + "; charset=utf-8"
    headers = {"Cache-Control": cache}
    if ctype:
        headers["Content-Type"] = ctype
    return web.FileResponse(path, headers=headers)


def register(app: web.Application) -> None:
    """Add the webgal routes to the session's application."""
    from pneuma.server.config import CONFIG, SANDBOX
    from pneuma.tools.errors import ToolError

    config = app[CONFIG]
    sync = WebgalSync(config.workspace)
    app[WEBGAL_SYNC] = sync
    cache: dict[str, Any] = {}

    def index_html() -> str | None:
        engine = engine_dir()
        if engine is None:
            return None
        index = engine / "index.html"
        stamp = (str(index), index.stat().st_mtime_ns, str(config.params.get("language")))
        if cache.get("stamp") != stamp:
            html = inject_launcher(index.read_text(encoding="utf-8"),
                                   str(config.params.get("language") or ""))
            cache.update(stamp=stamp, html=html)
        return cache["html"]

    async def redirect(request: web.Request) -> web.StreamResponse:
        target = "/webgal/" + (f"?{request.query_string}" if request.query_string else "")
        raise web.HTTPFound(target)

    async def index(request: web.Request) -> web.StreamResponse:
        html = index_html()
        if html is None:
            return web.Response(text=_NOT_BUILT, status=503, content_type="text/html")
        return web.Response(text=html, content_type="text/html",
                            headers={"Cache-Control": "no-store"})

    async def launcher(request: web.Request) -> web.StreamResponse:
        return _file_response(LAUNCHER)

    async def game_file(request: web.Request) -> web.StreamResponse:
        rel = request.match_info["path"]
        try:
            path = app[SANDBOX].resolve("game/" + rel)
        except ToolError as exc:
            status = 403 if exc.code == "E_DENY_PATH" else 400
            return _json_error(status, exc.code, exc.message)
        return _file_response(path)

    async def engine_file(request: web.Request) -> web.StreamResponse:
        engine = engine_dir()
        if engine is None:
            return _json_error(503, "engine_missing", "the WebGAL engine is not set up "
                               "(run scripts/build-web)")
        root = engine.resolve()
        target = (root / request.match_info["path"]).resolve()
        if root not in target.parents:
            return _json_error(404, "not_found", "no such engine file")
        # Hashed asset names never change content: let the browser keep them.
        immutable = target.parent == root / "assets"
        return _file_response(target, "public, max-age=31536000, immutable" if immutable
                              else "no-cache")

    async def sync_socket(request: web.Request) -> web.StreamResponse:
        return await sync.handle(request)

    async def jump(request: web.Request) -> web.Response:
        status, result = await jump_request(sync, await _json_body(request), config.api_url)
        return web.json_response(result, status=status,
                                 dumps=lambda o: json.dumps(o, ensure_ascii=False))

    async def status(request: web.Request) -> web.Response:
        engine = engine_dir()
        body = {"engine": {"available": engine is not None, "version": engine_version(engine)},
                "url": preview_url(config.api_url), **sync.status()}
        return web.json_response(body, dumps=lambda o: json.dumps(o, ensure_ascii=False))

    async def close_sockets(app: web.Application) -> None:
        await sync.close()

    app.on_shutdown.append(close_sockets)
    app.router.add_get("/webgal", redirect)
    app.router.add_get("/webgal/", index)
    app.router.add_get("/webgal/index.html", index)
    app.router.add_get("/webgal/_pneuma/launcher.js", launcher)
    app.router.add_get("/webgal/game/{path:.+}", game_file)
    app.router.add_get("/webgal/{path:.+}", engine_file)
    app.router.add_get("/api/webgalsync", sync_socket)
    app.router.add_post("/api/webgal/jump", jump)
    app.router.add_get("/api/webgal/status", status)
