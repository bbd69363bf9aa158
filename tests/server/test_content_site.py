"""The content site (pneuma/server/content_site.py): the workspace, read-only,
on an origin of its own, as the webcraft mode serves its preview from it.

Its own token works and is traded for a cookie; the Pneuma server's token
does not work there, and the server refuses the site's token and any request
from the site's origin. Pneuma's and the agent's files, paths out of the
workspace (a symlink included) and anything but a read are refused; the
answers say nosniff, no-cache and who may frame them; only HTML documents
get the mode's script; media get the byte ranges they ask for. Served in-process by ``pneuma.testing.serve``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from pneuma.testing import serve

BRIDGE_TAG = '<script src="/__pneuma__/bridge.js"></script>'


@pytest.fixture
async def webcraft(tmp_path: Path):
    async with serve("webcraft", tmp_path / "ws", backend="none", watch=False) as server:
        ws: Path = server.workspace
        (ws / "data").mkdir(exist_ok=True)
        (ws / "data" / "items.json").write_text('["a", "b"]', encoding="utf-8")
        (ws / "docs").mkdir(exist_ok=True)
        (ws / "docs" / "index.html").write_text("<!doctype html><html><head><title>d</title></head>"
                                                "<body>docs</body></html>", encoding="utf-8")
        (ws / "AGENTS.md").write_text("agent notes", encoding="utf-8")
        (ws / ".env").write_text("SECRET=1", encoding="utf-8")
        (ws / ".pneuma").mkdir(exist_ok=True)
        (ws / ".pneuma" / "secret.txt").write_text("x", encoding="utf-8")
        outside = server.workspace.parent / "outside.txt"
        outside.write_text("private", encoding="utf-8")
        os.symlink(outside, ws / "escape.txt")
        yield server


async def site_of(server: Any) -> tuple[str, str]:
    body = await (await server.get("/api/webcraft/site")).json()
    return body["origin"], body["token"]


def browser() -> aiohttp.ClientSession:
    """A client that keeps cookies for 127.0.0.1 (an IP address), as a browser does."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def test_the_first_load_trades_the_token_for_a_cookie_and_pages_get_the_bridge(webcraft) -> None:
    origin, token = await site_of(webcraft)
    assert origin.startswith("http://127.0.0.1:") and origin != webcraft.url
    assert token and token != webcraft.token
    async with browser() as client:
        async with client.get(f"{origin}/index.html?token={token}", allow_redirects=False) as first:
            assert first.status == 303
            assert first.headers["Location"] == "/index.html"  # the page never sees the token
        async with client.get(f"{origin}/index.html") as page:
            assert page.status == 200
            html = await page.text()
            source = (webcraft.workspace / "index.html").read_text(encoding="utf-8")
            # The bridge right after <head>, on its line: every other line is the file's.
            assert html.replace(BRIDGE_TAG, "", 1) == source
            assert html.index(BRIDGE_TAG) < html.index("<title>")
            assert page.headers["Content-Type"].startswith("text/html")
            assert page.headers["X-Content-Type-Options"] == "nosniff"
            assert page.headers["Cache-Control"] == "no-cache"
            policy = page.headers["Content-Security-Policy"]
            assert policy.startswith("frame-ancestors ") and webcraft.url in policy
        async with client.get(f"{origin}/data/items.json") as data:
            assert data.status == 200 and await data.json() == ["a", "b"]
            assert data.headers["Content-Type"].startswith("application/json")
            assert data.headers["X-Content-Type-Options"] == "nosniff"
        async with client.get(f"{origin}/css/style.css") as css:
            text = await css.text()
            assert css.headers["Content-Type"].startswith("text/css") and "<script" not in text
        async with client.get(f"{origin}/js/main.js") as js:
            assert js.headers["Content-Type"].startswith("text/javascript")
            assert await js.text() == (webcraft.workspace / "js/main.js").read_text(encoding="utf-8")
        async with client.get(f"{origin}/__pneuma__/bridge.js") as bridge:
            assert bridge.status == 200 and "webcraft-bridge" in await bridge.text()
        # A folder's page, and the folder without its slash redirected to it.
        async with client.get(f"{origin}/docs/") as folder:
            assert folder.status == 200 and "docs" in await folder.text()
        async with client.get(f"{origin}/docs", allow_redirects=False) as bare:
            assert bare.status == 302 and bare.headers["Location"] == "/docs/"
        async with client.get(f"{origin}/") as root:
            assert root.status == 200 and BRIDGE_TAG in await root.text()
        # The site's cookie is no key to the server.
        async with client.get(webcraft.url + "/api/config") as refused:
            assert refused.status == 401


async def test_the_site_refuses_other_tokens_writes_hidden_files_and_escapes(webcraft) -> None:
    origin, token = await site_of(webcraft)
    own = {"Authorization": f"Bearer {token}"}
    page = origin + "/index.html"
    cases = [
        ("GET", page, {}, 401, "E_UNAUTHORIZED"),
        ("GET", page, {"Authorization": f"Bearer {webcraft.token}"}, 401, "E_UNAUTHORIZED"),
        ("POST", page, own, 403, "E_FORBIDDEN"),
        ("PUT", origin + "/new.html", own, 403, "E_FORBIDDEN"),
        ("DELETE", page, own, 403, "E_FORBIDDEN"),
        ("GET", page, {**own, "Origin": webcraft.url}, 403, "E_FORBIDDEN"),
        ("GET", page, {**own, "Host": "evil.example"}, 403, "E_FORBIDDEN"),
        ("GET", origin + "/.pneuma/secret.txt", own, 404, "E_NOT_FOUND"),
        ("GET", origin + "/.pneuma/config.toml", own, 404, "E_NOT_FOUND"),
        ("GET", origin + "/CLAUDE.md", own, 404, "E_NOT_FOUND"),
        ("GET", origin + "/AGENTS.md", own, 404, "E_NOT_FOUND"),
        ("GET", origin + "/.claude/settings.json", own, 404, "E_NOT_FOUND"),
        ("GET", origin + "/.git/config", own, 404, "E_NOT_FOUND"),
        ("GET", origin + "/node_modules/x/index.js", own, 404, "E_NOT_FOUND"),
        ("GET", origin + "/.env", own, 403, "E_DENY_PATH"),
        ("GET", origin + "/escape.txt", own, 403, "E_DENY_PATH"),
        ("GET", origin + "/nope.html", own, 404, "E_NOT_FOUND"),
        ("GET", origin + "/__pneuma__/other.js", own, 404, "E_NOT_FOUND"),
    ]
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        for method, url, headers, status, code in cases:
            async with client.request(method, url, headers=headers, allow_redirects=False) as response:
                assert response.status == status, (method, url, headers, await response.text())
                body = await response.text()
                assert (await response.json())["error"]["code"] == code, (url, body)
                assert "private" not in body and token not in body
                # Errors carry the same guards as files.
                assert response.headers["X-Content-Type-Options"] == "nosniff"
        # The server's token in the URL does not open the site either.
        async with client.get(f"{page}?token={webcraft.token}", allow_redirects=False) as response:
            assert response.status == 401
            assert (await response.json())["error"]["details"]["reason"] == "server_token"
    assert not (webcraft.workspace / "new.html").exists()
    assert (webcraft.workspace / "index.html").exists()


async def test_only_html_documents_get_the_script(webcraft) -> None:
    origin, token = await site_of(webcraft)
    ws: Path = webcraft.workspace
    (ws / "plain.txt").write_text("<head>not a page</head>", encoding="utf-8")
    (ws / "frag.html").write_text("<p>no head at all</p>", encoding="utf-8")
    own = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession() as client:
        async with client.get(origin + "/plain.txt", headers=own) as text:
            assert await text.text() == "<head>not a page</head>"
            assert text.headers["Content-Type"].startswith("text/plain")
        async with client.get(origin + "/assets/logo.svg", headers=own) as svg:
            assert BRIDGE_TAG not in await svg.text()
            assert svg.headers["Content-Type"].startswith("image/svg+xml")
        async with client.get(origin + "/frag.html", headers=own) as frag:
            assert await frag.text() == BRIDGE_TAG + "<p>no head at all</p>"
        async with client.head(origin + "/index.html", headers=own) as head:
            assert head.status == 200 and head.headers["X-Content-Type-Options"] == "nosniff"


async def test_media_gets_the_byte_range_it_asks_for(webcraft) -> None:
    """A <video> or <audio> seeks by asking for byte ranges; a range that
    does not fit (or several) gets the whole file."""
    origin, token = await site_of(webcraft)
    data = bytes(range(256)) * 40
    (webcraft.workspace / "clip.webm").write_bytes(data)
    own = {"Authorization": f"Bearer {token}"}
    size = len(data)
    cases = [  # (Range asked for, status, body, Content-Range)
        (None, 200, data, None),
        ("bytes=10-19", 206, data[10:20], f"bytes 10-19/{size}"),
        ("bytes=10000-", 206, data[10000:], f"bytes 10000-{size - 1}/{size}"),
        ("bytes=-5", 206, data[-5:], f"bytes {size - 5}-{size - 1}/{size}"),
        ("bytes=0-", 206, data, f"bytes 0-{size - 1}/{size}"),
        ("bytes=99999-", 200, data, None),
        ("bytes=0-1,4-5", 200, data, None),
    ]
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        for asked, status, body, span in cases:
            headers = {**own, **({"Range": asked} if asked else {})}
            async with client.get(origin + "/clip.webm", headers=headers) as response:
                assert (response.status, await response.read()) == (status, body), asked
                assert response.headers["Accept-Ranges"] == "bytes"
                assert response.headers.get("Content-Range") == span, asked


async def test_the_server_refuses_the_site_token_and_its_origin(webcraft) -> None:
    """What a page on the content site gets when it tries the API, even when
    the browser adds the person's cookie (the server's own token)."""
    origin, token = await site_of(webcraft)
    port = webcraft.url.rsplit(":", 1)[1]
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        for attempt in ({"headers": {"Authorization": f"Bearer {token}"}}, {"params": {"token": token}},
                        {"headers": {"Cookie": f"pneuma_token_{port}={token}"}}):
            async with client.post(webcraft.url + "/api/files", json={"path": "pwned.txt", "content": "x"},
                                   **attempt) as response:
                assert response.status == 401, attempt
    site_port = origin.rsplit(":", 1)[1]
    for each in (origin, f"http://localhost:{site_port}"):
        headers = {**webcraft.auth, "Origin": each}
        async with webcraft.session.post(webcraft.url + "/api/files", headers=headers,
                                         json={"path": "pwned.txt", "content": "x"}) as response:
            assert response.status == 403
            assert (await response.json())["error"]["details"]["reason"] == "origin"
        async with webcraft.session.get(webcraft.url + "/api/config", headers=headers) as response:
            assert response.status == 403
    assert not (webcraft.workspace / "pwned.txt").exists()


async def test_the_same_workspace_gets_the_same_origin_again(tmp_path: Path) -> None:
    """A page's localStorage belongs to its origin: a restart keeps the port when it can."""
    async with serve("webcraft", tmp_path / "ws", backend="none", watch=False) as first:
        origin, _ = await site_of(first)
    async with serve("webcraft", tmp_path / "ws", backend="none", watch=False) as second:
        again, _ = await site_of(second)
    assert again == origin


SECRET_TEXT = "AGENT-INSTRUCTIONS-SECRET"


def raw(url: str) -> Any:
    """``url`` sent as written: no client-side normalising of %2e, %2f or '.'."""
    import yarl

    return yarl.URL(url, encoded=True)


async def test_hidden_files_stay_hidden_under_any_spelling_or_link(webcraft) -> None:
    """Hidden-ness is decided on the normalised path (percent-decoded, '.'
    segments dropped), for every segment, and on where a symlink leads."""
    ws: Path = webcraft.workspace
    (ws / "CLAUDE.md").write_text(SECRET_TEXT, encoding="utf-8")
    (ws / "AGENTS.md").write_text(SECRET_TEXT, encoding="utf-8")
    (ws / ".claude").mkdir(exist_ok=True)
    (ws / ".claude" / "settings.json").write_text(SECRET_TEXT, encoding="utf-8")
    (ws / "docs" / "CLAUDE.md").write_text(SECRET_TEXT, encoding="utf-8")
    os.symlink("CLAUDE.md", ws / "notes.md")
    os.symlink("AGENTS.md", ws / "agents.txt")
    os.symlink(".claude", ws / "cfg")
    os.symlink("../CLAUDE.md", ws / "docs" / "up.md")
    os.symlink(".", ws / "here")
    origin, token = await site_of(webcraft)
    own = {"Authorization": f"Bearer {token}"}
    paths = ["/.%2fCLAUDE.md", "/%2e%2fCLAUDE.md", "/%2E%2FAGENTS.md", "/.%2fAGENTS.md",
             "/./CLAUDE.md", "/docs/.%2f..%2fCLAUDE.md", "/docs/%2e%2e/CLAUDE.md",
             "/.%2f.claude/settings.json", "/%2e/.claude/settings.json", "//CLAUDE.md",
             "/docs/CLAUDE.md", "/notes.md", "/agents.txt", "/cfg/settings.json", "/cfg",
             "/cfg/", "/docs/up.md", "/here/CLAUDE.md", "/here/cfg/settings.json",
             "/here/.%2fAGENTS.md", "/here/cfg"]
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        for path in paths:
            async with client.get(raw(origin + path), headers=own,
                                  allow_redirects=False) as response:
                body = await response.text()
                assert response.status in (403, 404), (path, response.status, body)
                assert SECRET_TEXT not in body, path
                assert response.headers["X-Content-Type-Options"] == "nosniff", path
        # What is not hidden is still served through the same spellings.
        for path in ("/.%2fdata/items.json", "/here/data/items.json", "/docs/./index.html",
                     "/here/"):
            async with client.get(raw(origin + path), headers=own,
                                  allow_redirects=False) as response:
                assert response.status == 200, (path, await response.text())


async def test_redirects_carry_the_security_headers(webcraft) -> None:
    origin, token = await site_of(webcraft)
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        for url, headers, status in (
                (f"{origin}/docs", {"Authorization": f"Bearer {token}"}, 302),
                (f"{origin}/index.html?token={token}", {}, 303)):
            async with client.get(url, headers=headers, allow_redirects=False) as response:
                assert response.status == status, url
                assert response.headers["X-Content-Type-Options"] == "nosniff", url
                assert response.headers["Referrer-Policy"] == "no-referrer", url
                assert "frame-ancestors" in response.headers["Content-Security-Policy"], url
