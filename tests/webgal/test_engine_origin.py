"""The WebGAL engine's own site (pneuma_webgal/engine_site.py: the shared
``pneuma.api.ContentSite``) and the Pneuma server keep each other at arm's
length.

The engine page and the game's files are served on another port (another
origin) with a token of their own. The Pneuma server refuses that token and
any request from that origin, even one carrying the server's own token (the
browser sends the user's cookie with a same-site request from the engine's
page); the engine's site refuses the server's token, anything but a read,
and foreign hosts and origins. Served in-process by ``pneuma.testing.serve``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from pneuma.testing import serve


async def engine_of(server: Any) -> tuple[str, str]:
    """(origin, token) of the engine's site, as the server names them."""
    body = await (await server.get("/api/webgal/status")).json()
    origin, url = body["engine"]["origin"], body["url"]
    return origin, url.split("?token=", 1)[1]


@pytest.fixture
async def webgal(tmp_path: Path):
    async with serve("webgal", tmp_path / "ws", backend="none", watch=False,
                     params={"language": "en"}) as server:
        yield server


async def test_the_engine_runs_on_its_own_origin_with_its_own_token(webgal) -> None:
    origin, token = await engine_of(webgal)
    assert origin.startswith("http://127.0.0.1:") and origin != webgal.url
    assert token and token != webgal.token
    assert webgal.token not in await (await webgal.get("/api/webgal/status")).text()


async def test_the_server_refuses_the_engine_token(webgal) -> None:
    _, token = await engine_of(webgal)
    port = webgal.url.rsplit(":", 1)[1]
    attempts = [
        {"headers": {"Authorization": f"Bearer {token}"}},
        {"params": {"token": token}},
        {"headers": {"Cookie": f"pneuma_webgal_{port}={token}; pneuma_token_{port}={token}"}},
    ]
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        for attempt in attempts:
            async with client.post(webgal.url + "/api/files", json={
                    "path": "pwned.txt", "content": "x"}, **attempt) as response:
                assert response.status == 401, attempt
                assert (await response.json())["error"]["code"] == "E_UNAUTHORIZED"
    assert not (webgal.workspace / "pwned.txt").exists()


async def test_the_server_refuses_requests_from_the_engine_origin(webgal) -> None:
    """What a script in the engine page gets when the browser adds the
    user's cookie (the server's own token) to its request."""
    origin, _ = await engine_of(webgal)
    engine_port = origin.rsplit(":", 1)[1]
    origins = [origin, f"http://localhost:{engine_port}", f"http://[::1]:{engine_port}"]
    for each in origins:
        headers = {**webgal.auth, "Origin": each}
        async with webgal.session.post(webgal.url + "/api/files", headers=headers, json={
                "path": "pwned.txt", "content": "x"}) as response:
            error = (await response.json())["error"]
            assert response.status == 403 and error["details"]["reason"] == "origin", each
        async with webgal.session.get(webgal.url + "/api/config", headers=headers) as response:
            assert response.status == 403, each
        url = webgal.url.replace("http://", "ws://") + f"/ws/browser/{webgal.session_id}"
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await webgal.session.ws_connect(url, headers=headers)
        assert refused.value.status == 403
    assert not (webgal.workspace / "pwned.txt").exists()


async def test_the_engine_site_only_reads_with_its_own_token(webgal) -> None:
    origin, token = await engine_of(webgal)
    game_file = origin + "/webgal/game/scene/start.txt"
    own = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        async with client.get(game_file, headers=own) as response:
            assert response.status == 200
            assert (webgal.workspace / "game/scene/start.txt").read_text(
                encoding="utf-8") == await response.text()
            # Game files are workspace content: sandboxed if opened as a page.
            assert response.headers["Content-Security-Policy"].startswith("sandbox ")
        cases = [
            ("GET", game_file, {}, 401, "E_UNAUTHORIZED"),
            ("GET", game_file, {"Authorization": f"Bearer {webgal.token}"}, 401, "E_UNAUTHORIZED"),
            ("POST", origin + "/webgal/game/scene/start.txt", own, 403, "E_FORBIDDEN"),
            ("PUT", origin + "/api/files", own, 403, "E_FORBIDDEN"),
            ("GET", game_file, {**own, "Origin": webgal.url}, 403, "E_FORBIDDEN"),
            ("GET", game_file, {**own, "Host": "evil.example"}, 403, "E_FORBIDDEN"),
            ("GET", origin + "/api/files?path=game/config.txt", own, 404, "E_NOT_FOUND"),
            ("GET", origin + "/webgal/game/../../.pneuma/config.toml", own, 404, "E_NOT_FOUND"),
        ]
        for method, url, headers, status, code in cases:
            async with client.request(method, url, headers=headers) as response:
                assert response.status == status, (method, url, headers)
                assert (await response.json())["error"]["code"] == code
                assert token not in await response.text()
    assert (webgal.workspace / "game/scene/start.txt").exists()


async def test_the_engine_site_serves_the_game_folder_and_nothing_else(webgal) -> None:
    """The engine's site is the shared content site with only ``game/``
    mounted: the rest of the workspace, the agent's files and a symlink out
    of the workspace are not there, and a game file may only be framed by
    the Pneuma server's pages."""
    origin, token = await engine_of(webgal)
    ws: Path = webgal.workspace
    (ws / "notes.md").write_text("private notes", encoding="utf-8")
    (ws / "game" / ".env").write_text("SECRET=1", encoding="utf-8")
    outside = ws.parent / "outside.txt"
    outside.write_text("private", encoding="utf-8")
    (ws / "game" / "escape.txt").symlink_to(outside)
    own = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        async with client.get(origin + "/webgal/game/config.txt", headers=own) as response:
            assert response.status == 200
            policy = response.headers["Content-Security-Policy"]
            assert "frame-ancestors 'self' " in policy and webgal.url in policy
            assert response.headers["X-Content-Type-Options"] == "nosniff"
        cases = [("/notes.md", 404, "E_NOT_FOUND"), ("/webgal/notes.md", 404, "E_NOT_FOUND"),
                 ("/webgal/game/%2e%2e/notes.md", 404, "E_NOT_FOUND"),
                 ("/webgal/game/.env", 403, "E_DENY_PATH"),
                 ("/webgal/game/escape.txt", 403, "E_DENY_PATH")]
        for path, status, code in cases:
            async with client.get(origin + path, headers=own) as response:
                assert response.status == status, path
                assert (await response.json())["error"]["code"] == code, path
                body = await response.text()
                assert "private" not in body and "SECRET" not in body, path


async def test_the_page_url_opens_the_engine_by_cookie(webgal) -> None:
    """The first load of the URL trades its token for the site's cookie; the
    engine's later requests and its socket carry only that cookie."""
    origin, _ = await engine_of(webgal)
    response = await webgal.post("/api/webgal/jump", json={"scene": "start", "wait": 0})
    url = (await response.json())["url"]
    assert url.startswith(origin + "/webgal/?token=") and url.endswith("#scene=start.txt&line=1")
    jar = aiohttp.CookieJar(unsafe=True)  # 127.0.0.1 is an IP address
    async with aiohttp.ClientSession(cookie_jar=jar) as browser:
        async with browser.get(url.split("#", 1)[0]) as page:
            assert page.status in (200, 503)  # 503: the engine is not set up here
            policy = page.headers["Content-Security-Policy"]
            # Only the Pneuma server's pages may frame it.
            assert "frame-ancestors 'self' " in policy and webgal.url in policy
        async with browser.get(origin + "/webgal/game/config.txt") as game:
            assert game.status == 200
        ws_url = origin.replace("http://", "ws://") + "/api/webgalsync"
        async with browser.ws_connect(ws_url, headers={"Origin": origin}) as ws:
            assert not ws.closed
        # The site's cookie is no key to the server.
        async with browser.get(webgal.url + "/api/config") as refused:
            assert refused.status == 401


async def test_the_same_workspace_gets_the_same_engine_origin_again(tmp_path: Path) -> None:
    """The engine keeps the player's saves and settings in the browser's
    storage of its origin: a restart must not lose them by moving the port."""
    workspace = tmp_path / "ws"
    async with serve("webgal", workspace, backend="none", watch=False,
                     params={"language": "en"}) as first:
        origin, _ = await engine_of(first)
    async with serve("webgal", workspace, backend="none", watch=False) as second:
        again, _ = await engine_of(second)
    assert again == origin
    # Taken by something else meanwhile: another port, and the server still serves.
    port = int(origin.rsplit(":", 1)[1])
    import socket
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", port))
        squatter.listen(1)
        async with serve("webgal", workspace, backend="none", watch=False) as third:
            moved, _ = await engine_of(third)
            assert moved != origin
            assert (await third.get("/api/webgal/status")).status == 200
