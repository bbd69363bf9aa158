"""One process serving several workspaces: ``WorkspaceHost``.

Each workspace the launcher opens is what `pneuma run` would serve: the
same start checks (pneuma.startup.start_checks, the workspace lock taken by
this process), the same session application (pneuma.startup.runner's
``build_session_app``) on its own aiohttp runner and its own port on
127.0.0.1, with its own token: a workspace's URL and token open that
workspace only, and the launcher's token opens none of them.

A session lives until it is stopped from the launcher or the launcher
exits; a browser tab closing changes nothing (the agent finishes its
turn, and a tab that comes back gets the conversation replayed).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.server.stopping import StopReason
from pneuma.startup import workspace_lock
from pneuma.startup.recent import RecentWorkspaces
from pneuma.startup.runner import (
    RunOptions,
    bind_socket,
    build_session_app,
    session_url,
    stop_app_runner,
)
from pneuma.startup.start_checks import StartProblem, agent_notices, start_checks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AgentDefaults:
    """The agent options of `pneuma open`, for every workspace it opens."""

    backend: str = "claude-code"
    claude_bin: str | None = None
    model: str | None = None
    permission_mode: str | None = None
    action_timeout: float = 60.0
    agent_env: dict[str, str] = field(default_factory=dict)


@dataclass
class HostedSession:
    workspace: Path
    mode: str
    session_id: str
    token: str
    port: int
    url: str
    started_at: float
    runner: web.AppRunner

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.workspace), "mode": self.mode, "sessionId": self.session_id,
                "port": self.port, "url": self.url, "startedAt": self.started_at}


class WorkspaceHost:
    """The sessions this process serves, by resolved workspace path."""

    def __init__(self, defaults: AgentDefaults, recent: RecentWorkspaces,
                 notify: Callable[[str], None] | None = None, host: str = "127.0.0.1") -> None:
        self.defaults = defaults
        self.recent = recent
        self.host = host
        self._notify = notify or (lambda line: log.info("%s", line))
        self._sessions: dict[str, HostedSession] = {}
        self._opening = asyncio.Lock()  # one start at a time: checks and locks never race
        # The launcher's page (no token), which a stopped workspace's tab
        # offers for opening it again; main.py sets it once it is bound.
        self.launcher_page: str | None = None

    def sessions(self) -> list[HostedSession]:
        return sorted(self._sessions.values(), key=lambda s: s.started_at)

    def get(self, workspace: Path) -> HostedSession | None:
        return self._sessions.get(str(workspace.resolve()))

    async def open(self, workspace: Path, mode_name: str,
                   params: Mapping[str, Any] | None = None,
                   backend: str | None = None) -> HostedSession:
        """Serve ``workspace`` with ``mode_name`` (seeding it with ``params``
        when new) and ``backend`` (default: the launcher's), or return its
        session if this process serves it already. Raises ``StartProblem``
        (the line `pneuma run` would print)."""
        workspace = workspace.resolve()
        backend = backend or self.defaults.backend
        async with self._opening:
            hosted = self._sessions.get(str(workspace))
            if hosted is not None:
                return hosted
            loop = asyncio.get_running_loop()
            prefix = f"{workspace.name}: "

            def notify(line: str) -> None:
                self._notify(prefix + line)

            defaults = self.defaults
            # The checks read and write files and may import a mode: off the loop.
            try:
                mode, values = await loop.run_in_executor(None, lambda: start_checks(
                    mode_name, workspace, backend, dict(params or {}),
                    notify=lambda line: loop.call_soon_threadsafe(notify, line),
                    claude_bin=defaults.claude_bin, agent_env=defaults.agent_env,
                    seeding="always"))  # its dialog listed the starter files first
            except StartProblem:
                self._release_if_unserved(workspace)
                raise
            try:
                hosted = await self._serve(workspace, mode, values, notify, backend)
            except BaseException as exc:
                self._release_if_unserved(workspace)
                if _log_refused(exc):  # held by another process: as `pneuma run` says it
                    raise StartProblem(str(exc)) from None
                raise
            self._sessions[str(workspace)] = hosted
        try:
            await loop.run_in_executor(None, self.recent.record, workspace, mode.name)
        except Exception as exc:  # the list is a convenience
            notify(f"warning: could not add it to the recent workspaces: {exc}")
        return hosted

    async def _serve(self, workspace: Path, mode: Any, values: dict[str, Any],
                     notify: Callable[[str], None], backend: str) -> HostedSession:
        from pneuma.server.persistence import peek_session_id

        defaults = self.defaults
        permission_mode = defaults.permission_mode
        permission_mode = agent_notices(backend, mode, permission_mode, notify)
        session_id, _resumed = peek_session_id(workspace, mode.name, backend)
        token = secrets.token_urlsafe(24)
        sock = bind_socket(self.host, 0)
        port = sock.getsockname()[1]
        options = RunOptions(
            mode=mode, workspace=workspace, params=values, host=self.host, port=port,
            backend=backend, model=defaults.model, permission_mode=permission_mode,
            claude_bin=defaults.claude_bin, open_browser=False,
            action_timeout=defaults.action_timeout, token=token,
            agent_env=dict(defaults.agent_env))
        try:
            app = build_session_app(options, session_id=session_id, token=token, port=port)
            runner = web.AppRunner(app, handle_signals=False, access_log=None,
                                 shutdown_timeout=1.0)
            await runner.setup()
            site = web.SockSite(runner, sock)
            await site.start()
        except BaseException:
            sock.close()
            raise
        url = session_url(self.host, port, app_session_id(app), token)
        workspace_lock.record_url(workspace, url)
        notify(f"serving {url}")
        return HostedSession(workspace, mode.name, app_session_id(app), token, port, url,
                             time.time(), runner)

    async def stop(self, workspace: Path, reason: StopReason = "stopped") -> bool:
        """Stop the session of ``workspace`` (its tabs told why, its agent
        stopped, its state saved, its lock given up); False when this
        process does not serve it."""
        hosted = self._sessions.pop(str(workspace.resolve()), None)
        if hosted is None:
            return False
        await stop_app_runner(hosted.runner, reason, self.launcher_page)
        workspace_lock.release(hosted.workspace)
        self._notify(f"{hosted.workspace.name}: stopped")
        return True

    async def stop_all(self) -> None:
        """Every session stopped together (the launcher is exiting)."""
        await asyncio.gather(*(self.stop(s.workspace, "exiting") for s in self.sessions()),
                             return_exceptions=True)

    def _release_if_unserved(self, workspace: Path) -> None:
        if str(workspace) not in self._sessions:
            workspace_lock.release(workspace)


def app_session_id(app: web.Application) -> str:
    """The id of the session an app built by ``build_session_app`` serves
    (the stored one when resumed)."""
    from pneuma.server.config import SESSION

    return app[SESSION].id


def _log_refused(exc: BaseException) -> bool:
    """The workspace's conversation log must not be used now (another
    process holds it): a refusal to start, not a fault of the launcher."""
    from pneuma.server.conversation_log import ConversationLogRefused

    return isinstance(exc, ConversationLogRefused)
