"""Fixtures for the server's tests: a real aiohttp app around a Session,
a fake agent backend, and a browser WebSocket client that speaks the
protocol the way the page does.

``make_server(...)`` builds ``ServerConfig`` + ``create_app`` for the slide
mode (or any mode given) in a seeded temporary workspace and serves it with
pytest-aiohttp's ``aiohttp_client``. The returned ``Server`` knows its token
and session and opens browser tabs: ``tab = await server.tab()``.

The fake backend (``pneuma.testing.FakeAgent``, the one plugin tests get)
records every call and emits messages through the session exactly as a real
backend does (``backend.emit({...})``), so no CLI is needed. The tab
(``WSClient``, ``pneuma.testing.BrowserTab``) is re-exported by ws_client.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from pneuma.agents.base import BackendSpec
from pneuma.host.modes import LoadedMode
from pneuma.host.registry import get_mode
from pneuma.server.app import ServerConfig, create_app
from pneuma.server.session import REPLAY_BUFFER_SIZE, Session
from pneuma.testing import FakeAgent as FakeBackend
from pneuma.testing import fake_agent_spec
from pneuma.workspace.params import init_workspace
from tests.server.ws_client import WSClient


@dataclass
class Server:
    client: TestClient
    app: web.Application
    config: ServerConfig
    session: Session
    workspace: Path
    token: str
    backend: FakeBackend | None
    tabs: list[WSClient] = field(default_factory=list)

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.config.port}"

    def ws_path(self, last_seq: int | None = None) -> str:
        path = f"/ws/browser/{self.session.id}"
        return path if last_seq is None else f"{path}?last_seq={last_seq}"

    async def tab(self, *, subscribe: bool = True, last_seq: int | None = None) -> WSClient:
        """Open a browser tab; by default wait for session_init and subscribe
        from 0 (consuming message_history and the status snapshot)."""
        ws = await self.client.ws_connect(self.ws_path(last_seq), headers=self.auth)
        tab = WSClient(ws)
        self.tabs.append(tab)
        init = await tab.recv()
        assert init["type"] == "session_init", init
        if subscribe and last_seq is None:
            history = await tab.subscribe(0)
            assert history["type"] == "message_history", history
            status = await tab.recv()
            assert status["type"] == "status_change" and "seq" not in status, status
        return tab

    async def request(self, method: str, path: str, **kwargs: Any) -> aiohttp.ClientResponse:
        headers = {**self.auth, **kwargs.pop("headers", {})}
        return await self.client.request(method, path, headers=headers, **kwargs)

    async def get(self, path: str, **kwargs: Any) -> aiohttp.ClientResponse:
        return await self.request("GET", path, **kwargs)

    async def post(self, path: str, **kwargs: Any) -> aiohttp.ClientResponse:
        return await self.request("POST", path, **kwargs)

    async def delete(self, path: str, **kwargs: Any) -> aiohttp.ClientResponse:
        return await self.request("DELETE", path, **kwargs)

    async def close(self) -> None:
        """Stop the server (runs the app's cleanup: agent stop, final save)."""
        for tab in self.tabs:
            if not tab.ws.closed:
                await tab.ws.close()
        await self.client.close()


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
        token = token or uuid.uuid4().hex
        config = ServerConfig(mode=mode, workspace=workspace, token=token, session=session,
                              action_timeout=action_timeout, watch=watch, backend=spec,
                              save_interval=save_interval)
        app = create_app(config)
        client = await aiohttp_client(app)
        # The Host/Origin check reads the port lazily: give it the real one.
        config.port = client.port
        return Server(client=client, app=app, config=config, session=session,
                      workspace=workspace, token=token,
                      backend=holder[0] if holder else None)

    return make


@pytest.fixture
async def server(make_server: MakeServer) -> Server:
    """A slide-mode server with the fake backend and no file watcher."""
    return await make_server()
