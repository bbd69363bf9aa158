"""The WebGAL preview: where the real engine is served for a workspace.

``preview_scene`` looks, in this order, for

1. WebGAL Terre, when the policy configures it (``"terre": {"port": 3001, "gameDir": …}``);
2. the running ``pneuma run`` server of this workspace (``ctx.server_url``), whose
   engine route is ``<server>/webgal/``;
3. a background preview server of our own (this module, run as
   ``python -m pneuma_webgal.preview --workspace W``): a small aiohttp process
   serving the same route — the engine's ``dist/`` at ``/webgal/``, the workspace's
   ``game/`` folder at ``/webgal/game/`` — plus the editor-sync WebSocket
   ``/api/webgalsync`` the engine opens by itself and ``POST /api/webgal/jump``,
   all with the same code as ``pneuma run`` (routes.py: ``WebgalSync``, the
   launcher script, ``jump_request``). It records ``{pid, port}`` in
   ``W/.pneuma/webgal-preview.json``, is reused while it answers, and stops itself
   after 10 idle minutes.

The engine has no URL per scene; the page URL names scene and line in its
fragment (``#scene=beach_date.txt&line=12``, read by static/launcher.js), and
``preview_scene`` jumps games that are already open (or the next one to open)
through ``POST /api/webgal/jump``, which sends the editor-sync JUMP.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import mimetypes
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
STATE_FILE = "webgal-preview.json"
IDLE_SECONDS = float(os.environ.get("PNEUMA_WEBGAL_PREVIEW_IDLE", "600"))
LOCAL_HOSTS = ("localhost", "127.0.0.1")


# --- the engine -----------------------------------------------------------------


def engine_candidates() -> list[Path]:
    env = os.environ.get("PNEUMA_WEBGAL_ENGINE_DIR")
    out = [Path(env)] if env else []
    out += [
        PACKAGE_DIR / "engine",
        PACKAGE_DIR / "static" / "engine",
        PACKAGE_DIR / "webgal-engine",
        PACKAGE_DIR.parent / "web" / "dist",
        PACKAGE_DIR.parent / "web" / "node_modules" / "webgal-engine" / "dist",
    ]
    return out


def find_engine() -> Path | None:
    """The folder holding the engine's index.html (webgal-engine's dist/), if set up."""
    for candidate in engine_candidates():
        if (candidate / "index.html").is_file() and (candidate / "assets").is_dir():
            return candidate
    return None


def jump_message(scene_file: str, line: int) -> str:
    """The legacy editor-sync JUMP message (accepted by engine 4.5.x and Terre 4.6)."""
    from pneuma_webgal.routes import jump_message as message

    return json.dumps(message(scene_file, line), ensure_ascii=False)


# --- the background server ------------------------------------------------------


def build_app(workspace: Path, engine: Path, *, idle_seconds: float = IDLE_SECONDS,
              language: str = ""):
    """The same engine page, launcher, sync hub and jump route as ``pneuma
    run`` serves (routes.py), for one workspace, without the session."""
    from aiohttp import web

    from pneuma.tools.errors import ToolError
    from pneuma.tools.sandbox import Sandbox
    from pneuma_webgal.routes import LAUNCHER, WebgalSync, inject_launcher, jump_request

    sandbox = Sandbox(workspace)
    sync = WebgalSync(workspace)
    state = {"last": time.monotonic(), "base": ""}
    index_html = inject_launcher((engine / "index.html").read_text(encoding="utf-8"), language)

    @web.middleware
    async def touch(request, handler):
        state["last"] = time.monotonic()
        return await handler(request)

    async def index(request):
        return web.Response(text=index_html, content_type="text/html",
                            headers={"Cache-Control": "no-store"})

    async def redirect(request):
        raise web.HTTPFound("/webgal/")

    def _file(path: Path) -> web.StreamResponse:
        if not path.is_file():
            raise web.HTTPNotFound()
        ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if path.suffix in (".js", ".mjs"):
            ctype = "text/javascript"
        return web.FileResponse(path, headers={"Content-Type": ctype, "Cache-Control": "no-cache"})

    async def game_file(request):
        rel = request.match_info["path"]
        try:
            path = sandbox.resolve("game/" + rel)
        except ToolError:
            raise web.HTTPForbidden() from None
        return _file(path)

    async def engine_file(request):
        rel = request.match_info["path"]
        target = (engine / rel).resolve()
        if engine.resolve() not in target.parents:
            raise web.HTTPForbidden()
        return _file(target)

    async def launcher(request):
        return _file(LAUNCHER)

    async def health(request):
        return web.json_response({"ok": True, "workspace": str(workspace), "pid": os.getpid(),
                                  "clients": len(sync.clients)})

    async def jump(request):
        try:
            body = await request.json()
        except ValueError:
            body = None
        status, result = await jump_request(sync, body, f"http://{request.host}")
        return web.json_response(result, status=status,
                                 dumps=lambda o: json.dumps(o, ensure_ascii=False))

    async def sync_status(request):
        return web.json_response({"url": f"http://{request.host}/webgal/", **sync.status()},
                                 dumps=lambda o: json.dumps(o, ensure_ascii=False))

    async def sync_socket(request):
        return await sync.handle(request)

    async def idle_watch(app):
        async def loop():
            while True:
                await asyncio.sleep(min(30.0, max(idle_seconds / 4, 0.5)))
                # An open game reports every second: it keeps the server alive.
                if sync.previews:
                    state["last"] = time.monotonic()
                if time.monotonic() - state["last"] > idle_seconds:
                    os.kill(os.getpid(), signal.SIGTERM)
                    return

        task = asyncio.create_task(loop())
        yield
        task.cancel()
        await sync.close()

    app = web.Application(middlewares=[touch])
    app.cleanup_ctx.append(idle_watch)
    app.router.add_get("/", redirect)
    app.router.add_get("/webgal", redirect)
    app.router.add_get("/webgal/", index)
    app.router.add_get("/webgal/index.html", index)
    app.router.add_get("/webgal/_pneuma/health", health)
    app.router.add_get("/webgal/_pneuma/launcher.js", launcher)
    app.router.add_get("/webgal/game/{path:.+}", game_file)
    app.router.add_get("/webgal/{path:.+}", engine_file)
    app.router.add_get("/api/webgalsync", sync_socket)
    app.router.add_post("/api/webgal/jump", jump)
    app.router.add_get("/api/webgal/status", sync_status)
    return app


def serve(workspace: Path, port: int, state_path: Path, language: str = "") -> None:
    from aiohttp import web

    engine = find_engine()
    if engine is None:
        print("webgal engine dist not found in: " + ", ".join(map(str, engine_candidates())), file=sys.stderr)
        sys.exit(3)
    app = build_app(workspace, engine, language=language)

    async def main():
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port)
        await site.start()
        actual = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "port": actual, "workspace": str(workspace),
                                   "engine": str(engine), "startedAt": time.time()}))
        os.replace(tmp, state_path)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        try:
            if json.loads(state_path.read_text()).get("pid") == os.getpid():
                state_path.unlink()
        except (OSError, ValueError):
            pass
        await runner.cleanup()

    asyncio.run(main())


# --- used by preview_scene ------------------------------------------------------


def http_get(url: str, *, token: str | None = None, timeout: float = 3.0) -> int:
    """Status code of a GET (0 when nothing answers)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError, ValueError):
        return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    try:  # an exited child not yet reaped by its parent is a zombie, not a server
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def running_server(workspace: Path) -> dict | None:
    """The background server of this workspace, if it is up and answering."""
    path = workspace / ".pneuma" / STATE_FILE
    try:
        info = json.loads(path.read_text())
        pid, port = int(info["pid"]), int(info["port"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _alive(pid):
        return None
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/webgal/_pneuma/health", timeout=2) as r:
            data = json.loads(r.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None
    if Path(data.get("workspace", "")) != workspace:
        return None
    return info


def start_server(workspace: Path, *, timeout: float = 15.0, language: str = "") -> dict:
    """Start (or reuse) the background preview server; returns its state record.
    Raises RuntimeError with the reason when it cannot run."""
    info = running_server(workspace)
    if info:
        info["reused"] = True
        return info
    if find_engine() is None:
        raise RuntimeError(
            "the WebGAL engine is not set up (webgal-engine's dist/ was not found in "
            + ", ".join(str(p) for p in engine_candidates()) + ")"
        )
    pneuma_dir = workspace / ".pneuma"
    pneuma_dir.mkdir(parents=True, exist_ok=True)
    state_path = pneuma_dir / STATE_FILE
    try:
        state_path.unlink()
    except FileNotFoundError:
        pass
    log = open(pneuma_dir / "webgal-preview.log", "ab")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_DIR.parent), env.get("PYTHONPATH")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pneuma_webgal.preview", "--workspace", str(workspace), "--state", str(state_path),
         "--language", language],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        env=env,
        close_fds=True,
    )
    log.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = (pneuma_dir / "webgal-preview.log").read_text(errors="replace")[-600:]
            raise RuntimeError(f"the preview server exited with code {proc.returncode}: {tail.strip()}")
        info = running_server(workspace)
        if info:
            info["reused"] = False
            return info
        time.sleep(0.1)
    proc.terminate()
    raise TimeoutError(f"the preview server did not answer within {timeout:.0f} s")


async def ws_jump(ws_url: str, scene_file: str, line: int, *, timeout: float = 3.0) -> None:
    """Send the JUMP message over an editor-sync WebSocket (Terre or ours)."""
    import aiohttp

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        async with session.ws_connect(ws_url) as ws:
            await ws.send_str(jump_message(scene_file, line))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Background WebGAL preview server for one workspace")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--state", default=None)
    parser.add_argument("--language", default="", help="the engine's interface language on a first visit")
    ns = parser.parse_args(argv)
    workspace = Path(ns.workspace).resolve()
    state = Path(ns.state) if ns.state else workspace / ".pneuma" / STATE_FILE
    serve(workspace, ns.port, state, ns.language)


if __name__ == "__main__":
    main()
