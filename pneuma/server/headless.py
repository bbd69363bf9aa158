"""A Pneuma server without ``pneuma run``, for tools that need a page served.

A tool called over MCP or ``pneuma tool`` while no ``pneuma run`` is up may
still have to hand the person a page (WebGAL's ``preview_scene``: the game
engine at ``/webgal/``). It calls ``ensure_headless_server(mode, workspace)``,
which starts, or reuses while it answers, one background process per
workspace and mode. That process serves ``create_app()``: the very app
``pneuma run`` serves, with its token, Host and Origin checks and the mode's
own routes, only with no agent and without the workspace's stored session
(``ServerConfig.persist=False``), so a ``pneuma run`` before or after it finds
its conversation as it left it.

The process records ``{"pid", "port", "token", "startedAt"}`` in
``W/.pneuma/headless-<mode>.json`` (permissions 0600: the token is in it),
logs to ``W/.pneuma/headless-<mode>.log`` and stops by itself once nothing
has used it for ``idle_seconds`` (an open connection, such as a game's
WebSocket, counts as use). A browser opens ``HeadlessServer.page_url(...)``:
the server trades its ``?token=`` for the HttpOnly session cookie, as it does
for the URL ``pneuma run`` prints.

Run as ``python -m pneuma.server.headless --mode M --workspace W [--idle S]``
(that is what ``ensure_headless_server`` does).
"""

from __future__ import annotations

import argparse
import dataclasses
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pneuma.core.state_files import (
    open_state_file,
    read_state_bytes,
    write_state_bytes,
)
from pneuma.tools.server_client import request_json

if TYPE_CHECKING:
    from aiohttp import web

    from pneuma.host.modes import LoadedMode

IDLE_SECONDS = 600.0
START_TIMEOUT = 15.0
HOST = "127.0.0.1"

# Servers this process started: kept so that each is reaped once it exits
# (it is our child until then) rather than left to linger as a zombie.
_started: list[subprocess.Popen[bytes]] = []


def state_path(mode: str, workspace: Path) -> Path:
    """Where the headless server of ``mode`` in ``workspace`` records itself."""
    return Path(workspace) / ".pneuma" / f"headless-{mode}.json"


def log_path(mode: str, workspace: Path) -> Path:
    return Path(workspace) / ".pneuma" / f"headless-{mode}.log"


@dataclass(frozen=True)
class HeadlessServer:
    """A running headless server: where it listens and the token it wants."""

    mode: str
    workspace: Path
    pid: int
    port: int
    token: str
    reused: bool = False
    """True when ``ensure_headless_server`` found it running rather than started it."""

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``: the base of every route (send the
        token as ``Authorization: Bearer``)."""
        return f"http://{HOST}:{self.port}"

    def page_url(self, path: str = "/", fragment: str = "") -> str:
        """A URL a browser can open as it is: ``?token=`` on the first load
        becomes the session cookie that authorises the page's later requests."""
        url = f"{self.url}/{path.lstrip('/')}?token={urllib.parse.quote(self.token, safe='')}"
        return url + (f"#{fragment}" if fragment else "")

    def stop(self) -> None:
        """Ask the server to stop (SIGTERM); it removes its state file on the way out."""
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


# --- the caller's side --------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    try:  # an exited child its parent has not reaped yet is a zombie, not a server
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _answers(port: int, token: str, mode: str, workspace: Path) -> bool:
    """Whether the server on ``port`` takes ``token`` and serves ``mode`` in
    ``workspace`` (a port can be reused by anything once its owner is gone)."""
    status, config = request_json(f"http://{HOST}:{port}", "GET", "/api/config", token=token,
                                  timeout=2)
    return (status == 200 and isinstance(config, dict) and config.get("workspace") == str(workspace)
            and (config.get("mode") or {}).get("name") == mode)


def running_headless_server(mode: str, workspace: Path | str) -> HeadlessServer | None:
    """The headless server of ``mode`` in ``workspace``, if it is up and answering."""
    workspace = Path(workspace).resolve()
    try:
        record = json.loads(read_state_bytes(state_path(mode, workspace), 64 * 1024))
        pid, port, token = int(record["pid"]), int(record["port"]), str(record["token"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _alive(pid) or not _answers(port, token, mode, workspace):
        return None
    return HeadlessServer(mode, workspace, pid, port, token)


@contextmanager
def _start_lock(mode: str, workspace: Path) -> Iterator[None]:
    """One starter at a time per workspace and mode: two tool calls at once
    must share one server, not start two."""
    path = state_path(mode, workspace).with_suffix(".lock")
    with os.fdopen(open_state_file(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_headless_server(mode: str, workspace: Path | str, *,
                           idle_seconds: float = IDLE_SECONDS,
                           timeout: float = START_TIMEOUT) -> HeadlessServer:
    """The headless server of ``mode`` in ``workspace``: the running one
    (``reused=True``), else a new one started and answering.

    Raises ``RuntimeError`` with the reason (the end of its log) when the
    process exits instead, ``TimeoutError`` when it does not answer within
    ``timeout`` seconds."""
    workspace = Path(workspace).resolve()
    with _start_lock(mode, workspace):
        running = running_headless_server(mode, workspace)
        if running is not None:
            return dataclasses.replace(running, reused=True)
        return _start(mode, workspace, idle_seconds, timeout)


def _start(mode: str, workspace: Path, idle_seconds: float, timeout: float) -> HeadlessServer:
    _started[:] = [process for process in _started if process.poll() is None]
    state_path(mode, workspace).unlink(missing_ok=True)
    log = log_path(mode, workspace)
    env = dict(os.environ)
    # The child must import this very pneuma (a source checkout included).
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    with os.fdopen(open_state_file(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "pneuma.server.headless", "--mode", mode,
             "--workspace", str(workspace), "--idle", str(idle_seconds)],
            stdin=subprocess.DEVNULL, stdout=output, stderr=output, env=env,
            start_new_session=True, close_fds=True,
        )
    _started.append(process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = read_state_bytes(log).decode("utf-8", "replace")[-600:].strip()
            raise RuntimeError(f"the {mode} server exited with code {process.returncode}: {tail}")
        running = running_headless_server(mode, workspace)
        if running is not None and running.pid == process.pid:
            return running
        time.sleep(0.1)
    process.terminate()
    raise TimeoutError(f"the {mode} server did not answer within {timeout:g} s")


# --- the server's side ---------------------------------------------------------------


def headless_app(mode: LoadedMode, workspace: Path, *, token: str, port: int,
                 params: dict[str, Any] | None = None) -> web.Application:
    """The app a headless server serves: ``create_app()`` as ``pneuma run``
    builds it, with no agent and no stored session."""
    import uuid

    from pneuma.server.app import create_app
    from pneuma.server.config import ServerConfig
    from pneuma.server.session import Session

    session = Session(
        str(uuid.uuid4()), mode=mode.name, workspace=workspace, backend_name="none",
        no_agent_reason=("This server was started by a tool to serve pages; it runs no "
                         "agent. Open the workspace with `pneuma run` to work with one."),
    )
    config = ServerConfig(mode=mode, workspace=workspace, token=token, session=session,
                          host=HOST, port=port, params=dict(params or {}), persist=False)
    return create_app(config)


async def serve(mode_name: str, workspace: Path, idle_seconds: float) -> int:
    """Serve until SIGTERM/SIGINT or ``idle_seconds`` without use."""
    import asyncio
    import secrets
    import socket

    from aiohttp import web

    from pneuma.host.registry import get_mode
    from pneuma.workspace.params import WorkspaceError, resolve_params

    mode = get_mode(mode_name)
    try:
        params = resolve_params(mode, workspace, save=False)
    except WorkspaceError:
        params = {}
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((HOST, 0))
    sock.listen(128)
    sock.setblocking(False)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(24)
    app = headless_app(mode, workspace, token=token, port=port, params=params)

    last_used = time.monotonic()

    async def note_use(request: web.Request, response: web.StreamResponse) -> None:
        nonlocal last_used
        if response.status < 400:  # refused requests (a foreign page) keep nothing alive
            last_used = time.monotonic()

    app.on_response_prepare.append(note_use)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)

    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    await web.SockSite(runner, sock, shutdown_timeout=1.0).start()
    path = state_path(mode_name, workspace)
    record = {"pid": os.getpid(), "port": port, "token": token, "startedAt": time.time()}
    # Readable by this user only, from the first byte on: the token is in it.
    write_state_bytes(path, json.dumps(record).encode("utf-8"), 0o600)

    async def watch_idle() -> None:
        nonlocal last_used
        while True:
            await asyncio.sleep(min(30.0, max(idle_seconds / 4, 0.25)))
            # An open connection (a game's sync socket, a tab of the shell) is use.
            if runner.server is not None and runner.server.connections:
                last_used = time.monotonic()
            if time.monotonic() - last_used > idle_seconds:
                stop.set()
                return

    idle = loop.create_task(watch_idle())
    await stop.wait()
    idle.cancel()
    try:
        if json.loads(read_state_bytes(path, 64 * 1024)).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass
    try:
        await asyncio.wait_for(runner.cleanup(), 4.5)
    except asyncio.TimeoutError:
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    import asyncio
    import logging

    parser = argparse.ArgumentParser(
        prog="python -m pneuma.server.headless",
        description="Serve one workspace's mode with a token, without an agent.")
    parser.add_argument("--mode", required=True)
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--idle", type=float, default=IDLE_SECONDS,
                        help="seconds without use after which the server stops")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING,
                        format="[pneuma] %(levelname)s %(name)s: %(message)s")
    return asyncio.run(serve(args.mode, args.workspace.resolve(), args.idle))


if __name__ == "__main__":
    sys.exit(main())
