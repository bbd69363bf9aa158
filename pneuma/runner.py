"""``pneuma run``: workspace, skill, server, agent, watcher, until a signal."""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import secrets
import signal
import socket
import sys
import webbrowser
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("pneuma")

DEFAULT_PORT = 17007
PORT_TRIES = 50
SHUTDOWN_SECONDS = 4.5


@dataclass
class RunOptions:
    mode: Any  # LoadedMode
    workspace: Path
    params: dict[str, Any]
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


class PortUnavailable(OSError):
    pass


def bind_socket(host: str, port: int, tries: int = PORT_TRIES) -> socket.socket:
    """Bind the first free port from ``port`` upward (``0``: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    last_error: OSError | None = None
    candidates = [0] if port == 0 else range(port, min(port + tries, 65536))
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
    raise PortUnavailable(f"no free port in {port}–{port + tries - 1} on {host}: {last_error}")


def find_backend(name: str):
    from pneuma.plugins import get_plugin_manager

    specs = {}
    for result in get_plugin_manager().hook.register_backends():
        for spec in result or []:
            specs.setdefault(spec.name, spec)
    if name not in specs:
        raise LookupError(f"no backend named '{name}' (available: {', '.join(sorted(specs))})")
    return specs[name]


async def serve(options: RunOptions, *, ready_callback=None) -> int:
    from aiohttp import web

    from pneuma.server.app import ServerConfig, create_app
    from pneuma.server.persistence import load_session
    from pneuma.server.session import Session

    # Signal handlers first: a supervisor may send SIGTERM the moment the
    # ready line appears (or during start-up), and the default handler
    # would kill the process without saving the session.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, stop.set)
        except (NotImplementedError, RuntimeError):
            pass

    backend_spec = find_backend(options.backend)
    workspace = options.workspace.resolve()
    stored = load_session(workspace, options.mode.name, options.backend)
    session = Session(
        stored.session_id,
        mode=options.mode.name,
        workspace=workspace,
        backend_name=options.backend,
        history=stored.history,
        last_seq=stored.last_seq,
        agent_session_id=stored.agent_session_id,
    )
    sock = bind_socket(options.host, options.port)
    port = sock.getsockname()[1]
    token = options.token or secrets.token_urlsafe(24)
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
    app = create_app(config)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.SockSite(runner, sock, shutdown_timeout=1.0)
    await site.start()

    display_host = "127.0.0.1" if options.host in ("0.0.0.0", "::") else options.host
    if ":" in display_host:
        display_host = f"[{display_host}]"
    url = f"http://{display_host}:{port}/?session={session.id}&token={token}"
    print(f"[pneuma] ready {url}", flush=True)
    # Everything start-up made (modules, the app, pydantic's validators)
    # lives until exit: move it out of the collector's sight, so that a
    # full collection during a stream walks only what the session made
    # since (such a pause is the worst latency a browser sees).
    gc.freeze()
    if ready_callback is not None:
        ready_callback(url)
    if options.open_browser:
        asyncio.get_running_loop().run_in_executor(None, webbrowser.open, url)

    await stop.wait()
    print("[pneuma] stopping…", file=sys.stderr, flush=True)
    try:
        await asyncio.wait_for(runner.cleanup(), SHUTDOWN_SECONDS)
    except asyncio.TimeoutError:
        log.warning("shutdown took longer than %.1f s; exiting anyway", SHUTDOWN_SECONDS)
    return 0


def run(options: RunOptions) -> int:
    logging.basicConfig(level=logging.WARNING, format="[pneuma] %(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(serve(options))
    except PortUnavailable as exc:
        print(f"pneuma: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
