"""A content origin: the workspace's files served read-only on a site of their own.

A mode whose preview runs the workspace's pages as they would run when
published (``fetch('data.json')``, ES module imports, relative URLs made in
script) cannot show them in an opaque-origin frame: every request such a
page makes carries ``Origin: null``, and the Pneuma server refuses it. It
must not serve them from its own origin either: a page there could call the
API with the person's cookie. So the pages get an origin of their own: a
small aiohttp site in the same process and event loop, on another port of
the same host (``http://127.0.0.1:<content port>``). To the browser that is
another origin:

* it cannot read the Pneuma server's answers (the same-origin policy), and
  anything it sends there carries ``Origin: http://127.0.0.1:<content
  port>``, which the server's Origin check refuses (it accepts only its own
  ``host:port``); the server's token is never given to it;
* it has its own credential, a random token made here that is good for this
  site only (the Pneuma server does not know it, and this site refuses the
  server's token), traded on the first load of a ``?token=`` URL for an
  HttpOnly cookie named ``pneuma_content_<port>`` (the server reads only
  ``pneuma_token_<its port>``); that first answer redirects to the same URL
  without the token, so the page never sees it in its ``location``;
* it only reads: GET and HEAD; anything else is refused with 403
  ``E_FORBIDDEN`` (``reason: read_only``);
* every file is opened through the workspace's fd-based sandbox
  (``Sandbox.open_file``: no ``..``, no symlink out of the workspace, no
  hard-linked file, no ``.env*``), and Pneuma's and the agent's own files
  (``.pneuma/``, ``.claude/``, ``.git/``, ``node_modules/``, ``CLAUDE.md``,
  ``AGENTS.md``) are answered 404 as if they did not exist. That is decided
  on the path as the file system will read it (percent-decoded by aiohttp,
  ``.`` segments dropped: ``/.%2fCLAUDE.md`` is ``CLAUDE.md``), in any
  segment and in any letter case, and again on where the fd walk really
  landed (a symlink ``notes.md -> CLAUDE.md`` or ``cfg -> .claude`` is
  hidden too); a site serving one folder serves nothing a link leads to
  outside it;
* every answer (errors and redirects too) says ``frame-ancestors`` the
  Pneuma server's origins (and its own), so no other site can frame it,
  ``nosniff``, ``no-referrer`` and ``no-cache`` (an edit shows on the next
  load).

A mode may add a script of its own to every HTML document (``inject_head``,
written right after ``<head>`` on the same line, so the page's line numbers
are unchanged) and serve files of its package under ``/__pneuma__/``
(``assets``): that is how a viewer's bridge gets into the page without the
page being rewritten. The shell's viewer talks to the page by
``postMessage`` only.

A mode may also add routes of its own to the site (``add_routes``: WebGAL's
engine page and its editor-sync socket), behind the same guard, and choose
where the workspace is served (``workspace_at``: the whole tree at ``/``, or
one folder under a prefix, or not at all), whether files opened as documents
get a ``sandbox`` policy (``document_sandbox``), whether the token URL is
redirected away (``redirect_token``; WebGAL's launcher removes it from its
address itself, and a client without cookies can still open that URL), and
whether an open connection to the site counts as use of a headless server
(``keep_server_alive``).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import mimetypes
import os
import re
import secrets
import socket
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit

from aiohttp import ClientError, ClientSession, ClientTimeout, web

from pneuma.core.errors import ToolError
from pneuma.core.file_filter import AGENT_INSTRUCTION_FILES
from pneuma.core.sandbox import Sandbox
from pneuma.core.state_files import read_state_bytes, write_state_bytes
from pneuma.server.errors import error_response
from pneuma.server.routes_files import write_span
from pneuma.server.routes_snapshot import session_store
from pneuma.server.snapshot_site import (
    SNAPSHOT_PREFIX,
    read_snapshot_file,
    split_snapshot_path,
)

if TYPE_CHECKING:
    from pneuma.checkpoints import Checkpoints
    from pneuma.server.handle import Pneuma

log = logging.getLogger(__name__)

COOKIE_PREFIX = "pneuma_content"
READ_METHODS = ("GET", "HEAD")
ASSET_PREFIX = "__pneuma__/"
# Pneuma's, the agent's and tools' own files: never part of what a page may load.
HIDDEN_DIRS = frozenset({".pneuma", ".claude", ".git", "node_modules"})
HIDDEN_FILES = frozenset(AGENT_INSTRUCTION_FILES)
# Compared case-folded: on a case-insensitive file system (a FAT stick, a
# macOS volume) "claude.md" opens CLAUDE.md.
_HIDDEN_NAMES = frozenset(name.casefold() for name in HIDDEN_DIRS | HIDDEN_FILES)
MAX_HTML_BYTES = 25 * 1024 * 1024  # an HTML document is read whole to add the mode's script
_TEXT_SUFFIXES = frozenset({".html", ".htm", ".css", ".js", ".mjs", ".json", ".svg", ".txt",
                            ".xml", ".md", ".csv", ".webmanifest"})
_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json",
          ".webmanifest": "application/manifest+json", ".md": "text/markdown"}
_HEAD = re.compile(rb"<head(?:\s[^>]*)?>", re.IGNORECASE)
_HTML = re.compile(rb"<html(?:\s[^>]*)?>", re.IGNORECASE)
_DOCTYPE = re.compile(rb"^\s*<!doctype[^>]*>", re.IGNORECASE)
_RANGE = re.compile(r"\s*bytes=(\d*)-(\d*)\s*")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _loopback_names(host: str) -> set[str]:
    return {_url_host(host), "127.0.0.1", "localhost", "[::1]"} - {"0.0.0.0", "[::]"}


def content_type(rel: str) -> str:
    suffix = PurePosixPath(rel).suffix.lower()
    kind = _TYPES.get(suffix) or mimetypes.guess_type("file" + suffix)[0] or "application/octet-stream"
    return f"{kind}; charset=utf-8" if suffix in _TEXT_SUFFIXES else kind


def path_segments(rel: str) -> list[str]:
    """``rel``'s segments as the file system walks them: empty and ``.``
    segments dropped (``..`` is kept for the sandbox to refuse)."""
    return [part for part in rel.split("/") if part not in ("", ".")]


def is_hidden(rel: str) -> bool:
    """Whether ``rel`` is, or is inside, one of Pneuma's or the agent's own
    files or folders, named in any segment (a nested ``CLAUDE.md`` is the
    agent's too)."""
    return any(part.casefold() in _HIDDEN_NAMES for part in path_segments(rel))


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """[start, end) of the one ``bytes=`` range a ``Range`` header asks for;
    None (the whole file) for none, several, or one that does not fit (a
    server may always answer a range request with the whole file)."""
    found = _RANGE.fullmatch(header or "")
    if found is None or not (found[1] or found[2]):
        return None
    if found[1]:
        start = int(found[1])
        end = min(int(found[2]) + 1, size) if found[2] else size
    else:  # the last N bytes
        start, end = max(0, size - int(found[2])), size
    return (start, end) if start < end else None


def inject_into_head(html: bytes, snippet: bytes) -> bytes:
    """``snippet`` right after ``<head>`` (or ``<html>``, or the doctype),
    on the same line: the page's own lines keep their numbers."""
    for pattern in (_HEAD, _HTML, _DOCTYPE):
        found = pattern.search(html)
        if found:
            return html[:found.end()] + snippet + html[found.end():]
    return snippet + html


class ContentSite:
    """The workspace on an origin of its own; see the module docstring.

    ``for_session`` makes one that starts and stops with a Pneuma server."""

    def __init__(self, sandbox: Sandbox, api_url: Callable[[], str], main_token: str, *,
                 inject_head: str = "", assets: Mapping[str, Path] | None = None,
                 port_file: Path | None = None,
                 workspace_at: tuple[str, str] | None = ("/", ""),
                 document_sandbox: str | None = None,
                 cookie_prefix: str = COOKIE_PREFIX,
                 redirect_token: bool = True,
                 keep_server_alive: Callable[[], float] | None = None,
                 checkpoints: Callable[[], Checkpoints] | None = None) -> None:
        """``workspace_at``: (URL prefix ending in ``/``, workspace folder)
        served there, or None. ``document_sandbox``: the ``sandbox``
        directive given to workspace files (they run in an opaque origin if
        opened as a page). ``keep_server_alive``: the seconds between
        touches of the Pneuma server while this site has open connections.
        ``checkpoints``: the session's checkpoint store, whose states are
        served under ``/__pneuma__/snapshot/`` (snapshot_site.py)."""
        self.sandbox = sandbox
        self._api_url = api_url
        self._main_token = main_token
        self._inject = inject_head.encode("utf-8")
        self._assets = dict(assets or {})
        self._document_sandbox = document_sandbox
        self._cookie_prefix = cookie_prefix
        self._redirect_token = redirect_token
        self._keep_alive_every = keep_server_alive
        self._checkpoints = checkpoints
        self._keepalive: asyncio.Task[None] | None = None
        # The page's storage (localStorage, IndexedDB) belongs to its origin:
        # the same workspace gets the same port whenever it is free.
        self._port_file = port_file
        self.token = secrets.token_urlsafe(24)
        self.port: int | None = None
        self.app = web.Application(middlewares=[self._guard])
        self._mount = workspace_at
        if workspace_at is not None:
            # Registered first: a mode's own routes are matched after it.
            self.app.router.add_get(workspace_at[0] + "{path:.*}", self._serve)
        self._runner: web.AppRunner | None = None

    @classmethod
    def for_session(cls, pneuma: Pneuma, *, name: str, port_file: str | None = None,
                    **options: Any) -> ContentSite:
        """A site over ``pneuma``'s workspace that lives as long as its server;
        ``name`` keys the remembered port (``.pneuma/<name>-site.json``, or
        ``.pneuma/<port_file>``); ``options`` are the constructor's."""
        options.setdefault("checkpoints", lambda: session_store(pneuma.session.hooks))
        site = cls(pneuma.sandbox, lambda: pneuma.api_url, pneuma.token,
                   port_file=pneuma.workspace / ".pneuma" / (port_file or f"{name}-site.json"),
                   **options)
        pneuma.on_startup(site.start)
        pneuma.on_shutdown(site.stop)
        return site

    # -- where it is --

    @property
    def bind_host(self) -> str:
        """The Pneuma server's own host: this site is never more reachable than it."""
        host = urlsplit(self._api_url()).hostname or "127.0.0.1"
        return "127.0.0.1" if host in ("0.0.0.0", "::", "localhost") else host

    @property
    def running(self) -> bool:
        return self.port is not None

    @property
    def cookie_name(self) -> str:
        return f"{self._cookie_prefix}_{self.port}"

    def add_routes(self, routes: list[web.RouteDef]) -> None:
        """A mode's own routes on this site, behind its guard (call before start)."""
        self.app.router.add_routes(routes)

    def hosts(self) -> set[str]:
        """``Host`` values this site answers to."""
        return {f"{name}:{self.port}" for name in _loopback_names(self.bind_host)}

    def origin(self, hostname: str | None = None) -> str:
        """``http://<hostname>:<port>``; pass the name the shell was opened
        under, so that the frame is same-site with it (a SameSite cookie is
        not sent to a frame on another host name)."""
        name = "localhost" if hostname == "localhost" else _url_host(self.bind_host)
        return f"http://{name}:{self.port}"

    def main_origins(self) -> list[str]:
        """The Pneuma server's origins: the only pages that may frame this site."""
        parts = urlsplit(self._api_url())
        port = parts.port or 80
        return sorted(f"http://{name}:{port}" for name in _loopback_names(parts.hostname or ""))

    def url(self, path: str = "", *, hostname: str | None = None) -> str:
        """The workspace file ``path`` on this site, with its token (for the first load)."""
        if not self.running:
            raise ToolError("E_UNAVAILABLE", "the content site is not running")
        return f"{self.origin(hostname)}/{quote(path)}?{urlencode({'token': self.token})}"

    # -- lifetime --

    async def start(self) -> None:
        """Listen; a failure leaves the preview unavailable, not the server down."""
        try:
            await self._start()
        except OSError as exc:
            log.warning("the content site could not start: %s", exc)
            self.port = None

    async def _start(self) -> None:
        family = socket.AF_INET6 if ":" in self.bind_host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        remembered = self._remembered_port()
        try:
            sock.bind((self.bind_host, remembered))
        except OSError:
            if not remembered:
                sock.close()
                raise
            sock.bind((self.bind_host, 0))
        sock.listen(128)
        sock.setblocking(False)
        self.port = int(sock.getsockname()[1])
        if self.port != remembered:
            self._remember_port(self.port)
        self._runner = web.AppRunner(self.app, handle_signals=False, access_log=None,
                                     shutdown_timeout=1.0)
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()
        if self._keep_alive_every is not None:
            self._keepalive = asyncio.get_running_loop().create_task(
                self._keep_server_alive(self._keep_alive_every))

    def _remembered_port(self) -> int:
        if self._port_file is None:
            return 0
        try:
            port = json.loads(read_state_bytes(self._port_file, 4096))["port"]
        except (OSError, ValueError, KeyError, TypeError):
            return 0
        return port if isinstance(port, int) and 1024 <= port <= 65535 else 0

    def _remember_port(self, port: int) -> None:
        if self._port_file is None:
            return
        try:
            # Never through a link planted under .pneuma/ (pneuma.core.state_files).
            write_state_bytes(self._port_file, json.dumps({"port": port}).encode("utf-8"))
        except OSError as exc:  # a read-only workspace: a new origin next time, no more
            log.warning("could not remember the content site's port: %s", exc)

    async def stop(self) -> None:
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None
        if self._runner is not None:
            runner, self._runner = self._runner, None
            try:
                await asyncio.wait_for(runner.cleanup(), 4.0)
            except asyncio.TimeoutError:
                log.warning("the content site did not stop in time")
        self.port = None

    async def _keep_server_alive(self, every: Callable[[], float]) -> None:
        """A headless Pneuma server stops once nothing has used it for a
        while, and it sees only its own connections; a page open on this
        site (a game's socket) is use too. While one is, touch the server
        over loopback with its token."""
        timeout = ClientTimeout(total=10)
        while True:
            await asyncio.sleep(every())
            server = self._runner.server if self._runner is not None else None
            if server is None or not server.connections:
                continue
            try:
                async with ClientSession(timeout=timeout) as client:
                    async with client.get(self._api_url() + "/api/config", headers={
                            "Authorization": f"Bearer {self._main_token}"}) as response:
                        await response.read()
            except (ClientError, OSError, asyncio.TimeoutError):
                pass

    # -- who may ask --

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        refusal = self._refusal(request)
        if refusal is not None:
            return self._error(refusal)
        if request.query.get("token") and self._redirect_token:
            # Traded for the cookie; the page is loaded again without it in its URL.
            rest = [(k, v) for k, v in request.query.items() if k != "token"]
            target = request.path + (f"?{urlencode(rest)}" if rest else "")
            response: web.StreamResponse = web.Response(
                status=303, headers={**self._headers(), "Location": target,
                                     "Cache-Control": "no-store"})
            response.set_cookie(self.cookie_name, self.token, httponly=True, samesite="Strict", path="/")
            return response
        try:
            response = await handler(request)
        except ToolError as error:
            return self._error(error)
        except web.HTTPException as exc:
            if exc.status < 400:  # a redirect: with the guards every answer carries
                return web.Response(status=exc.status, headers={**self._headers(), **exc.headers})
            return self._error(ToolError(
                "E_NOT_FOUND" if exc.status == 404 else "E_BAD_ARGS",
                f"no {request.path} on this site" if exc.status == 404
                else f"{request.method} {request.path}: {exc.reason}",
                details={"status": exc.status, "path": request.path}))
        except (OSError, ValueError, RuntimeError) as exc:
            if request.writer is not None and request.writer.output_size > 0:
                raise  # an answer already under way cannot be replaced
            log.warning("%s %s failed", request.method, request.path, exc_info=exc)
            return self._error(ToolError("E_INTERNAL", f"{request.method} {request.path} failed"))
        if request.query.get("token") and not response.prepared:
            # Not redirected: this answer sets the cookie, the page's later
            # requests (and its socket) carry only that.
            response.set_cookie(self.cookie_name, self.token, httponly=True, samesite="Strict", path="/")
        if not response.prepared:
            # A mode's own routes too; what an answer set itself stays.
            for name, value in self._headers().items():
                response.headers.setdefault(name, value)
        return response

    def _error(self, error: ToolError) -> web.Response:
        response = error_response(error)
        response.headers.update(self._headers())
        return response

    def _refusal(self, request: web.Request) -> ToolError | None:
        hosts = self.hosts()
        host = request.headers.get("Host", "")
        if host not in hosts:
            return ToolError("E_FORBIDDEN", f"Host {host!r} is not the content site",
                             details={"reason": "host", "host": host})
        origin = request.headers.get("Origin")
        if origin is not None and origin not in {f"http://{h}" for h in hosts}:
            return ToolError("E_FORBIDDEN", f"requests from {origin!r} are not allowed",
                             details={"reason": "origin", "origin": origin},
                             hint="only the site's own pages may call this site")
        presented = self._presented_token(request)
        if presented is None or not hmac.compare_digest(presented.encode(), self.token.encode()):
            server_token = presented is not None and hmac.compare_digest(
                presented.encode(), self._main_token.encode())
            return ToolError(
                "E_UNAUTHORIZED",
                "the content site's token is required" if presented is None
                else "the Pneuma server's token is not good here" if server_token
                else "the token is not this content site's",
                details={"reason": "missing_token" if presented is None
                         else "server_token" if server_token else "wrong_token"},
                hint="open the page from the Pneuma page's preview")
        if request.method not in READ_METHODS:
            return ToolError("E_FORBIDDEN", "the content site only serves reads",
                             details={"reason": "read_only", "method": request.method})
        return None

    def _presented_token(self, request: web.Request) -> str | None:
        header = request.headers.get("Authorization", "")
        if header.startswith("Bearer "):
            return header[7:].strip()
        return request.query.get("token") or request.cookies.get(self.cookie_name)

    def frame_ancestors(self) -> str:
        """The CSP directive that lets only the Pneuma server's pages (and
        this site's) frame an answer of this site."""
        # Chromium ignores (and complains about) IPv6 literals in source lists.
        return "frame-ancestors 'self' " + " ".join(o for o in self.main_origins() if "[" not in o)

    def _headers(self, *, document_sandbox: str | None = None) -> dict[str, str]:
        policy = self.frame_ancestors()
        if document_sandbox is not None:
            policy = f"sandbox {document_sandbox}; {policy}"
        return {"Content-Security-Policy": policy,
                "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache",
                "Referrer-Policy": "no-referrer"}

    # -- what it serves --

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        prefix, folder = self._mount or ("/", "")
        url_rel = request.match_info["path"]
        if url_rel.startswith(SNAPSHOT_PREFIX):
            return await self.serve_snapshot(url_rel[len(SNAPSHOT_PREFIX):])
        if url_rel.startswith(ASSET_PREFIX):
            return self._asset(url_rel[len(ASSET_PREFIX):])
        rel = f"{folder.strip('/')}/{url_rel}" if folder.strip("/") else url_rel
        if rel == "" or rel.endswith("/"):
            rel += "index.html"
        if is_hidden(rel):
            raise _no_file(rel)
        try:
            fd, info, real_rel = self.sandbox.open_file_real(rel)
        except IsADirectoryError:
            if not self._may_serve(self._real_rel(rel), folder):
                raise _no_file(rel) from None
            # A folder's page: its relative URLs must resolve inside it.
            raise web.HTTPFound(prefix + quote(url_rel) + "/") from None
        except (FileNotFoundError, NotADirectoryError):
            raise _no_file(rel) from None
        if not self._may_serve(real_rel, folder):
            os.close(fd)
            raise _no_file(rel)
        with os.fdopen(fd, "rb") as handle:
            headers = {**self._headers(document_sandbox=self._document_sandbox),
                       "Content-Type": content_type(rel)}
            if rel.lower().endswith((".html", ".htm")) and self._inject:
                data = handle.read(MAX_HTML_BYTES + 1)
                if len(data) > MAX_HTML_BYTES:
                    raise ToolError("E_TOO_LARGE", f"{rel} is too large to preview",
                                    details={"path": rel, "limit": MAX_HTML_BYTES})
                return web.Response(body=inject_into_head(data, self._inject), headers=headers)
            # Media elements ask for byte ranges (to seek, and before they play).
            span = byte_range(request.headers.get("Range"), info.st_size)
            start, end = span or (0, info.st_size)
            headers["Accept-Ranges"] = "bytes"
            if span is not None:
                headers["Content-Range"] = f"bytes {start}-{end - 1}/{info.st_size}"
            response = web.StreamResponse(status=200 if span is None else 206, headers=headers)
            response.content_length = end - start
            await response.prepare(request)
            if request.method != "HEAD":
                await write_span(response, handle.fileno(), start, end)
            await response.write_eof()
            return response

    async def serve_snapshot(self, rest: str) -> web.Response:
        """A checkpoint's file (snapshot_site.py), answered as a live one is:
        ``rest`` is ``{ref}/{side}/{path}``, ``path`` under where the
        workspace is served (a mode's own route may answer with it)."""
        prefix, folder = self._mount or ("/", "")
        if self._checkpoints is None:
            raise ToolError("E_UNAVAILABLE", "this site serves no checkpoints",
                            details={"reason": "no_checkpoints"})
        ref, side, page_rel = split_snapshot_path(rest)
        rel = f"{folder.strip('/')}/{page_rel}" if folder.strip("/") else page_rel
        if rel == "" or rel.endswith("/"):
            rel += "index.html"
        if is_hidden(rel):
            raise _no_file(rel)
        try:
            data = await asyncio.to_thread(read_snapshot_file, self._checkpoints(), ref, side, rel)
        except ToolError as error:
            if error.code == "E_NOT_FOUND" and "path" in error.details:
                # A file the state lacks answers as a live file that is not there.
                raise _no_file(rel) from None
            raise
        if data is None:  # a folder's page: its relative URLs must resolve inside it
            raise web.HTTPFound(prefix + SNAPSHOT_PREFIX + quote(rest) + "/")
        headers = {**self._headers(document_sandbox=self._document_sandbox),
                   "Content-Type": content_type(rel)}
        if rel.lower().endswith((".html", ".htm")) and self._inject:
            data = inject_into_head(data, self._inject)
        return web.Response(body=data, headers=headers)

    def _real_rel(self, rel: str) -> str:
        """Where the fd walk lands for ``rel`` (symlinks resolved; '' for
        a link to the workspace root)."""
        try:
            with self.sandbox.locate(rel) as located:
                return located.real_rel
        except IsADirectoryError:
            return ""

    @staticmethod
    def _may_serve(real_rel: str, folder: str) -> bool:
        """Whether the file or folder really at ``real_rel`` may be served
        from a site serving ``folder``: not hidden, and not outside the
        folder (a link in a game's folder to the rest of the workspace)."""
        folder = folder.strip("/")
        inside = not folder or real_rel == folder or real_rel.startswith(folder + "/")
        return inside and not is_hidden(real_rel)

    def _asset(self, name: str) -> web.StreamResponse:
        path = self._assets.get(name)
        if path is None or not path.is_file():
            raise ToolError("E_NOT_FOUND", f"no file {ASSET_PREFIX}{name}", details={"path": name})
        return web.Response(body=path.read_bytes(),
                            headers={**self._headers(), "Content-Type": content_type(name)})


def _no_file(rel: str) -> ToolError:
    """The answer for a file that is not there, or is one of the hidden
    ones (the same 404: a page cannot tell them apart)."""
    return ToolError("E_NOT_FOUND", f"no file {rel}", details={"path": rel})
