"""A checkpoint's pages on the content site (issue 28's last gap: Compare and
the timeline of a webcraft site show the checkpoint, not the live site).

The content site serves the workspace as a checkpoint kept it under
``/__pneuma__/snapshot/{ref}/{side}/…``, read from the checkpoint store by
the snapshot code of pneuma/server/routes_snapshot.py: the page as the turn
found it and as it left it, while the workspace has moved on, with its
relative stylesheets, and exactly the isolation of the live pages (the
site's own token, the same headers, the hidden files hidden)."""

from __future__ import annotations

from collections.abc import Iterator

import aiohttp
import pytest

from pneuma.host.plugins import LOAD_PLUGINS_ENV, get_plugin_manager
from pneuma.host.registry import get_mode, reset_plugin_manager
from tests.server.conftest import make_server  # noqa: F401

BRIDGE_TAG = '<script src="/__pneuma__/bridge.js"></script>'
SNAPSHOT = "/__pneuma__/snapshot"
SAME_HEADERS = ("Content-Security-Policy", "X-Content-Type-Options", "Cache-Control",
                "Referrer-Policy", "Content-Type")


@pytest.fixture
def pm(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "slide,webcraft")
    reset_plugin_manager()
    yield get_plugin_manager()
    reset_plugin_manager()


def browser() -> aiohttp.ClientSession:
    """A client that keeps cookies for 127.0.0.1 (an IP address), as a browser does."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def error_code(response: aiohttp.ClientResponse) -> str:
    return str((await response.json())["error"]["code"])


async def test_a_checkpoints_pages_are_served_with_the_live_pages_isolation(  # type: ignore[no-untyped-def]
        make_server, pm) -> None:  # noqa: F811
    server = await make_server(mode=get_mode("webcraft"))
    ws = server.workspace
    page, css = ws / "index.html", ws / "css" / "style.css"
    original, original_css = page.read_text(encoding="utf-8"), css.read_text(encoding="utf-8")
    tab = await server.tab()
    await tab.say("retitle the site", client_msg_id="c1")
    await tab.wait_for("turn_checkpoint")
    await server.backend.wait_call("send_user_message")
    page.write_text(original.replace("<title>", "<title>TURN ONE "), encoding="utf-8")
    css.write_text(original_css + "\nbody { color: rebeccapurple; }\n", encoding="utf-8")
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    await tab.wait_for("turn_changes")
    # The person edits the page by hand afterwards: the live site shows it, no checkpoint side does.
    page.write_text(original.replace("<title>", "<title>BY HAND "), encoding="utf-8")

    site = await (await server.get("/api/webcraft/site")).json()
    origin, token = site["origin"], site["token"]
    async with browser() as client:
        async with client.get(f"{origin}{SNAPSHOT}/1/after/index.html?token={token}",
                              allow_redirects=False) as first:
            assert first.status == 303  # the token is traded for the cookie, as on a live page
            assert first.headers["Location"] == f"{SNAPSHOT}/1/after/index.html"
        async with client.get(f"{origin}/index.html") as live:
            assert "BY HAND" in await live.text()
            live_headers = {name: live.headers[name] for name in SAME_HEADERS}
        async with client.get(f"{origin}{SNAPSHOT}/1/before/index.html") as before:
            assert before.status == 200
            assert (await before.text()).replace(BRIDGE_TAG, "", 1) == original
            assert {name: before.headers[name] for name in SAME_HEADERS} == live_headers
        async with client.get(f"{origin}{SNAPSHOT}/1/after/") as after:  # a folder's page
            html = await after.text()
            assert after.status == 200 and BRIDGE_TAG in html
            assert html.replace(BRIDGE_TAG, "", 1) == original.replace("<title>", "<title>TURN ONE ")
        # The page's relative stylesheet resolves under the same prefix, as the turn left it.
        async with client.get(f"{origin}{SNAPSHOT}/1/after/css/style.css") as style:
            assert style.headers["Content-Type"].startswith("text/css")
            assert "rebeccapurple" in await style.text()
        async with client.get(f"{origin}{SNAPSHOT}/1/before/css/style.css") as style:
            assert await style.text() == original_css
        async with client.get(f"{origin}{SNAPSHOT}/1/after/css", allow_redirects=False) as bare:
            assert bare.status == 302 and bare.headers["Location"] == f"{SNAPSHOT}/1/after/css/"
        # What the live site hides, and what no checkpoint holds, answer 404; a bad side 400.
        for path in ("1/after/CLAUDE.md", "1/after/.pneuma/session.json", "1/after/nothing.html",
                     "9/after/index.html"):
            async with client.get(f"{origin}{SNAPSHOT}/{path}") as missing:
                assert missing.status == 404 and await error_code(missing) == "E_NOT_FOUND", path
                assert missing.headers["X-Content-Type-Options"] == "nosniff"
        async with client.get(f"{origin}{SNAPSHOT}/1/sideways/index.html") as wrong:
            assert wrong.status == 400 and await error_code(wrong) == "E_BAD_ARGS"
        async with client.post(f"{origin}{SNAPSHOT}/1/after/index.html") as write:
            assert write.status == 403
    # Without the site's cookie, or with the server's token, nothing is served.
    async with browser() as stranger:
        async with stranger.get(f"{origin}{SNAPSHOT}/1/after/index.html") as refused:
            assert refused.status == 401
        async with stranger.get(f"{origin}{SNAPSHOT}/1/after/index.html?token={server.token}") as refused:
            assert refused.status == 401
    await server.close()


async def test_the_webgal_engine_plays_a_checkpoints_game(make_server, pm, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "slide,webgal")
    reset_plugin_manager()
    server = await make_server(mode=get_mode("webgal"))
    scene = server.workspace / "game" / "scene" / "start.txt"
    original = scene.read_text(encoding="utf-8")
    tab = await server.tab()
    await tab.say("add a line", client_msg_id="c1")
    await tab.wait_for("turn_checkpoint")
    await server.backend.wait_call("send_user_message")
    scene.write_text(original + ":A line of the turn;\n", encoding="utf-8")
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    await tab.wait_for("turn_changes")
    scene.write_text(original + ":A line by hand;\n", encoding="utf-8")

    status = await (await server.get("/api/webgal/status")).json()
    origin, token = status["engine"]["origin"], status["url"].split("token=")[1].split("#")[0]
    # The preview page frames the engine over the checkpoint's game.
    relay = await server.get("/webgal/?snapshot=1/after")
    assert relay.status == 200
    assert f"{origin}/webgal/snapshot/1/after/?token=" in await relay.text()
    wrong = await server.get("/webgal/?snapshot=../../etc")
    assert wrong.status == 400 and await error_code(wrong) == "E_BAD_ARGS"
    async with browser() as client:
        async with client.get(f"{origin}/webgal/game/scene/start.txt?token={token}") as live:
            assert "A line by hand" in await live.text()
            live_headers = {name: live.headers[name] for name in SAME_HEADERS}
        for side, expected in (("before", original), ("after", original + ":A line of the turn;\n")):
            async with client.get(f"{origin}/webgal/snapshot/1/{side}/game/scene/start.txt?token={token}") as played:
                assert played.status == 200 and await played.text() == expected
                assert {name: played.headers[name] for name in SAME_HEADERS} == live_headers
        async with client.get(f"{origin}/webgal/snapshot/1/after/?token={token}") as engine:
            assert engine.status in (200, 503)  # 503: the engine is not built here
            if engine.status == 200:
                assert "_pneuma/launcher.js" in await engine.text()
        async with client.get(f"{origin}/webgal/snapshot/1/after/game/%2E%2E/CLAUDE.md?token={token}") as hidden:
            assert hidden.status == 404
    await server.close()
