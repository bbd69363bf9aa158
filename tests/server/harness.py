"""A served session for the host's own tests, over pytest-aiohttp's client.

``pneuma.testing.serve`` is what a plugin's tests get; the host's tests also
need what it does not offer (a session built beforehand, a small replay
buffer, a given backend spec, an unseeded workspace), so they build the
``ServerConfig`` themselves and serve it here:

    config = server_config(mode, workspace, backend=spec)
    server = await start_app_server(aiohttp_client, config)
    response = await server.get("/api/session")     # with the token
    tab = await server.tab()                        # subscribed, caught up

Used by tests/server, tests/native, tests/tools and tests/test_ws_cli.py;
a harness with more (the fake agent, a chat helper) subclasses ``AppServer``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestClient

from pneuma.core.backend import BackendSpec
from pneuma.host.modes import LoadedMode
from pneuma.server.app import ServerConfig, create_app
from pneuma.server.handle import PNEUMA, Pneuma
from pneuma.server.session import Session
from pneuma.testing.server import SessionClient


@dataclass(kw_only=True)
class AppServer(SessionClient):
    """A served session: ``client`` (pytest-aiohttp's, paths without the
    base URL), the ``app``, its ``config`` and ``session``; ``get``/``post``/
    ``tab`` carry the token."""

    client: TestClient
    app: web.Application
    config: ServerConfig
    session: Session
    tabs: list[Any] = field(default_factory=list)

    @property
    def pneuma(self) -> Pneuma:  # type: ignore[override]
        return self.app[PNEUMA]

    @property
    def token(self) -> str:  # type: ignore[override]
        return self.config.token

    @property
    def origin(self) -> str:
        """The Origin of a page this server served: ``http://127.0.0.1:<port>``."""
        return self.config.api_url

    async def _send(self, method: str, path: str, headers: dict[str, str],
                    **kwargs: Any) -> aiohttp.ClientResponse:
        return await self.client.request(method, path, headers=headers, **kwargs)

    async def _ws_connect(self, path: str) -> aiohttp.ClientWebSocketResponse:
        return await self.client.ws_connect(path, headers=self.auth)

    async def close(self) -> None:
        """Stop the server (runs the app's cleanup: agent stop, final save)."""
        for tab in self.tabs:
            if not tab.ws.closed:
                await tab.ws.close()
        await self.client.close()


def seeded_slide_workspace(tmp_path: Path) -> tuple[LoadedMode, Path]:
    """The slide mode and a fresh workspace of its own under ``tmp_path``,
    seeded as ``pneuma init`` does (one per call, so a test may make several)."""
    from pneuma.host.registry import get_mode
    from pneuma.workspace.params import init_workspace

    mode = get_mode("slide")
    workspace = (tmp_path / f"ws-{uuid.uuid4().hex[:6]}").resolve()
    workspace.mkdir()
    init_workspace(mode, workspace, {})
    return mode, workspace


def server_config(mode: LoadedMode, workspace: Path, *, backend: BackendSpec | None = None,
                  session: Session | None = None, session_id: str | None = None,
                  token: str | None = None, **options: Any) -> ServerConfig:
    """The config ``pneuma run`` would build, with a fresh token and a fresh
    session unless given; no file watcher and no periodic save unless
    ``options`` (any other ``ServerConfig`` field) say otherwise."""
    if session is None:
        session = Session(session_id or str(uuid.uuid4()), mode=mode.name, workspace=workspace,
                          backend_name=backend.name if backend is not None else "none")
    options = {"watch": False, "save_interval": 3600, **options}
    return ServerConfig(mode=mode, workspace=workspace, token=token or uuid.uuid4().hex,
                        session=session, backend=backend, **options)


ServerT = TypeVar("ServerT", bound=AppServer)


async def start_app_server(aiohttp_client: Callable[..., Awaitable[TestClient]],
                           config: ServerConfig, cls: type[ServerT] = AppServer,  # type: ignore[assignment]
                           **fields: Any) -> ServerT:
    """Serve ``config`` with pytest-aiohttp's client (which starts the app:
    the agent, the watcher) and wrap it in ``cls`` (``fields`` are its own)."""
    app = create_app(config)
    client = await aiohttp_client(app)
    # The Host and Origin checks compare against the port; give them the real one.
    config.port = client.port
    # What the app began in the background at start (the checkpoints'
    # standing baseline storing the workspace) is finished, so that a test
    # comparing the workspace before and after sees only its own doing.
    await config.session.settle()
    return cls(client=client, app=app, config=config, session=config.session, **fields)
