"""`pneuma` / `pneuma open`: the launcher process, from bind to the last
session saved.

It binds (the asked port or the next free one, said before the ready
line), prints ``[pneuma] launcher ready http://127.0.0.1:PORT/?token=…``,
opens the browser and serves until Ctrl-C, SIGTERM or SIGHUP; then every
workspace it serves is stopped as `pneuma run` stops its one (tabs
closed, agent stopped, state saved) before the process exits.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import sys
from dataclasses import dataclass, field

from pneuma.launcher.hosting import AgentDefaults, WorkspaceHost
from pneuma.startup.recent import RecentWorkspaces
from pneuma.startup.runner import (
    PortUnavailable,
    bind_socket,
    import_aiohttp_web,
    page_url,
    stop_app_runner,
    stop_event_on_signals,
)

DEFAULT_LAUNCHER_PORT = 17000


@dataclass
class LauncherOptions:
    host: str = "127.0.0.1"
    port: int = DEFAULT_LAUNCHER_PORT
    open_browser: bool = True
    agent: AgentDefaults = field(default_factory=AgentDefaults)


def _say(line: str) -> None:
    print(f"[pneuma] {line}", file=sys.stderr, flush=True)


def launcher_url(host: str, port: int, token: str) -> str:
    return page_url(host, port, f"token={token}")


async def serve_launcher(options: LauncherOptions) -> int:
    web = import_aiohttp_web()
    from pneuma.launcher.app import LauncherState, create_launcher_app

    stop = stop_event_on_signals()
    if stop.is_set():  # one came while the loop was being built
        return 0
    loop = asyncio.get_running_loop()

    sock = bind_socket(options.host, options.port)
    port = sock.getsockname()[1]
    if options.port and port != options.port:
        _say(f"port {options.port} is taken; using {port}")
    recent = RecentWorkspaces(warn=lambda text: _say(f"warning: {text}"))
    hosting = WorkspaceHost(options.agent, recent, notify=_say, host=options.host)
    state = LauncherState(token=secrets.token_urlsafe(24), host=options.host, port=port,
                          recent=recent, hosting=hosting)
    runner = web.AppRunner(create_launcher_app(state), handle_signals=False, access_log=None,
                                 shutdown_timeout=1.0)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    url = launcher_url(options.host, port, state.token)
    hosting.launcher_page = page_url(options.host, port, "").rstrip("?")
    print(f"[pneuma] launcher ready {url}", flush=True)
    if options.open_browser:
        import webbrowser

        loop.run_in_executor(None, webbrowser.open, url)

    await stop.wait()
    _say("stopping…")
    # The workspaces first, all at once: each saves its session and stops
    # its agent, as `pneuma run` does on the same signal.
    await hosting.stop_all()
    await stop_app_runner(runner)
    return 0


def run_launcher(options: LauncherOptions) -> int:
    """Serve the launcher until a stop signal; the exit status."""
    from pneuma.startup.runner import remember_stop_signals, stop_signalled

    logging.basicConfig(level=logging.WARNING,
                        format="[pneuma] %(levelname)s %(name)s: %(message)s")
    remember_stop_signals()
    if stop_signalled():
        return 0
    try:
        return asyncio.run(serve_launcher(options))
    except PortUnavailable as exc:
        print(f"pneuma: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
