"""The first answers of ``pneuma run``, given before aiohttp is loaded.

On a warm start (``pneuma.startup.launch_stamp``: nothing changed since the
last start whose checks passed) ``pneuma run`` prints its ready line right
after binding, and the browser asks at once for ``/``, the shell's static
files, ``/api/session`` and ``/api/config``. Building the real server
takes a few hundred milliseconds of imports (aiohttp, pydantic, the
plugins); this module answers those first requests meanwhile, from a
thread, with nothing but the standard library, from what the launch stamp
recorded (the validated manifest, the redacted params) and the stored
session. A first start (or one after a change) runs its checks before the
ready line, then answers the same way from what they found while aiohttp
is imported.

It answers only what it can answer exactly as the real server would: a
plain ``GET`` of one of those routes, from this server's host, with this
session's token. Anything else — another route, a WebSocket, a body, a
conditional or ranged request, a wrong token — it leaves unread: it only
ever *peeks* at a request before deciding, so a connection it does not
answer is handed to aiohttp untouched once the real server is up
(``EarlyServer.stop`` returns them), and aiohttp reads the request from
the first byte. A request for a route that is not ready yet therefore
waits for it instead of failing.

Nothing it imports may load aiohttp (that import is what it stands in
for): the security checks are ``pneuma.server.security``'s plain
functions and the Content-Security-Policy is ``pneuma.server.csp``'s;
both modules import aiohttp only for type checking or inside their
middleware.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from pneuma.host.paths import web_dir
from pneuma.server.security import (
    allowed_hosts,
    choose_token,
    cookie_name,
    token_matches,
)

# A request head this long without its blank line is left to aiohttp.
MAX_HEAD = 64 * 1024
# Larger files are left to aiohttp (it streams them).
MAX_FILE = 2 * 1024 * 1024
SEND_TIMEOUT = 5.0
# While this thread serves, the main thread is importing (all of it Python
# holding the GIL): a short switch interval lets an answer through within
# a millisecond or so instead of 5 ms per blocking call.
SWITCH_INTERVAL = 0.0005

# Request headers whose answer this server does not compute (conditional
# and ranged requests, bodies, upgrades): aiohttp answers those.
_LEFT_TO_AIOHTTP = ("content-length", "transfer-encoding", "upgrade", "range", "if-match",
                    "if-none-match", "if-modified-since", "if-unmodified-since", "if-range",
                    "expect")
# Headers the checks read: sent twice, the request is aiohttp's to judge.
_SINGLE = ("host", "origin", "authorization", "cookie", "connection")


def no_agent_text(backend_name: str, session_id: str) -> str:
    """What the session says when its backend started no agent."""
    return (
        f"This session runs without an agent (--backend {backend_name}): "
        "the viewer works, the chat does not. Restart with --backend claude-code "
        "to talk to an agent, or with --backend socket and connect one to "
        f"/ws/cli/{session_id}."
    )


def config_answer(*, mode_json: dict[str, Any], mode_name: str, params: dict[str, Any],
                  workspace: Path, backend_name: str, action_timeout: float,
                  backend_module: str | None = None) -> dict[str, Any]:
    """The body of ``GET /api/config`` (``params`` already redacted)."""
    return {
        "mode": mode_json,
        "modeStaticUrl": f"/modes/{mode_name}/",
        "params": params,
        "workspace": str(workspace),
        "backend": backend_name,
        "actionTimeout": action_timeout,
        "backendModule": backend_module,  # the backend's browser module (BackendSpec)
    }


# Plain classes, not dataclasses: this module is imported before the
# ready line, and each dataclass costs a millisecond to build.


class FirstAnswers:
    """What the early server needs that only the start-up checks know,
    as the launch stamp records it (``to_json``/``from_json``)."""

    __slots__ = ("mode_json", "params", "static_dir", "backend_module")

    def __init__(self, mode_json: dict[str, Any], params: dict[str, Any],
                 static_dir: str, backend_module: str | None = None) -> None:
        self.mode_json = mode_json
        self.params = params  # redacted, as /api/config shows them
        self.static_dir = static_dir  # the mode's static folder (/modes/<mode>/…)
        self.backend_module = backend_module  # the backend's browser module (BackendSpec)

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode_json, "params": self.params, "staticDir": self.static_dir,
                "backendModule": self.backend_module}

    @classmethod
    def from_json(cls, data: Any) -> FirstAnswers | None:
        if not isinstance(data, dict):
            return None
        mode_json, params, static_dir = data.get("mode"), data.get("params"), data.get("staticDir")
        # A stamp from before backends had browser modules cannot say it:
        # no early answers then (the real server answers), never a wrong one.
        backend_module = data.get("backendModule", False)
        if not (isinstance(mode_json, dict) and isinstance(params, dict)
                and isinstance(static_dir, str)
                and (backend_module is None or isinstance(backend_module, str))):
            return None
        return cls(mode_json, params, static_dir, backend_module)


class EarlySite:
    """The served session, as the ready line announced it."""

    __slots__ = ("token", "host", "port", "workspace", "session_id", "mode_name", "backend",
                 "action_timeout", "answers", "runs_agent")

    def __init__(self, *, token: str, host: str, port: int, workspace: Path, session_id: str,
                 mode_name: str, backend: str, action_timeout: float,
                 answers: FirstAnswers, runs_agent: bool = True) -> None:
        self.token = token
        self.host = host
        self.port = port
        self.workspace = workspace
        self.session_id = session_id
        self.mode_name = mode_name
        self.backend = backend
        self.action_timeout = action_timeout
        self.answers = answers
        # False for a session the backend runs without an agent (said by
        # whoever starts the server: this one names no backend).
        self.runs_agent = runs_agent


class _Request:
    __slots__ = ("method", "path", "query", "version", "headers")

    def __init__(self, method: str, path: str, query: str, version: str) -> None:
        self.method = method
        self.path = path
        self.query = query
        self.version = version
        self.headers: dict[str, list[str]] = {}

    def header(self, name: str) -> str | None:
        values = self.headers.get(name)
        return values[0] if values else None


def _parse_head(head: bytes) -> _Request | None:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return None
    method, target, version = parts
    path, _, query = target.partition("?")
    request = _Request(method, path, query, version)
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or line[0] in " \t":
            return None  # folded or malformed: aiohttp's parser decides
        request.headers.setdefault(name.lower(), []).append(value.strip(" \t"))
    return request


def _http_date(seconds: float) -> str:
    return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(seconds))


class EarlyServer:
    """Serves the first answers from a thread until ``stop``."""

    def __init__(self, sock: socket.socket, site: EarlySite) -> None:
        self._listener = sock
        self._site = site
        self._hosts = allowed_hosts(site.host, site.port)
        self._origins = {f"http://{h}" for h in self._hosts}
        self._wake_r, self._wake_w = socket.socketpair()
        self._stopping = False
        self._open: set[socket.socket] = set()  # accepted and not closed
        # What answering needs is imported here, in the caller's thread:
        # this thread imports nothing. Its imports would contend with the
        # main thread's for the import lock, and a Ctrl-C arriving while
        # the main thread waits for it inside the import machinery is
        # swallowed there ("Exception ignored in ...").
        import mimetypes

        from pneuma.server.csp import policy_for
        from pneuma.server.persistence import load_session

        self._load_session = load_session
        self._policy = policy_for
        # Reads the system's tables on its first call (importing nothing).
        self._guess_type = mimetypes.guess_type
        self._thread = threading.Thread(target=self._run, name="pneuma-early-server",
                                        daemon=True)
        self._switch_interval = sys.getswitchinterval()

    def start(self) -> None:
        sys.setswitchinterval(SWITCH_INTERVAL)
        self._thread.start()

    def stop(self) -> list[socket.socket]:
        """Stop answering; the connections it accepted and did not close,
        each at a request boundary with its next request unread."""
        self._stopping = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        self._thread.join()
        sys.setswitchinterval(self._switch_interval)
        self._wake_r.close()
        self._wake_w.close()
        held, self._open = list(self._open), set()
        return held

    # --- the thread ---

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        try:
            selector.register(self._listener, selectors.EVENT_READ, "listen")
            selector.register(self._wake_r, selectors.EVENT_READ, "wake")
            while not self._stopping:
                for key, _ in selector.select():
                    if self._stopping:
                        break
                    if key.data == "listen":
                        self._accept(selector)
                    elif key.data == "conn":
                        self._readable(selector, key.fileobj)  # type: ignore[arg-type]
        except Exception as exc:  # never worse than waiting for the real server
            print(f"[pneuma] warning: the early server stopped: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
        finally:
            selector.close()

    def _accept(self, selector: selectors.BaseSelector) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            conn.setblocking(False)
            self._open.add(conn)
            selector.register(conn, selectors.EVENT_READ, "conn")

    def _hold(self, selector: selectors.BaseSelector, conn: socket.socket) -> None:
        """Leave ``conn`` alone (still open) until ``stop`` hands it over."""
        selector.unregister(conn)

    def _close(self, selector: selectors.BaseSelector, conn: socket.socket) -> None:
        selector.unregister(conn)
        self._open.discard(conn)
        conn.close()

    def _readable(self, selector: selectors.BaseSelector, conn: socket.socket) -> None:
        try:
            head = conn.recv(MAX_HEAD, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(selector, conn)
            return
        if not head:
            self._close(selector, conn)
            return
        end = head.find(b"\r\n\r\n")
        request = _parse_head(head[:end]) if end >= 0 else None
        answer = self._answer(request) if request is not None else None
        if answer is None:
            self._hold(selector, conn)  # aiohttp reads it from its first byte
            return
        data, close = answer
        try:
            conn.recv(end + 4)  # exactly the head just answered; the next request stays
            conn.settimeout(SEND_TIMEOUT)
            conn.sendall(data)
            conn.setblocking(False)
        except OSError:
            self._close(selector, conn)
            return
        if close:
            try:
                conn.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            self._close(selector, conn)

    # --- answers ---

    def _answer(self, request: _Request) -> tuple[bytes, bool] | None:
        """The whole HTTP answer and whether to close after it, or None:
        not one for this server."""
        if request.method != "GET" or request.version != "HTTP/1.1":
            return None
        if any(name in request.headers for name in _LEFT_TO_AIOHTTP):
            return None
        if any(len(request.headers.get(name, ())) > 1 for name in _SINGLE):
            return None
        path = request.path
        # Escapes, dot segments and doubled slashes: aiohttp normalises
        # those and may route them elsewhere.
        if not path.startswith("/") or "%" in path or "\\" in path or "//" in path \
                or "/." in path:
            return None
        host = request.header("host") or ""
        if host not in self._hosts:
            return None
        origin = request.header("origin")
        if origin is not None and origin not in self._origins:
            return None
        query_token = next((v for k, v in parse_qsl(request.query, keep_blank_values=True)
                            if k == "token"), None)
        presented, source = choose_token(request.header("authorization") or "", query_token,
                                         _cookies(request.header("cookie")), host)
        if presented is None or not token_matches(presented, self._site.token):
            return None
        body = self._route(path)
        if body is None:
            return None
        content, headers = body
        if source == "query":
            headers.append(("Set-Cookie", f"{cookie_name(host)}={self._site.token}; HttpOnly; "
                                          "Path=/; SameSite=Strict"))
        headers.append(("Date", _http_date(time.time())))
        headers.append(("Content-Security-Policy", self._shell_policy(host)))
        headers.append(("X-Content-Type-Options", "nosniff"))
        connection = (request.header("connection") or "").lower()
        close = "close" in [token.strip() for token in connection.split(",")]
        head = "HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
        return head.encode("latin-1") + content, close

    def _shell_policy(self, host: str) -> str:
        """The Content-Security-Policy of the shell: every route answered
        here is the shell's (``pneuma.server.csp``)."""
        return self._policy("/", host)

    def _route(self, path: str) -> tuple[bytes, list[tuple[str, str]]] | None:
        site = self._site
        if path == "/api/session":
            return self._json(self._session_info())
        if path == "/api/config":
            return self._json(config_answer(
                mode_json=site.answers.mode_json, mode_name=site.mode_name,
                params=site.answers.params, workspace=site.workspace,
                backend_name=site.backend, action_timeout=site.action_timeout,
                backend_module=site.answers.backend_module))
        if path == "/api/preferences":
            # The person's language before the first paint (the store reads one small file).
            from pneuma.server.preferences import PreferenceStore, workspace_key
            return self._json(PreferenceStore().read().view(workspace_key(site.workspace)))
        if path == "/":
            return _file(web_dir(), "index.html", self._guess_type)
        if path.startswith("/static/"):
            return _file(web_dir(), path[len("/static/"):], self._guess_type)
        if path.startswith("/modes/"):
            mode, _, rel = path[len("/modes/"):].partition("/")
            if mode == site.mode_name:
                return _file(Path(site.answers.static_dir), rel, self._guess_type)
        return None

    def _json(self, data: dict[str, Any]) -> tuple[bytes, list[tuple[str, str]]]:
        content = json.dumps(data).encode("utf-8")
        return content, [("Content-Type", "application/json; charset=utf-8"),
                         ("Content-Length", str(len(content)))]

    def _session_info(self) -> dict[str, Any]:
        """``Session.session_info()`` of the session the server will build,
        before it is built: the stored ids and seq, no agent yet."""
        site = self._site
        stored = self._load_session(site.workspace, site.mode_name, site.backend,
                              new_session_id=site.session_id)
        return {
            "session_id": stored.session_id,
            # The current conversation (docs/conversations.md): the first
            # one's id is the session's own.
            "conversation_id": stored.conversation_id or stored.session_id,
            "agent_session_id": stored.agent_session_id,
            "mode": site.mode_name,
            "backend": site.backend,
            "cwd": str(site.workspace),
            "status": "idle",
            "agent_connected": False,
            "no_agent_reason": (None if site.runs_agent
                                else no_agent_text(site.backend, stored.session_id)),
            "model": None,
            "tools": [],
            "permission_mode": None,
            "last_seq": stored.last_seq,
            "saving": None,  # the log is not open yet: nothing known to be paused
        }


def _cookies(header: str | None) -> dict[str, str]:
    cookies: dict[str, str] = {}
    for part in (header or "").split(";"):
        name, eq, value = part.strip().partition("=")
        if eq and name not in cookies:
            cookies[name] = value
    return cookies


def _file(root: Path, rel: str, guess_type: Callable[[str], tuple[str | None, str | None]]
          ) -> tuple[bytes, list[tuple[str, str]]] | None:
    """A static file as aiohttp's ``FileResponse`` sends it (``no-cache``),
    or None: not a plain file under ``root``, or one aiohttp must serve."""
    if not rel:
        return None
    root = root.resolve()
    target = (root / rel).resolve()
    if root not in target.parents:
        return None
    content_type, encoding = guess_type(str(target))
    if content_type is None or encoding is not None:
        return None
    # A precompressed sibling is what aiohttp would send to most browsers.
    if os.path.exists(f"{target}.gz") or os.path.exists(f"{target}.br"):
        return None
    if not target.is_file():  # and never open a FIFO: it would block
        return None
    try:
        with open(target, "rb") as file:
            st = os.fstat(file.fileno())
            if st.st_size > MAX_FILE:
                return None
            content = file.read()
    except OSError:
        return None
    if len(content) != st.st_size:
        return None
    return content, [
        ("Cache-Control", "no-cache"),
        ("Content-Type", content_type),
        ("Etag", f'"{st.st_mtime_ns:x}-{st.st_size:x}"'),
        ("Last-Modified", _http_date(st.st_mtime)),
        ("Content-Length", str(len(content))),
        ("Accept-Ranges", "bytes"),
    ]
