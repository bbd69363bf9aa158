"""The WebGAL engine's own origin: a second, read-only site of the server.

The engine runs the game's scenes and assets, which are workspace content,
and evaluates script expressions with ``new Function``: whatever a game
makes it do must not reach the API. So the engine page and the game's files
are not served by the Pneuma server's own origin but by a small aiohttp
site of their own, in the same process and event loop, on another port of
the same host (``http://127.0.0.1:<engine port>``). To the browser that is
another origin:

* it cannot read the Pneuma server's answers (the same-origin policy), and
  anything it sends there carries ``Origin: http://127.0.0.1:<engine port>``,
  which the server's Origin check refuses (it accepts only its own
  ``host:port``);
* it has its own credential, a random token made here that is good for this
  site only (the Pneuma server refuses it), traded on the first load of a
  ``?token=`` URL for an HttpOnly cookie named ``pneuma_webgal_<port>``
  (the Pneuma server reads only ``pneuma_token_<its port>``);
* it only reads: GET and HEAD (the editor-sync socket is a GET); everything
  else is refused with 403 ``E_FORBIDDEN`` (``reason: read_only``).

The shell's viewer talks to the engine through ``window.postMessage`` only
(``static/bridge.js`` on the Pneuma server's ``/webgal/`` page,
``static/launcher.js`` in the engine page).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import ClientError, ClientSession, ClientTimeout, web

from pneuma.api import ToolError, error_response

from .sync import preview_url

log = logging.getLogger(__name__)

COOKIE_PREFIX = "pneuma_webgal"
READ_METHODS = ("GET", "HEAD")
IDLE_ENV = "PNEUMA_WEBGAL_PREVIEW_IDLE"  # the headless preview server's idle time (preview.py)

# Game files are workspace content: opened as a document, they run in an
# opaque origin (the same policy the server gives /content/).
CONTENT_POLICY = "sandbox allow-scripts allow-popups allow-modals allow-downloads"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def loopback_host(host: str) -> str:
    """``host`` as it is written in a URL (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def loopback_names(host: str) -> set[str]:
    """Every name a browser may use for a server bound to ``host``."""
    return {loopback_host(host), "127.0.0.1", "localhost", "[::1]"} - {"0.0.0.0", "[::]"}


def keepalive_seconds() -> float:
    """How often an open game touches the server: well within the idle time
    after which a headless preview server stops (the same setting)."""
    try:
        idle = float(os.environ.get(IDLE_ENV, "600"))
    except ValueError:
        idle = 600.0
    return min(30.0, max(0.25, idle / 3))


# In the workspace's .pneuma/: the engine site's port of the last run.
ENGINE_PORT_FILE = "webgal-engine.json"


class EngineSite:
    """The engine's origin: started with the server, stopped with it."""

    def __init__(self, api_url: Callable[[], str], main_token: str,
                 port_file: Path | None = None) -> None:
        self._api_url = api_url
        self._main_token = main_token
        # Where the port of the last run is kept: the engine keeps its saves
        # and settings in the browser's storage for its origin, so the same
        # workspace gets the same port (the same origin) whenever it is free.
        self._port_file = port_file
        self.token = secrets.token_urlsafe(24)
        self.port: int | None = None
        self.app = web.Application(middlewares=[self._guard])
        self._runner: web.AppRunner | None = None
        self._keepalive: asyncio.Task[None] | None = None

    # -- where it is --

    @property
    def bind_host(self) -> str:
        """The Pneuma server's own host: the engine is never more reachable than it."""
        host = urlsplit(self._api_url()).hostname or "127.0.0.1"
        return "127.0.0.1" if host in ("0.0.0.0", "::", "localhost") else host

    @property
    def running(self) -> bool:
        return self.port is not None

    @property
    def cookie_name(self) -> str:
        return f"{COOKIE_PREFIX}_{self.port}"

    def hosts(self) -> set[str]:
        """``Host`` values this site answers to."""
        return {f"{name}:{self.port}" for name in loopback_names(self.bind_host)}

    def origin(self, hostname: str | None = None) -> str:
        """``http://<hostname>:<engine port>``. The shell passes the name it
        was opened under, so that the engine frame is same-site with it (a
        SameSite cookie is not sent to a frame on another host name)."""
        # The site listens on the server's own address only: "localhost"
        # reaches it too, any other name would not.
        name = "localhost" if hostname == "localhost" else loopback_host(self.bind_host)
        return f"http://{name}:{self.port}"

    def main_origins(self) -> list[str]:
        """The Pneuma server's origins: the only pages that may frame the
        engine and talk to it with postMessage."""
        parts = urlsplit(self._api_url())
        port = parts.port or 80
        return sorted(f"http://{name}:{port}" for name in loopback_names(parts.hostname or ""))

    def page_url(self, scene: str | None = None, line: int | None = None, *,
                 hostname: str | None = None) -> str:
        """The engine page, with its own token (so the URL opens in any browser)
        and the scene and line to jump to in the fragment."""
        return preview_url(self.origin(hostname), scene, line, token=self.token)

    # -- lifetime --

    async def start(self) -> None:
        """Listen; a failure leaves the preview unavailable, not the server down."""
        try:
            await self._start()
        except OSError as exc:
            log.warning("the WebGAL engine's site could not start: %s", exc)
            self.port = None

    async def _start(self) -> None:
        # Bound here first, so that the port is known before anything is served.
        family = socket.AF_INET6 if ":" in self.bind_host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        remembered = self._remembered_port()
        try:
            sock.bind((self.bind_host, remembered))
        except OSError:
            if not remembered:
                sock.close()
                raise
            sock.bind((self.bind_host, 0))  # taken: saves start afresh on another origin
        sock.listen(128)
        sock.setblocking(False)
        self.port = int(sock.getsockname()[1])
        if self.port != remembered:
            self._remember_port(self.port)
        self._runner = web.AppRunner(self.app, handle_signals=False, access_log=None)
        await self._runner.setup()
        await web.SockSite(self._runner, sock, shutdown_timeout=1.0).start()
        self._keepalive = asyncio.get_running_loop().create_task(self._keep_server_alive())

    def _remembered_port(self) -> int:
        if self._port_file is None:
            return 0
        try:
            port = json.loads(self._port_file.read_text(encoding="utf-8"))["port"]
        except (OSError, ValueError, KeyError, TypeError):
            return 0
        return port if isinstance(port, int) and 1024 <= port <= 65535 else 0

    def _remember_port(self, port: int) -> None:
        if self._port_file is None:
            return
        try:
            self._port_file.parent.mkdir(parents=True, exist_ok=True)
            self._port_file.write_text(json.dumps({"port": port}), encoding="utf-8")
        except OSError as exc:  # a read-only workspace: a new origin next time, no more
            log.warning("could not remember the WebGAL engine's port: %s", exc)

    async def stop(self) -> None:
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None
        if self._runner is not None:
            runner, self._runner = self._runner, None
            try:
                await asyncio.wait_for(runner.cleanup(), 4.0)
            except asyncio.TimeoutError:
                log.warning("the WebGAL engine site did not stop in time")

    async def _keep_server_alive(self) -> None:
        """A headless server stops once nothing has used it for a while; an
        open game (its socket to this site) is use, but that server only sees
        its own connections. While a game is open, touch it over loopback."""
        timeout = ClientTimeout(total=10)
        while True:
            await asyncio.sleep(keepalive_seconds())
            server = self._runner.server if self._runner is not None else None
            if server is None or not server.connections:
                continue
            try:
                async with ClientSession(timeout=timeout) as client:
                    async with client.get(self._api_url() + "/api/webgal/status", headers={
                            "Authorization": f"Bearer {self._main_token}"}) as response:
                        await response.read()
            except (ClientError, OSError, asyncio.TimeoutError):
                pass

    # -- who may ask --

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        refusal = self._refusal(request)
        if refusal is not None:
            return error_response(refusal)
        try:
            response = await handler(request)
        except ToolError as error:
            return error_response(error)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return error_response(ToolError(
                "E_NOT_FOUND" if exc.status == 404 else "E_BAD_ARGS",
                f"no {request.path} on the WebGAL engine's site" if exc.status == 404
                else f"{request.method} {request.path}: {exc.reason}",
                details={"status": exc.status, "path": request.path}))
        except (OSError, ValueError, RuntimeError) as exc:
            # An answer already started (a socket) cannot be replaced.
            if request.writer is not None and request.writer.output_size > 0:
                raise
            log.warning("%s %s failed", request.method, request.path, exc_info=exc)
            return error_response(ToolError(
                "E_INTERNAL", f"{request.method} {request.path} failed on the WebGAL engine's site"))
        if request.query.get("token") and not response.prepared:
            # The engine's later requests (assets, game files, its socket)
            # are authorised without the token in their URLs.
            response.set_cookie(self.cookie_name, self.token, httponly=True,
                                samesite="Strict", path="/")
        return response

    def _refusal(self, request: web.Request) -> ToolError | None:
        hosts = self.hosts()
        host = request.headers.get("Host", "")
        if host not in hosts:
            return ToolError("E_FORBIDDEN", f"Host {host!r} is not the WebGAL engine's site",
                             details={"reason": "host", "host": host})
        origin = request.headers.get("Origin")
        if origin is not None and origin not in {f"http://{h}" for h in hosts}:
            return ToolError("E_FORBIDDEN", f"requests from {origin!r} are not allowed",
                             details={"reason": "origin", "origin": origin},
                             hint="only the engine's own page may call this site")
        presented = self._presented_token(request)
        if presented is None or not hmac.compare_digest(presented.encode(), self.token.encode()):
            return ToolError(
                "E_UNAUTHORIZED",
                "the preview's token is required" if presented is None
                else "the token is not this preview's",
                details={"reason": "missing_token" if presented is None else "wrong_token"},
                hint="open the URL preview_scene handed out, or the preview in the Pneuma page")
        if request.method not in READ_METHODS:
            return ToolError("E_FORBIDDEN", "the WebGAL engine's site only serves reads",
                             details={"reason": "read_only", "method": request.method})
        return None

    def _presented_token(self, request: web.Request) -> str | None:
        header = request.headers.get("Authorization", "")
        if header.startswith("Bearer "):
            return header[7:].strip()
        return request.query.get("token") or request.cookies.get(self.cookie_name)


def engine_headers(site: EngineSite, extra: dict[str, Any] | None = None) -> dict[str, str]:
    """Headers of the engine page and its own files: only the Pneuma
    server's pages may frame it, and it may connect only to its own site."""
    # Chromium ignores (and complains about) IPv6 literals in source lists;
    # 'self' covers the page's own name, these the others of 127.0.0.1.
    ws = {f"ws://{h}" for h in site.hosts() if not h.startswith("[")}
    ancestors = [o for o in site.main_origins() if "[" not in o]
    policy = "; ".join((
        "frame-ancestors 'self' " + " ".join(ancestors),
        "connect-src 'self' " + " ".join(sorted(ws)) + " blob: data:",
        "form-action 'none'",
        "base-uri 'self'",
    ))
    return {"Content-Security-Policy": policy, "X-Content-Type-Options": "nosniff",
            **{k: str(v) for k, v in (extra or {}).items()}}
