"""``pneuma run``: workspace, skill, server, agent, watcher, until a signal.

Start-up has two halves. ``announce`` binds the port, settles the session
id and token, prints the ready line and sends the browser on its way,
with nothing but the standard library imported; ``run`` then builds the
server (aiohttp, the session, the agent, the watcher) and serves on the
socket ``announce`` bound. A browser that connects in between waits in
the socket's accept queue and is answered as soon as the server is up,
except for its first requests (the page, its static files, the session
and config): ``Announced.serve_early`` answers those meanwhile
(``pneuma.server.early_server``), from the launch stamp on a warm start
or from the checks just run, and hands every other connection, its
request unread, to the real server once it is up.
"""

from __future__ import annotations

import errno
import secrets
import signal
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pneuma.core.backend import NO_AGENT_BACKEND
from pneuma.startup.streams import guard_standard_streams

if TYPE_CHECKING:
    import asyncio

    from pneuma.server.stopping import StopReason

DEFAULT_PORT = 17007
PORT_TRIES = 50
SHUTDOWN_SECONDS = 4.5


@dataclass
class RunOptions:
    mode: Any  # LoadedMode; None until the checks have run (see ``announce``)
    workspace: Path
    params: dict[str, Any]
    mode_name: str = ""
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    backend: str = "claude-code"
    model: str | None = None
    permission_mode: str | None = None
    claude_bin: str | None = None
    open_browser: bool = True
    action_timeout: float = 60.0
    token: str | None = None
    agent_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.mode_name and self.mode is not None:
            self.mode_name = self.mode.name


# The signals that stop `pneuma run`: Ctrl-C, a service manager, and the
# terminal that started it closing.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


_stop_signalled = False


def _interrupt(signum: int, frame: Any) -> None:
    global _stop_signalled
    _stop_signalled = True
    raise KeyboardInterrupt


def interrupt_on_stop_signals() -> None:
    """Until the event loop handles them, the stop signals raise
    ``KeyboardInterrupt`` (a clean stop) instead of killing the process.

    They are also remembered: an interrupt raised where Python swallows it
    (in a weakref callback of the import machinery, say) must not leave the
    process serving for ever. Such a swallowed interrupt is not reported
    either ("Exception ignored in ..." and a traceback, on a clean stop):
    the start-up acts on it at its next check of ``stop_signalled``."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, _interrupt)
    if sys.unraisablehook is not _quiet_about_lost_interrupts:
        global _report_unraisable
        _report_unraisable = sys.unraisablehook
        sys.unraisablehook = _quiet_about_lost_interrupts


_report_unraisable = sys.unraisablehook


def _quiet_about_lost_interrupts(unraisable: Any) -> None:
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and _stop_signalled:
        return
    _report_unraisable(unraisable)


def _remember(signum: int, frame: Any) -> None:
    global _stop_signalled
    _stop_signalled = True


def remember_stop_signals() -> None:
    """From here until ``serve`` installs the event loop's handlers, a stop
    signal is only remembered, and ``serve`` stops as soon as they are in
    place. A ``KeyboardInterrupt`` raised in the middle of building the
    event loop (``asyncio.run``) would leave a half-made loop whose
    finaliser fails with a traceback on the terminal."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, _remember)


def stop_signalled() -> bool:
    """Whether a stop signal arrived before the event loop took over."""
    return _stop_signalled


class PortUnavailable(OSError):
    pass


def bind_socket(host: str, port: int, tries: int = PORT_TRIES) -> socket.socket:
    """Bind the first free port from ``port`` upward (``0``: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    last_error: OSError | None = None
    last_port = min(port + tries, 65536) - 1  # never name a port above 65535
    candidates = [0] if port == 0 else range(port, last_port + 1)
    for candidate in candidates:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, candidate))
        except OSError as exc:
            sock.close()
            last_error = exc
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                continue
            raise
        sock.listen(128)
        sock.setblocking(False)
        return sock
    raise PortUnavailable(f"no free port in {port}–{last_port} on {host}: {last_error}")


def find_backend(name: str):
    from pneuma.host.plugins import get_plugin_manager

    specs = {}
    for result in get_plugin_manager().hook.register_backends():
        for spec in result or []:
            specs.setdefault(spec.name, spec)
    if name not in specs:
        raise LookupError(f"no backend named '{name}' (installed: {', '.join(sorted(specs))}; "
                          "`pneuma backends` says which work now)")
    return specs[name]


@dataclass
class Announced:
    """What the ready line promised: the bound socket, the session and the token."""

    sock: socket.socket
    port: int
    session_id: str
    resumed: bool  # the session id is a stored session's
    token: str
    url: str
    workspace: Path
    host: str
    mode_name: str
    backend: str
    early: Any = None  # the EarlyServer answering until the real server is up

    def serve_early(self, answers: Any, action_timeout: float) -> None:
        """Answer the browser's first requests from a thread, from
        ``answers`` (the launch stamp's ``FirstAnswers``), until ``serve``
        takes over. Nothing to answer from (an old stamp): the browser
        waits for the real server, as on a cold start."""
        if answers is None:
            return
        from pneuma.server.early_server import EarlyServer, EarlySite

        self.early = EarlyServer(self.sock, EarlySite(
            token=self.token, host=self.host, port=self.port, workspace=self.workspace,
            session_id=self.session_id, mode_name=self.mode_name, backend=self.backend,
            action_timeout=action_timeout, answers=answers,
            runs_agent=self.backend != NO_AGENT_BACKEND))
        self.early.start()

    def publish(self, open_browser: bool) -> None:
        """Print the one ready line and open the browser (in a thread: it
        may take a while and must not hold up the server)."""
        from pneuma.startup.workspace_lock import record_url

        record_url(self.workspace, self.url)
        print(f"[pneuma] ready {self.url}", flush=True)
        if open_browser:
            import threading

            threading.Thread(target=_open_browser, args=(self.url,),
                             name="pneuma-open-browser", daemon=True).start()

    def save_unserved(self) -> None:
        """Stopped before the server was up: keep the session id the ready
        line promised, so that the next start resumes it (a stored session
        is left as it is: nothing happened to it)."""
        if self.resumed:
            return
        from pneuma.server.persistence import save_session

        try:
            save_session(self.workspace, session_id=self.session_id, mode=self.mode_name,
                         backend=self.backend, agent_session_id=None, last_seq=0)
        except OSError as exc:
            print(f"[pneuma] could not save the session: {exc}", file=sys.stderr)


def announce(options: RunOptions) -> Announced:
    """Bind, pick the session id and token (``Announced``); the caller
    then calls its ``publish``. Raises ``PortUnavailable``.

    From here until the event loop takes over, SIGTERM and SIGHUP stop
    start-up as Ctrl-C does (``KeyboardInterrupt``), instead of killing
    the process in the middle of writing a file."""
    from pneuma.server.persistence import peek_session_id

    interrupt_on_stop_signals()
    workspace = options.workspace.resolve()
    session_id, resumed = peek_session_id(workspace, options.mode_name, options.backend)
    sock = bind_socket(options.host, options.port)
    port = sock.getsockname()[1]
    if options.port and port != options.port:
        # Before the ready line: whoever expects the asked port learns why
        # the URL names another.
        print(f"[pneuma] port {options.port} is taken; using {port}", file=sys.stderr, flush=True)
    token = options.token or secrets.token_urlsafe(24)
    url = session_url(options.host, port, session_id, token)
    return Announced(sock, port, session_id, resumed, token, url, workspace, options.host,
                     options.mode_name, options.backend)


def _open_browser(url: str) -> None:
    import webbrowser

    webbrowser.open(url)


def import_aiohttp_web() -> Any:
    """``aiohttp.web``, with the CA certificates of the client contexts
    that ``aiohttp.connector`` builds at import (``load_default_certs``,
    ``set_default_verify_paths``: the system's bundle, read twice) loaded
    when first used instead: they cost tens of milliseconds of start-up,
    and a server on 127.0.0.1 mostly never makes an HTTPS request with
    them. The contexts are otherwise the standard library's, unchanged."""
    if "aiohttp.connector" in sys.modules:
        from aiohttp import web

        return web
    import ssl
    import threading

    deferred = ("load_default_certs", "set_default_verify_paths")
    originals = {name: getattr(ssl.SSLContext, name) for name in deferred}
    loading = threading.Lock()

    class CertificatesOnFirstUse(ssl.SSLContext):
        pending: list[tuple[str, tuple[Any, ...]]]

        def _load_pending(self) -> None:
            with loading:
                while self.pending:
                    name, args = self.pending.pop(0)
                    originals[name](self, *args)

        def wrap_socket(self, *args: Any, **kwargs: Any) -> Any:
            self._load_pending()
            return super().wrap_socket(*args, **kwargs)

        def wrap_bio(self, *args: Any, **kwargs: Any) -> Any:
            self._load_pending()
            return super().wrap_bio(*args, **kwargs)

        def get_ca_certs(self, binary_form: bool = False) -> Any:
            self._load_pending()
            return super().get_ca_certs(binary_form)

        def cert_store_stats(self) -> Any:
            self._load_pending()
            return super().cert_store_stats()

    def later(name: str) -> Any:
        def defer(self: ssl.SSLContext, *args: Any) -> None:
            if type(self) is ssl.SSLContext:
                self.__class__ = CertificatesOnFirstUse
                self.pending = []  # type: ignore[attr-defined]
            if isinstance(self, CertificatesOnFirstUse):
                self.pending.append((name, args))
            else:
                originals[name](self, *args)

        return defer

    for name in deferred:
        setattr(ssl.SSLContext, name, later(name))
    try:
        from aiohttp import web
    finally:
        for name, method in originals.items():
            setattr(ssl.SSLContext, name, method)
    return web


async def serve(options: RunOptions, announced: Announced) -> int:
    import asyncio
    import gc

    web = import_aiohttp_web()

    stop = stop_event_on_signals()
    loop = asyncio.get_running_loop()

    app = build_session_app(options, session_id=announced.session_id, token=announced.token,
                            port=announced.port)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    # The early server stops at a request boundary: what it accepted and
    # did not answer is served from here on, its next request unread.
    held = announced.early.stop() if announced.early is not None else []
    site = web.SockSite(runner, announced.sock, shutdown_timeout=1.0)
    await site.start()
    for conn in held:
        try:
            await loop.connect_accepted_socket(runner.server, conn)
        except OSError:
            conn.close()  # the browser went away meanwhile
    # Everything start-up made (modules, the app, pydantic's validators)
    # lives until exit: move it out of the collector's sight, so that a
    # full collection during a stream walks only what the session made
    # since (such a pause is the worst latency a browser sees).
    gc.freeze()

    # The launcher's list of recent workspaces names this one; in a worker
    # thread, after everything a browser waits for, and never a reason to stop.
    recording = loop.run_in_executor(None, record_recent, options.workspace, options.mode.name)

    await stop.wait()
    print("[pneuma] stopping…", file=sys.stderr, flush=True)
    await stop_app_runner(runner)
    await asyncio.wait([recording], timeout=1.0)
    release_stop_signals(loop)
    return 0


def release_stop_signals(loop: Any) -> None:
    """The loop's stop handlers give way to ``remember_stop_signals`` before
    the loop closes: closing it would put the defaults back, and a second
    SIGTERM from a supervisor that repeats itself, arriving between that
    and ``run``'s own reset, would kill the process before its exit code is
    out (seen as -15 on a loaded machine)."""
    for signum in STOP_SIGNALS:
        try:
            loop.remove_signal_handler(signum)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    remember_stop_signals()


def build_session_app(options: RunOptions, *, session_id: str, token: str, port: int) -> Any:
    """The aiohttp application of one workspace's session (its stored
    session resumed, or a new one under ``session_id``), for `pneuma run`
    and for each workspace the launcher serves (pneuma.launcher.hosting).
    ``options.mode`` must be the checked mode."""
    from pneuma.server.app import ServerConfig, create_app
    from pneuma.server.persistence import load_session, open_conversation
    from pneuma.server.session import Session

    backend_spec = find_backend(options.backend)
    workspace = options.workspace.resolve()
    stored = load_session(workspace, options.mode.name, options.backend,
                          new_session_id=session_id)
    session = Session(
        stored.session_id,
        mode=options.mode.name,
        workspace=workspace,
        backend_name=options.backend,
        conversation=open_conversation(workspace, stored),
        last_seq=stored.last_seq,
        agent_session_id=stored.agent_session_id,
        conversation_id=stored.conversation_id,
    )
    config = ServerConfig(
        mode=options.mode,
        workspace=workspace,
        token=token,
        session=session,
        host=options.host,
        port=port,
        params=options.params,
        action_timeout=options.action_timeout,
        backend=backend_spec,
        model=options.model,
        permission_mode=options.permission_mode,
        claude_bin=options.claude_bin,
        agent_env=options.agent_env,
    )
    return create_app(config)


async def stop_app_runner(runner: Any, reason: StopReason = "terminal",
                          launcher_page: str | None = None) -> None:
    """Stop a served session: its tabs told why (``reason``; the launcher's
    ``launcher_page`` to reopen it from) and closed, its agent stopped, its
    state saved (the app's cleanup), giving up after ``SHUTDOWN_SECONDS``."""
    import asyncio
    import logging

    from pneuma.server.stopping import tell_tabs_stopped

    await tell_tabs_stopped(runner.app, reason, launcher_page)

    try:
        await asyncio.wait_for(runner.cleanup(), SHUTDOWN_SECONDS)
    except asyncio.TimeoutError:
        logging.getLogger("pneuma").warning(
            "shutdown took longer than %.1f s; exiting anyway", SHUTDOWN_SECONDS)


def record_recent(workspace: Path, mode_name: str) -> None:
    """Add the workspace to the launcher's list of recent ones; a failure is
    one warning, never a reason to stop serving."""
    try:
        from pneuma.startup.recent import RecentWorkspaces

        RecentWorkspaces().record(workspace, mode_name)
    except Exception as exc:  # the list is a convenience: never fail the run for it
        print(f"[pneuma] warning: could not add {workspace} to the recent workspaces: {exc}",
              file=sys.stderr, flush=True)


def page_url(host: str, port: int, query: str) -> str:
    """A page of this server as a browser must ask for it: a wildcard bind
    is reached on 127.0.0.1, an IPv6 address in brackets."""
    display_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    if ":" in display_host:
        display_host = f"[{display_host}]"
    return f"http://{display_host}:{port}/?{query}"


def session_url(host: str, port: int, session_id: str, token: str) -> str:
    """The page of a session, as the ready line prints it."""
    return page_url(host, port, f"session={session_id}&token={token}")


def stop_event_on_signals() -> asyncio.Event:
    """An event the stop signals set, from the running loop's own handlers
    (installed first thing: a supervisor may send SIGTERM the moment the
    ready line appears, and the default handler would kill the process
    without saving anything); already set when one came during start-up."""
    import asyncio

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    if stop_signalled():  # one came during start-up (remembered, or its interrupt lost)
        stop.set()
    return stop


def run(options: RunOptions, announced: Announced | None = None) -> int:
    """Serve until SIGINT, SIGTERM or SIGHUP (announcing first unless done already)."""
    guard_standard_streams()
    # From here a stop signal is only remembered (serve() acts on it once
    # its loop is up): a KeyboardInterrupt raised inside the C code of an
    # import (asyncio pulls in ssl) comes out as some other error, a
    # traceback instead of a clean stop.
    remember_stop_signals()
    try:
        import asyncio
        import logging

        logging.basicConfig(level=logging.WARNING,
                            format="[pneuma] %(levelname)s %(name)s: %(message)s")
        if announced is None:
            announced = announce(options)  # raises on a stop signal while it binds
            announced.publish(options.open_browser)
            remember_stop_signals()
        try:
            return asyncio.run(serve(options, announced))
        finally:
            # Closing the loop put the stop signals back to their defaults:
            # a second SIGTERM while the process exits (a supervisor that
            # repeats itself) must not kill it before its exit code is out.
            remember_stop_signals()
    except PortUnavailable as exc:
        print(f"pneuma: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        # A conversation log another process holds: one line, no traceback.
        from pneuma.server.conversation_log import ConversationLogRefused

        if not isinstance(exc, ConversationLogRefused):
            raise
        print(f"pneuma: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if announced is not None:
            print("[pneuma] stopping…", file=sys.stderr, flush=True)
            # serve() handles both signals from its first line on, so
            # this one came before the server was up.
            announced.save_unserved()
        return 0
