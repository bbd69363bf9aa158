"""What a running Pneuma server knows: its ``ServerConfig`` and the typed
keys under which the application holds its parts.

Route modules import from here, never from ``app.py`` (the factory), so that
the factory can import every route module without a cycle.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.core.backend import BackendSpec
from pneuma.core.errors import ToolError
from pneuma.core.file_filter import FileFilter
from pneuma.core.sandbox import Sandbox
from pneuma.host.modes import LoadedMode
from pneuma.server.session import Session
from pneuma.server.watcher import SelfWrites


@dataclass
class ServerConfig:
    mode: LoadedMode
    workspace: Path
    token: str
    session: Session
    host: str = "127.0.0.1"
    port: int = 0  # the real port once bound (set by the runner)
    params: dict[str, Any] = field(default_factory=dict)
    action_timeout: float = 60.0
    watch: bool = True
    watch_debounce_ms: int = 20
    save_interval: float = 5.0
    extra_hosts: set[str] = field(default_factory=set)
    backend: BackendSpec | None = None
    model: str | None = None
    permission_mode: str | None = None
    claude_bin: str | None = None
    agent_env: dict[str, str] = field(default_factory=dict)
    persist: bool = True
    """Save the session to the workspace (its id and history under .pneuma/)
    while serving and on exit. False for a server that must leave the stored
    session alone: the headless one a tool starts (pneuma.server.headless)
    beside, or instead of, ``pneuma run``."""

    @property
    def api_url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "localhost") else self.host
        return f"http://{host}:{self.port}"


CONFIG = web.AppKey("config", ServerConfig)
SESSION = web.AppKey("session", Session)
SANDBOX = web.AppKey("sandbox", Sandbox)
SELF_WRITES = web.AppKey("self_writes", SelfWrites)
FILE_FILTER = web.AppKey("file_filter", FileFilter)
STOP_EVENT = web.AppKey("stop_event", asyncio.Event)


def served_session(request: web.Request) -> Session:
    """The session named by the route's ``{sid}``: E_NOT_FOUND for any other id."""
    session = request.app[SESSION]
    sid = request.match_info["sid"]
    if sid != session.id:
        raise ToolError("E_NOT_FOUND", f"no session {sid!r} on this server",
                        details={"reason": "unknown_session", "sessionId": sid},
                        hint="the session id is in the URL `pneuma run` printed")
    return session
