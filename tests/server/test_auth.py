"""Who may talk to the server: every route and socket needs the session
token; a foreign Host (DNS rebinding) or Origin (a cross-site page) is
refused even with the token."""

from __future__ import annotations

import re

import aiohttp
import pytest
from aiohttp import web

from pneuma.server.security import cookie_name


def _concrete_path(resource: web.AbstractResource, session_id: str) -> str:
    """A real URL for a route pattern: {sid} is the session, other
    variables get a harmless value."""
    canonical = resource.canonical

    def fill(match: re.Match[str]) -> str:
        name = match.group(1).split(":")[0]
        return {"sid": session_id, "mode": "slide"}.get(name, "manifest.json")

    return re.sub(r"\{([^}]+)\}", fill, canonical)


def all_routes(server) -> list[tuple[str, str]]:
    """(method, path) of every route the app has, plugin routes included."""
    routes = []
    for resource in server.app.router.resources():
        path = _concrete_path(resource, server.session.id)
        for route in resource:
            if route.method == "*":
                routes.extend((m, path) for m in ("GET", "POST"))
            else:
                routes.append((route.method, path))
    return sorted(set(routes))


def _cookie(server) -> str:
    return cookie_name(f"127.0.0.1:{server.config.port}")


def test_each_server_port_has_its_own_cookie():
    """Browsers share cookies across the ports of one host: two Pneuma
    servers on 127.0.0.1 must not overwrite each other's token cookie."""
    assert cookie_name("127.0.0.1:17007") == "pneuma_token_17007"
    assert cookie_name("127.0.0.1:17007") != cookie_name("127.0.0.1:17008")
    assert cookie_name("[::1]:5000") == "pneuma_token_5000"
    assert cookie_name("localhost") == "pneuma_token_80"


def fresh_jar(server) -> None:
    """Forget any cookie the test client picked up."""
    server.client.session.cookie_jar.clear()


async def forbidden_on_every_route(server, headers: dict[str, str]) -> list[dict]:
    """Sends every route the token plus ``headers``; each must answer 403
    with E_FORBIDDEN. Returns the error details of every answer with a body
    (all but HEAD)."""
    details = []
    for method, path in all_routes(server):
        response = await server.client.request(method, path,
                                               headers={**server.auth, **headers})
        assert response.status == 403, (method, path, headers)
        if method != "HEAD":
            error = (await response.json())["error"]
            assert error["code"] == "E_FORBIDDEN"
            details.append(error["details"])
    return details


async def test_the_route_list_covers_the_documented_api(server):
    routes = set(all_routes(server))
    for expected in [("GET", "/"), ("GET", "/api/session"), ("GET", "/api/config"),
                     ("GET", "/api/files"), ("GET", "/api/files/read"),
                     ("GET", "/api/files/tree"), ("POST", "/api/files"),
                     ("DELETE", "/api/files"), ("GET", "/content/manifest.json"),
                     ("POST", "/api/viewer/action"), ("POST", "/api/workspace/scaffold"),
                     ("GET", f"/ws/browser/{server.session.id}"),
                     ("GET", f"/ws/cli/{server.session.id}")]:
        assert expected in routes


async def test_every_route_without_a_token_is_401_json(server):
    fresh_jar(server)
    for method, path in all_routes(server):
        response = await server.client.request(method, path)
        assert response.status == 401, (method, path, response.status)
        if method != "HEAD":
            body = await response.json()
            assert body["error"]["code"] == "E_UNAUTHORIZED", (method, path)
            assert body["error"]["details"] == {"reason": "missing_token"}
            assert "token" in body["error"]["message"]
            assert "pneuma run" in body["error"]["hint"]


async def test_every_route_with_a_wrong_token_is_401(server):
    fresh_jar(server)
    for method, path in all_routes(server):
        for kwargs in ({"headers": {"Authorization": "Bearer nope"}},
                       {"params": {"token": "nope"}}):
            response = await server.client.request(method, path, **kwargs)
            assert response.status == 401, (method, path, kwargs)
            if method != "HEAD":
                error = (await response.json())["error"]
                assert error["code"] == "E_UNAUTHORIZED"
                assert error["details"] == {"reason": "wrong_token"}
    # A cookie with the wrong value is no better.
    server.client.session.cookie_jar.update_cookies({_cookie(server): "nope"})
    response = await server.client.get("/api/session")
    assert response.status == 401


async def test_every_route_with_the_token_reaches_its_handler(server, monkeypatch):
    """The gate lets the token through to every handler. The handlers are
    stubbed: some plugin routes do real work (rendering an export) that is
    not this test's business."""
    reached: list[tuple[str, str]] = []

    def stub_for(route):
        async def stub(request: web.Request) -> web.Response:
            reached.append((request.method, request.path))
            return web.Response(status=204)

        return stub

    for resource in server.app.router.resources():
        for route in resource:
            monkeypatch.setattr(route, "_handler", stub_for(route))
    fresh_jar(server)
    routes = all_routes(server)
    for method, path in routes:
        response = await server.client.request(method, path, headers=server.auth)
        assert response.status == 204, (method, path, response.status)
    assert sorted(reached) == routes


@pytest.mark.parametrize("how", ["bearer", "query", "cookie"])
async def test_each_way_of_presenting_the_token_works(server, how):
    fresh_jar(server)
    kwargs: dict = {}
    if how == "bearer":
        kwargs["headers"] = {"Authorization": f"Bearer {server.token}"}
    elif how == "query":
        kwargs["params"] = {"token": server.token}
    else:
        server.client.session.cookie_jar.update_cookies({_cookie(server): server.token})
    response = await server.client.get("/api/session", **kwargs)
    assert response.status == 200
    assert (await response.json())["session_id"] == server.session.id


async def test_first_page_load_exchanges_the_query_token_for_a_strict_httponly_cookie(server):
    fresh_jar(server)
    response = await server.client.get("/", params={"session": server.session.id,
                                                    "token": server.token})
    assert response.status == 200
    cookies = [v for k, v in response.headers.items() if k.lower() == "set-cookie"]
    assert len(cookies) == 1, cookies
    cookie = cookies[0]
    assert cookie.startswith(f"pneuma_token_{server.config.port}={server.token}")
    assert "HttpOnly" in cookie
    assert re.search(r"SameSite=Strict", cookie, re.I)
    assert "Path=/" in cookie
    # Pages the server serves later are authorised by the cookie alone.
    response = await server.client.get("/content/manifest.json")
    assert response.status == 200


async def test_bearer_requests_do_not_get_a_cookie(server):
    fresh_jar(server)
    response = await server.get("/")
    assert response.status == 200
    assert "Set-Cookie" not in response.headers


async def test_both_sockets_refuse_a_missing_or_wrong_token(server):
    fresh_jar(server)
    for path in (f"/ws/browser/{server.session.id}", f"/ws/cli/{server.session.id}"):
        for headers in ({}, {"Authorization": "Bearer nope"}):
            with pytest.raises(aiohttp.WSServerHandshakeError) as info:
                await server.client.ws_connect(path, headers=headers)
            assert info.value.status == 401, (path, headers)


async def test_browser_socket_accepts_the_token_in_the_url(server):
    fresh_jar(server)
    ws = await server.client.ws_connect(f"/ws/browser/{server.session.id}?token={server.token}")
    frame = await ws.receive(timeout=3)
    assert '"session_init"' in frame.data
    await ws.close()


async def test_browser_socket_for_another_session_is_404(server):
    response = await server.get("/ws/browser/not-this-session")
    assert response.status == 404


@pytest.mark.parametrize("host", ["evil.example:80", "evil.example", "127.0.0.1:1",
                                  "attacker.test:{port}"])
async def test_a_foreign_host_is_403_even_with_the_token(server, host):
    host = host.format(port=server.config.port)
    for details in await forbidden_on_every_route(server, {"Host": host}):
        assert details["reason"] == "host"


async def test_localhost_is_an_accepted_host(server):
    response = await server.get("/api/session",
                                headers={"Host": f"localhost:{server.config.port}"})
    assert response.status == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "null",
                                    "https://127.0.0.1:{port}", "http://127.0.0.1:1",
                                    "http://127.0.0.1:{port}.evil.example"])
async def test_a_foreign_origin_is_403_on_http_and_websocket(server, origin):
    origin = origin.format(port=server.config.port)
    for details in await forbidden_on_every_route(server, {"Origin": origin}):
        assert details == {"reason": "origin", "origin": origin}
    for path in (f"/ws/browser/{server.session.id}", f"/ws/cli/{server.session.id}"):
        with pytest.raises(aiohttp.WSServerHandshakeError) as info:
            await server.client.ws_connect(path, headers={**server.auth, "Origin": origin})
        assert info.value.status == 403


async def test_a_same_origin_request_is_allowed(server):
    for origin in (server.origin, f"http://localhost:{server.config.port}"):
        response = await server.get("/api/session", headers={"Origin": origin})
        assert response.status == 200
        ws = await server.client.ws_connect(server.ws_path(),
                                            headers={**server.auth, "Origin": origin})
        frame = await ws.receive(timeout=3)
        assert '"session_init"' in frame.data
        await ws.close()
