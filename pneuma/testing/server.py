"""``serve``: a real Pneuma server for a test, on 127.0.0.1 with a token.

The server is the one ``pneuma run`` starts: ``create_app`` with the mode's
routes, the security middleware (token, Host and Origin), the session, the
file watcher and an agent backend (a ``FakeAgent`` unless the test names
another). Requests go over a real socket with aiohttp's client.

    async with serve("kanban", tmp_path / "ws") as server:
        response = await server.get("/api/kanban/board")
        assert response.status == 200
        tab = await server.tab()
        await tab.say("add a card")
        assert await server.agent.next_user_message() == "add a card"
"""

from __future__ import annotations

import dataclasses
import secrets
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from pneuma.core.backend import AgentEventSink, BackendOptions, BackendSpec
from pneuma.host.modes import LoadedMode
from pneuma.server.app import create_app
from pneuma.server.config import ServerConfig
from pneuma.server.handle import PNEUMA, Pneuma
from pneuma.server.session import Session
from pneuma.testing.agent import fake_agent_spec
from pneuma.testing.browser import BrowserTab, join_session
from pneuma.testing.workspace import ModeLike, load_mode, make_workspace, stored_params


class SessionClient(ABC):
    """What a test holds of a served session: requests that carry the
    session token, and browser tabs that join the session as the page does.

    ``RunningServer`` is one. A harness around another HTTP client is
    another: it gives ``token``, ``tabs``, the server's ``pneuma`` and how it
    reaches the server (``_send``, ``_ws_connect``)."""

    token: str
    tabs: list[Any]
    pneuma: Pneuma

    @property
    def mode(self) -> LoadedMode:
        return self.pneuma.mode

    @property
    def workspace(self) -> Path:
        return self.pneuma.workspace

    @property
    def session_id(self) -> str:
        """The served session's id (the ``<id>`` of ``/ws/browser/<id>``)."""
        return self.pneuma.session_id

    @abstractmethod
    async def _send(self, method: str, path: str, headers: dict[str, str],
                    **kwargs: Any) -> aiohttp.ClientResponse:
        """``method path`` with exactly these headers."""

    @abstractmethod
    async def _ws_connect(self, path: str) -> aiohttp.ClientWebSocketResponse:
        """A socket to ``path``, carrying the token."""

    @property
    def auth(self) -> dict[str, str]:
        """The header that carries the token."""
        return {"Authorization": f"Bearer {self.token}"}

    def ws_path(self, last_seq: int | None = None) -> str:
        """The session's browser socket, resuming from ``last_seq`` when given."""
        path = f"/ws/browser/{self.session_id}"
        return path if last_seq is None else f"{path}?last_seq={last_seq}"

    async def request(self, method: str, path: str, *, token: bool = True,
                      **kwargs: Any) -> aiohttp.ClientResponse:
        """``method path`` on this server (``path`` starts with ``/``), with
        the token unless ``token=False``; other arguments as aiohttp's."""
        headers = {**(self.auth if token else {}), **kwargs.pop("headers", {})}
        return await self._send(method, path, headers, **kwargs)

    async def get(self, path: str, **kwargs: Any) -> aiohttp.ClientResponse:
        return await self.request("GET", path, **kwargs)

    async def post(self, path: str, **kwargs: Any) -> aiohttp.ClientResponse:
        return await self.request("POST", path, **kwargs)

    async def put(self, path: str, **kwargs: Any) -> aiohttp.ClientResponse:
        return await self.request("PUT", path, **kwargs)

    async def delete(self, path: str, **kwargs: Any) -> aiohttp.ClientResponse:
        return await self.request("DELETE", path, **kwargs)

    async def tab(self, *, subscribe: bool = True, last_seq: int | None = None) -> BrowserTab:
        """Open a browser tab on the session's socket, as the page does.

        By default it waits for ``session_init`` and subscribes from 0,
        consuming ``message_history`` and the status snapshot, so the next
        message it receives is whatever happens next. ``last_seq`` resumes
        from that seq instead (nothing is consumed after ``session_init``);
        ``subscribe=False`` stops after ``session_init``.
        """
        tab = BrowserTab(await self._ws_connect(self.ws_path(last_seq)))
        self.tabs.append(tab)
        await join_session(tab, subscribe=subscribe and last_seq is None)
        return tab


@dataclass
class RunningServer(SessionClient):
    """One served session. ``session`` is a plain aiohttp client (it sends
    no token unless told: good for testing refusals); ``get``/``post``/...
    and ``tab`` carry the token as the page does."""

    url: str
    """``http://127.0.0.1:<port>``: the base of every route (``PNEUMA_API``)."""
    token: str
    """The session token (``PNEUMA_TOKEN``)."""
    session: aiohttp.ClientSession
    pneuma: Pneuma
    """The server's ``pneuma.api.Pneuma``: what the mode's routes are given."""
    agent: Any
    """The agent backend the server built (a ``FakeAgent`` by default), or None."""
    app: web.Application
    tabs: list[BrowserTab] = field(default_factory=list)

    @property
    def page_url(self) -> str:
        """The URL ``pneuma run`` prints on its ready line (open it in a browser)."""
        return f"{self.url}/?session={self.session_id}&token={self.token}"

    async def _send(self, method: str, path: str, headers: dict[str, str],
                    **kwargs: Any) -> aiohttp.ClientResponse:
        return await self.session.request(method, self.url + path, headers=headers, **kwargs)

    async def _ws_connect(self, path: str) -> aiohttp.ClientWebSocketResponse:
        # The Origin a page served by this server sends.
        return await self.session.ws_connect(self.url + path,
                                             headers={**self.auth, "Origin": self.url})


def _backend_spec(backend: BackendSpec | str | None, created: list[Any]) -> BackendSpec:
    """The spec to serve with, its factory wrapped to remember what it built."""
    if backend is None:
        return fake_agent_spec(created)
    if isinstance(backend, str):
        from pneuma.startup.runner import find_backend

        backend = find_backend(backend)
    build = backend.factory

    def factory(options: BackendOptions, sink: AgentEventSink) -> Any:
        agent = build(options, sink)
        created.append(agent)
        return agent

    return dataclasses.replace(backend, factory=factory)


@asynccontextmanager
async def serve(
    mode: ModeLike,
    workspace: Path | str,
    *,
    backend: BackendSpec | str | None = None,
    params: Mapping[str, Any] | None = None,
    watch: bool = True,
    action_timeout: float = 10.0,
    token: str | None = None,
) -> AsyncIterator[RunningServer]:
    """Serve ``mode`` over ``workspace`` (seeded first, as ``pneuma init``
    does, with ``params``) until the block ends.

    ``backend``: None for a ``FakeAgent`` (``server.agent``), the name of an
    installed backend (``"none"`` serves without an agent), or a
    ``BackendSpec`` (the backend under test). ``watch``: run the host's file
    watcher, so that writes reach the tabs as ``content_update``.
    ``action_timeout``: seconds a viewer action waits for a tab.
    """
    loaded = load_mode(mode)
    root = make_workspace(loaded, workspace, params)
    created: list[Any] = []
    spec = _backend_spec(backend, created)
    session = Session(str(uuid.uuid4()), mode=loaded.name, workspace=root,
                      backend_name=spec.name)
    config = ServerConfig(mode=loaded, workspace=root, token=token or secrets.token_urlsafe(24),
                          session=session, params=stored_params(loaded, root),
                          action_timeout=action_timeout, watch=watch, backend=spec)
    app = create_app(config)
    runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        # The Host and Origin checks compare against the real port.
        config.port = runner.addresses[0][1]
        # Work the server began in the background at start (the checkpoints'
        # standing baseline) is done before the test looks at the workspace.
        await session.settle()
        client = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())
        server = RunningServer(url=config.api_url, token=config.token, session=client,
                               pneuma=app[PNEUMA], agent=created[0] if created else None,
                               app=app)
        try:
            yield server
        finally:
            for tab in server.tabs:
                if not tab.ws.closed:
                    await tab.ws.close()
            await client.close()
    finally:
        await runner.cleanup()
