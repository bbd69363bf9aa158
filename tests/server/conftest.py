"""Fixtures for the server's tests: a real aiohttp app around a Session,
a fake agent backend, and a browser WebSocket client that speaks the
protocol the way the page does.

``make_server(...)`` builds ``ServerConfig`` + ``create_app`` for the slide
mode (or any mode given) in a seeded temporary workspace and serves it with
pytest-aiohttp's ``aiohttp_client``. The returned ``Server`` knows its token
and session and opens browser tabs: ``tab = await server.tab()``.

The fake backend records every call and emits messages through the session
exactly as a real backend does (``backend.emit({...})``), so no CLI is needed.
The tab (``WSClient``) lives in ws_client.py, for other tests to import.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from pneuma.agents.base import AgentEventSink, BackendOptions, BackendSpec
from pneuma.host.modes import LoadedMode
from pneuma.host.registry import get_mode
from pneuma.server.app import ServerConfig, create_app
from pneuma.server.session import REPLAY_BUFFER_SIZE, Session
from pneuma.workspace.params import init_workspace
from tests.server.ws_client import TIMEOUT, WSClient


class FakeBackend:
    """An ``AgentBackend`` that records calls; tests make it speak with ``emit``."""

    name = "fake"

    def __init__(self, options: BackendOptions, sink: AgentEventSink):
        self.options = options
        self.sink = sink
        self.calls: list[tuple[Any, ...]] = []
        self.user_messages: list[tuple[str, list[dict[str, str]]]] = []
        self.started = False
        self.stopped = False
        self._changed = asyncio.Event()

    def _record(self, *call: Any) -> None:
        self.calls.append(call)
        self._changed.set()

    async def start(self) -> None:
        self.started = True
        self._record("start")

    async def send_user_message(self, text: str, images: list[dict[str, str]]) -> None:
        self.user_messages.append((text, images))
        self._record("send_user_message", text, images)

    async def answer_permission(self, request_id: str, behavior: str,
                                updated_input: dict[str, Any] | None = None,
                                message: str | None = None) -> None:
        self._record("answer_permission", request_id, behavior, updated_input, message)

    async def interrupt(self) -> None:
        self._record("interrupt")

    async def set_model(self, model: str) -> None:
        self._record("set_model", model)

    async def stop(self) -> None:
        self.stopped = True
        self._record("stop")

    def emit(self, message: dict[str, Any]) -> None:
        self.sink.emit(message)

    def calls_named(self, name: str) -> list[tuple[Any, ...]]:
        return [c for c in self.calls if c[0] == name]

    async def wait_call(self, name: str, count: int = 1, timeout: float = TIMEOUT) -> list[tuple[Any, ...]]:
        """Wait until ``name`` was called at least ``count`` times."""
        async def until() -> None:
            while len(self.calls_named(name)) < count:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(until(), timeout)
        return self.calls_named(name)


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


def fake_backend_spec(holder: list[FakeBackend]) -> BackendSpec:
    def factory(options: BackendOptions, sink: AgentEventSink) -> FakeBackend:
        backend = FakeBackend(options, sink)
        holder.append(backend)
        return backend

    return BackendSpec(name="fake", description="records calls", factory=factory)


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
        spec = fake_backend_spec(holder) if backend == "fake" else no_backend_spec()
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
