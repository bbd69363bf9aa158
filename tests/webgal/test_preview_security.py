"""The preview server preview_scene starts without `pneuma run` is the
Pneuma server: every route it serves (the host's and the webgal mode's)
needs its token, refuses a foreign Host or Origin, and tells nothing about
the workspace or the process to a request without the token.

The server runs as preview_scene runs it (a background process, found
again through its state file); its routes are enumerated from the app the
same code builds (``headless_app``), so a route added later is covered too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from pneuma.api import HeadlessServer, ensure_headless_server, running_headless_server
from pneuma.host.registry import get_mode
from pneuma.server.headless import headless_app
from pneuma.tools.runtime import call_tool
from pneuma_webgal import engine

FOREIGN_HOST = "evil.example"
FOREIGN_ORIGIN = "http://evil.example"


@pytest.fixture
def preview_server(seeded: Path, monkeypatch: pytest.MonkeyPatch) -> HeadlessServer:
    monkeypatch.delenv("PNEUMA_API", raising=False)
    if engine.engine_dir() is not None:
        result = call_tool("webgal", seeded, "preview_scene", {})
        assert "error" not in result, result
        server = running_headless_server("webgal", seeded)
        assert server is not None
        # The URL it hands out is the engine's own site with that site's
        # token (tests/webgal/test_engine_origin.py), never the server's token.
        assert "/webgal/?token=" in result["url"] and server.token not in result["url"]
        assert not result["url"].startswith(server.url + "/")
        return server
    # Without the engine preview_scene stops before it starts a server; the
    # server it would start is this one.
    return ensure_headless_server("webgal", seeded)


def route_patterns(workspace: Path) -> list[tuple[str, str]]:
    """(method, pattern) of every route of the app a headless webgal server serves."""
    app = headless_app(get_mode("webgal"), workspace, token="unused", port=1)
    routes = set()
    for resource in app.router.resources():
        for route in resource:
            methods = ("GET", "POST") if route.method == "*" else (route.method,)
            routes.update((method, resource.canonical) for method in methods)
    return sorted(routes)


def concrete(pattern: str, session_id: str) -> str:
    def fill(match: re.Match[str]) -> str:
        known = {"sid": session_id, "mode": "webgal", "name": "read_file"}
        return known.get(match.group(1), "probe")

    return re.sub(r"\{([^}]+)\}", fill, pattern)


async def routes_of(server: HeadlessServer, client: aiohttp.ClientSession) -> list[tuple[str, str]]:
    async with client.get(server.url + "/api/session", headers=bearer(server)) as response:
        session_id = (await response.json())["session_id"]
    return [(method, concrete(pattern, session_id))
            for method, pattern in route_patterns(server.workspace)]


def bearer(server: HeadlessServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}"}


def leaks(server: HeadlessServer, text: str) -> list[str]:
    secrets = {"workspace": str(server.workspace), "pid": f"{server.pid}",
               "token": server.token}
    found = []
    for what, value in secrets.items():
        pattern = rf"(?<!\d){re.escape(value)}(?!\d)" if what == "pid" else re.escape(value)
        if re.search(pattern, text):
            found.append(what)
    return found


def test_the_routes_include_the_webgal_preview(seeded: Path) -> None:
    routes = route_patterns(seeded)
    for expected in [("GET", "/webgal/"), ("GET", "/webgal/_pneuma/bridge.js"),
                     ("GET", "/api/webgalsync"),
                     ("POST", "/api/webgal/jump"), ("GET", "/api/webgal/status"),
                     ("GET", "/api/config"), ("GET", "/ws/browser/{sid}")]:
        assert expected in routes, expected
    # The standalone server's health route (workspace path and pid for anyone) is gone.
    assert not any("health" in pattern for _, pattern in routes)
    # The engine and the game's files are served on the engine's own site only.
    assert not any(pattern.startswith("/webgal/game") for _, pattern in routes)


async def test_every_route_refuses_a_request_without_the_token(preview_server) -> None:
    server = preview_server
    async with aiohttp.ClientSession() as client:
        routes = await routes_of(server, client)
        assert len(routes) > 20
        for method, path in routes:
            async with client.request(method, server.url + path) as response:
                text = await response.text()
                assert response.status == 401, (method, path, response.status)
                if method != "HEAD":
                    assert json.loads(text)["error"]["code"] == "E_UNAUTHORIZED", (method, path)
                assert not leaks(server, text + str(response.headers)), (method, path)
                assert "Set-Cookie" not in response.headers, (method, path)


async def refused_on_every_route(server: Any, headers: dict[str, str], reason: str) -> None:
    """With the token and ``headers`` added, every route answers 403
    E_FORBIDDEN for ``reason`` and leaks nothing."""
    async with aiohttp.ClientSession() as client:
        for method, path in await routes_of(server, client):
            async with client.request(method, server.url + path,
                                      headers={**bearer(server), **headers}) as response:
                text = await response.text()
                assert response.status == 403, (method, path, response.status)
                if method != "HEAD":
                    error = json.loads(text)["error"]
                    assert error["code"] == "E_FORBIDDEN" and error["details"]["reason"] == reason
                assert not leaks(server, text), (method, path)


async def test_every_route_refuses_a_foreign_host_even_with_the_token(preview_server) -> None:
    host = f"{FOREIGN_HOST}:{preview_server.port}"
    await refused_on_every_route(preview_server, {"Host": host}, "host")


async def test_every_route_refuses_a_foreign_origin_even_with_the_token(preview_server) -> None:
    await refused_on_every_route(preview_server, {"Origin": FOREIGN_ORIGIN}, "origin")


async def test_every_route_is_routed_with_the_token(preview_server) -> None:
    """The refusals above are the gate's, in front of real routes: with the
    token the same paths reach a handler (whatever it then answers)."""
    server = preview_server
    async with aiohttp.ClientSession() as client:
        for method, path in await routes_of(server, client):
            async with client.request(method, server.url + path,
                                      headers=bearer(server)) as response:
                assert response.status not in (401, 403, 405), (method, path, response.status)
                if response.status == 404 and method != "HEAD":
                    details = (await response.json())["error"].get("details", {})
                    assert details.get("reason") != "no_route", (method, path)


async def test_the_sync_socket_needs_the_token_and_this_origin(preview_server) -> None:
    server = preview_server
    url = server.url.replace("http://", "ws://") + "/api/webgalsync"
    own_origin = server.url
    async with aiohttp.ClientSession() as client:
        for headers, status in (
            ({"Origin": own_origin}, 401),
            ({**bearer(server), "Origin": FOREIGN_ORIGIN}, 403),
            ({**bearer(server), "Origin": own_origin, "Host": f"{FOREIGN_HOST}:{server.port}"}, 403),
        ):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await client.ws_connect(url, headers=headers)
            assert refused.value.status == status, headers
        # With the token, from a page of this server, the engine's socket opens.
        async with client.ws_connect(url, headers={**bearer(server), "Origin": own_origin}) as ws:
            assert not ws.closed


async def test_the_preview_url_authorises_a_browser_by_cookie(preview_server) -> None:
    """What a browser does with the URL preview_scene hands out: the first
    load trades ``?token=`` for the cookie; the engine's later requests and
    its socket carry only the cookie."""
    server = preview_server
    jar = aiohttp.CookieJar(unsafe=True)  # 127.0.0.1 is an IP address
    async with aiohttp.ClientSession(cookie_jar=jar) as browser:
        async with browser.get(server.page_url("/webgal/", "scene=start.txt&line=1")) as page:
            assert page.status in (200, 503)  # 503: the engine is not set up here
        async with browser.get(server.url + "/api/webgal/status") as status:
            assert status.status == 200
        url = server.url.replace("http://", "ws://") + "/api/webgalsync"
        async with browser.ws_connect(url, headers={"Origin": server.url}) as ws:
            assert not ws.closed
    async with aiohttp.ClientSession() as stranger:
        async with stranger.get(server.url + "/api/webgal/status") as status:
            assert status.status == 401
