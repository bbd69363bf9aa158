"""A real launcher server for a test: ``launcher`` is the launcher's
aiohttp application on a socket of its own (127.0.0.1, a free port, its
token), serving workspaces with the fake Claude Code CLI
(tests/fakes/fake_claude.py) as each workspace's agent, its list in a
temporary ``PNEUMA_HOME`` and the home folder in the test's tmp_path.
Everything it served is stopped when the test ends."""

from __future__ import annotations

import secrets
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from pneuma.launcher.app import LauncherState, create_launcher_app
from pneuma.launcher.hosting import AgentDefaults, WorkspaceHost
from pneuma.startup.recent import RecentWorkspaces
from pneuma.startup.runner import bind_socket

REPO = Path(__file__).resolve().parents[2]
FAKE_CLI = REPO / "tests" / "fakes" / "fake_claude.py"


def fake_claude_bin(directory: Path) -> Path:
    """A `claude` that runs tests/fakes/fake_claude.py, logging what it read."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "claude"
    script.write_text("#!/bin/sh\n"
                      f'export FAKE_CLAUDE_LOG="{directory / "fake_claude.log"}"\n'
                      f'exec "{sys.executable}" "{FAKE_CLI}" "$@"\n')
    script.chmod(0o755)
    return script


@dataclass
class Launcher:
    url: str
    token: str
    state: LauncherState
    http: aiohttp.ClientSession
    home: Path

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    async def call(self, method: str, path: str, *, token: bool = True,
                   **kwargs: Any) -> tuple[int, Any]:
        headers = {**(self.auth if token else {}), **kwargs.pop("headers", {})}
        async with self.http.request(method, self.url + path, headers=headers, **kwargs) as r:
            return r.status, await r.json()


@pytest.fixture
async def launcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Launcher]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("PNEUMA_HOME", str(tmp_path / "pneuma-home"))
    recent = RecentWorkspaces(tmp_path / "pneuma-home")
    defaults = AgentDefaults(backend="claude-code",
                             claude_bin=str(fake_claude_bin(tmp_path / "fake-claude")))
    hosting = WorkspaceHost(defaults, recent)
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    state = LauncherState(token=secrets.token_urlsafe(24), host="127.0.0.1", port=port,
                          recent=recent, hosting=hosting)
    runner = web.AppRunner(create_launcher_app(state), handle_signals=False, access_log=None,
                                 shutdown_timeout=1.0)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    async with aiohttp.ClientSession() as http:
        try:
            yield Launcher(f"http://127.0.0.1:{port}", state.token, state, http, home)
        finally:
            await hosting.stop_all()
            await runner.cleanup()
