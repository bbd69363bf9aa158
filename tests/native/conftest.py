"""Fixtures for the native backend: a real server running ``--backend
native`` against the fake Messages API, local web pages on 127.0.0.1, and
scripted stand-ins for browser clients."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from pneuma.host.plugins import LOAD_PLUGINS_ENV
from pneuma.host.registry import get_mode, reset_plugin_manager
from pneuma.startup.runner import find_backend
from pneuma.workspace.params import init_workspace
from pneuma.workspace.skill import install_skill
from tests.fakes.anthropic_api import FakeAnthropicAPI
from tests.server.harness import AppServer, server_config, start_app_server
from tests.server.ws_client import WSClient

PAGES = Path(__file__).parent / "pages"


@pytest.fixture
async def fake_api():
    async with FakeAnthropicAPI() as api:
        yield api


@pytest.fixture
async def pages():
    """The folder tests/native/pages served on 127.0.0.1; yields its base URL."""
    app = web.Application()
    app.router.add_static("/", PAGES)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


@dataclass(kw_only=True)
class NativeServer(AppServer):
    """A session served with the native backend (``backend``); ``get_json``
    and ``post_json`` answer (status, body)."""

    @property
    def backend(self) -> Any:
        return self.session.backend

    @property
    def base_url(self) -> str:
        return self.origin

    async def get_json(self, path: str, **kwargs: Any) -> Any:
        async with await self.get(path, **kwargs) as response:
            return response.status, await response.json()

    async def post_json(self, path: str, body: Any) -> Any:
        async with await self.post(path, json=body) as response:
            return response.status, await response.json()

    async def say(self, tab: WSClient, text: str) -> None:
        await tab.say(text, client_msg_id=uuid.uuid4().hex)


MakeNative = Callable[..., Awaitable[NativeServer]]


@pytest.fixture
def with_webgal(pm, monkeypatch):
    """The plugin manager loads webgal too (``pm`` alone loads only slide)."""
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "slide,webgal")
    reset_plugin_manager()
    yield
    reset_plugin_manager()


@pytest.fixture
def make_native(aiohttp_client, pm, tmp_path, fake_api) -> MakeNative:
    """``await make_native(workspace=None, session_id=None, env={...}, key=True,
    mode="slide", backend="native")``; another mode needs the ``with_webgal``
    fixture (or the like); another backend serves the same session without
    the native runtime."""

    async def make(*, workspace: Path | None = None, session_id: str | None = None,
                   env: dict[str, str] | None = None, key: bool = True,
                   mode: str = "slide", backend: str = "native") -> NativeServer:
        mode = get_mode(mode)
        if workspace is None:
            workspace = tmp_path / f"ws-{uuid.uuid4().hex[:6]}"
        if not workspace.exists():
            workspace.mkdir(parents=True)
            init_workspace(mode, workspace, {})
            install_skill(mode, workspace, {})
        workspace = workspace.resolve()
        agent_env = {"ANTHROPIC_BASE_URL": fake_api.base_url,
                     "PNEUMA_NATIVE_RETRY_BASE_DELAY": "0.01",
                     "PNEUMA_NATIVE_MODEL": "claude-fake-1"}
        if key:
            agent_env["ANTHROPIC_API_KEY"] = "test-key"
        agent_env.update(env or {})
        config = server_config(mode, workspace, backend=find_backend(backend),
                               session_id=session_id, agent_env=agent_env)
        return await start_app_server(aiohttp_client, config, NativeServer)

    return make


class ScriptedClient:
    """A browser client that answers actions as a test tells it:
    ``behaviour(message) -> list of replies`` (``"drop"`` closes the socket)."""

    def __init__(self, server: NativeServer, client_id: str = "scripted-1",
                 behaviour: Callable[[dict[str, Any]], Any] | None = None) -> None:
        self.server = server
        self.client_id = client_id
        self.behaviour = behaviour or (lambda message: [])
        self.actions: list[dict[str, Any]] = []
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self._task: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        self.ws = await self.server.client.ws_connect(
            f"/ws/extension/{self.server.session.id}", headers=self.server.auth)
        await self.ws.send_json({"type": "hello", "clientId": self.client_id,
                                 "name": "Scripted", "metadata": {"kind": "test"}})
        welcome = await self.ws.receive_json(timeout=3)
        assert welcome == {"type": "welcome", "clientId": self.client_id,
                           "sessionId": self.server.session.id}
        await self.ws.send_json({"type": "full_state_sync", "windows": [{"id": 1}],
                                 "tabs": [{"id": 7, "url": "about:blank", "title": ""}],
                                 "groups": [], "activeTabId": 7})
        self._task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self) -> None:
        assert self.ws is not None
        async for frame in self.ws:
            if frame.type != aiohttp.WSMsgType.TEXT:
                break
            message = json.loads(frame.data)
            if message.get("type") != "browser_action":
                continue
            self.actions.append(message)
            for reply in self.behaviour(message):
                if reply == "drop":
                    await self.ws.close()
                    return
                await self.ws.send_json(reply)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._task is not None:
            self._task.cancel()


def ack(message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "ack", "id": message["id"]}


def ok(message: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {"type": "browser_action_result", "id": message["id"], "ok": True, "result": result}
