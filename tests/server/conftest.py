"""Fixtures for the server's tests: a real aiohttp app around a Session,
a fake agent backend, and a browser WebSocket client that speaks the
protocol the way the page does.

``make_server(...)`` builds a ``ServerConfig`` for the slide mode (or any
mode given) in a seeded temporary workspace and serves it with
pytest-aiohttp's ``aiohttp_client`` (harness.py). The returned ``Server``
knows its token and session and opens browser tabs: ``tab = await server.tab()``.

The fake backend (``pneuma.testing.FakeAgent``, the one plugin tests get)
records every call and emits messages through the session exactly as a real
backend does (``backend.emit({...})``), so no CLI is needed. The tab
(``WSClient``, ``pneuma.testing.BrowserTab``) is re-exported by ws_client.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pneuma.core.backend import BackendSpec
from pneuma.host.modes import LoadedMode
from pneuma.host.registry import get_mode
from pneuma.server.session import REPLAY_BUFFER_SIZE, Session
from pneuma.testing import FakeAgent as FakeBackend
from pneuma.testing import fake_agent_spec
from pneuma.workspace.params import init_workspace
from tests.server.harness import AppServer, server_config, start_app_server


@dataclass(kw_only=True)
class Server(AppServer):
    """A served slide session and the fake agents its backend spec built."""

    built: list[FakeBackend]

    @property
    def backend(self) -> FakeBackend | None:
        """The fake agent serving the session (None with ``backend="none"``)."""
        return self.built[0] if self.built else None


def no_backend_spec() -> BackendSpec:
    from pneuma.agents.builtin import register_backends

    return next(s for s in register_backends() if s.name == "none")


@pytest.fixture
def slide_mode(pm) -> LoadedMode:
    return get_mode("slide")


MakeServer = Callable[..., Awaitable[Server]]


@pytest.fixture
def make_server(aiohttp_client, slide_mode: LoadedMode, tmp_path: Path) -> MakeServer:
    """``await make_server(backend="fake"|"none", watch=False, replay_size=...,
    action_timeout=..., mode=..., workspace=..., session=..., seed=True,
    save_interval=3600)``."""
    counter = iter(range(1000))

    async def make(
        *,
        backend: str = "fake",
        watch: bool = False,
        replay_size: int = REPLAY_BUFFER_SIZE,
        action_timeout: float = 60.0,
        mode: LoadedMode | None = None,
        workspace: Path | None = None,
        session: Session | None = None,
        seed: bool = True,
        token: str | None = None,
        save_interval: float = 3600,
    ) -> Server:
        mode = mode or slide_mode
        if workspace is None:
            workspace = tmp_path / f"ws{next(counter)}"
        workspace.mkdir(parents=True, exist_ok=True)
        if seed:
            init_workspace(mode, workspace, {})
        workspace = workspace.resolve()
        if session is None:
            session = Session(str(uuid.uuid4()), mode=mode.name, workspace=workspace,
                              backend_name=backend, replay_size=replay_size)
        holder: list[FakeBackend] = []
        spec = fake_agent_spec(holder) if backend == "fake" else no_backend_spec()
        config = server_config(mode, workspace, backend=spec, session=session, token=token,
                               action_timeout=action_timeout, watch=watch,
                               save_interval=save_interval)
        return await start_app_server(aiohttp_client, config, Server, built=holder)

    return make


@pytest.fixture
async def server(make_server: MakeServer) -> Server:
    """A slide-mode server with the fake backend and no file watcher."""
    return await make_server()
