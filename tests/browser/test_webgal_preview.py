"""The WebGAL preview with the real engine, and the webgal mode's viewer.

Each test starts `pneuma run --mode webgal --backend none` on a freshly seeded
workspace (tests/browser/conftest.py) and drives Debian's Chromium. The engine
is npm webgal-engine 4.5.18, served by the plugin on a site of its own (another
port: the game is workspace content) at /webgal/ with game/ mapped to the
workspace; it opens the editor-sync socket /api/webgalsync by itself, over
which the server jumps it to a scene and line. The server's own /webgal/
page frames it and speaks postMessage with it. The shell is authorised by
the cookie its first load sets, the engine's site by its own token (traded
for its own cookie). Every request the browser makes must stay on those two
origins of 127.0.0.1 (tests/browser/test_webgal_isolation.py shows the
engine cannot drive the server, and checks the webgal viewer's scene list,
script and actions on the same game: one software-drawn boot for both).

Chromium runs with --disable-gpu, so the engine's 2560×1440 WebGL stage is
drawn in software and is slow here: the waits are generous on purpose, and
the tests boot no more games than what they check needs (one engine page
for playing and jumping; none for the write confirmation, the shell's): a
game open in a page keeps a core busy. Every game they open draws at most
ten frames a second (open_page's contexts, and the one the headless
preview's test makes: tests/browser/webgal_engine.py says why that leaves
what they check alone).
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.webgal_engine import (
    ENGINE_FPS,
    cap_engine_frame_rate,
    engine_frame_rate,
)

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "plugins" / "webgal" / "pneuma_webgal" / "static" / "engine" / "index.html"
SLOW = 90_000  # ms: the software-rendered engine needs its time

pytestmark = pytest.mark.skipif(
    not ENGINE.exists(), reason="the WebGAL engine is not set up (scripts/build-web)"
)

STATE = "window.pneumaWebgal && window.pneumaWebgal.state"


def api(server: Any, path: str, body: dict[str, Any] | None = None, *,
        token: bool = True, timeout: float = 90) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {server.token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.base + path, data=data, headers=headers,
                                     method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def dialogue(workspace: Path, scene: str, line: int) -> str:
    """The text a dialogue line shows: after the speaker's ':', before ';'."""
    raw = (workspace / "game" / "scene" / scene).read_text(encoding="utf-8").split("\n")[line - 1]
    statement = re.split(r"(?<!\\);", raw)[0]
    return statement.split(":", 1)[1].split(" -")[0].strip()


def watch_requests(context: Any, *bases: str) -> list[str]:
    """Every URL the pages of `context` request that is not on these servers."""
    foreign: list[str] = []
    sockets = tuple(base.replace("http", "ws", 1) + "/" for base in bases)

    def check(request: Any) -> None:
        url = request.url
        if not (url.startswith(tuple(base + "/" for base in bases))
                or url.startswith(("data:", "blob:", "about:"))):
            foreign.append(url)

    context.on("request", check)
    context.on("websocket", lambda ws: None if ws.url.startswith(sockets) else foreign.append(ws.url))
    return foreign


def engine_site(server: Any) -> tuple[str, str]:
    """(origin, page URL with its own token) of the engine's site."""
    status, body = api(server, "/api/webgal/status")
    assert status == 200, body
    origin, url = body["engine"]["origin"], body["url"]
    assert origin.startswith("http://127.0.0.1:") and origin != server.base
    assert url.startswith(origin + "/webgal/?token=") and server.token not in url
    return origin, url


def engine_page(server: Any, open_page: Any) -> tuple[Any, list[str]]:
    """The shell (its cookie set), then the engine's page (its own site, its
    own token) in the same browser context."""
    shell = open_page(server, viewport={"width": 1280, "height": 720})
    origin, url = engine_site(server)
    foreign = watch_requests(shell.context, server.base, origin)
    page = shell.context.new_page()
    # Closed before the engine page boots: its viewer would boot a second
    # game beside it, doubling the software rendering.
    shell.close()
    page.goto(url)
    page.wait_for_function(f"({STATE}) && {STATE}.connected && {STATE}.scene === 'start.txt'",
                           timeout=SLOW)
    return page, foreign


def engine_frame(page: Any, origin: str) -> Any:
    """The engine's frame in the server's /webgal/ page (or in the viewer's frame of it)."""
    for _ in range(200):
        for frame in page.frames:
            if frame.url.startswith(origin + "/webgal/"):
                return frame
        page.wait_for_timeout(100)
    raise AssertionError(f"no engine frame from {origin} in {[f.url for f in page.frames]}")


def shows_text(page: Any, text: str, timeout: int = SLOW) -> None:
    """Wait until the engine's text box shows `text` typed out in full. The
    engine draws every word in three layers (fill, outline, placeholder) and
    splits "6:40" into "6:" "40", so the box's text (without spaces) must hold
    every character of `text` in order, and the end of its last word (the
    typewriter has finished)."""
    check = (
        """text => {
            const want = text.replace(/\\s+/g, '');
            const words = text.split(/\\s+/);
            const holds = (box) => {
                const seen = box.innerText.replace(/\\s+/g, '');
                let i = 0;
                for (const ch of want) {
                    i = seen.indexOf(ch, i);
                    if (i < 0) return false;
                    i += 1;
                }
                return seen.includes(words[words.length - 1].slice(-2));
            };
            return [...document.querySelectorAll('[class*="_TextBox_"]')].some(holds);
        }"""
    )
    try:
        page.wait_for_function(check, arg=text, timeout=timeout)
    except Exception:
        box = page.evaluate("(document.querySelector('[class*=\"_TextBox_\"]') || {}).innerText")
        shot_path = Path("/tmp/pneuma-screenshots/webgal-shows-text-failed.png")
        getattr(page, "page", page).screenshot(path=str(shot_path))
        raise AssertionError(f"the game does not show {text!r}; state {page.evaluate(STATE)}, "
                             f"text box {box!r}; see {shot_path}") from None


def test_engine_plays_the_seed_game_from_the_workspace_and_a_jump_lands_on_the_line(
        pneuma_server: Any, open_page: Any, shot: Any) -> None:  # fmt: skip
    server = pneuma_server("webgal", backend="none")
    page, foreign = engine_page(server, open_page)
    assert engine_frame_rate(page) == ENGINE_FPS  # the cap took hold

    # The engine's own landing screen, then the title with the game's buttons
    # (in the project's language, zh-CN by default) over the game's title.png.
    page.mouse.click(640, 360)
    page.wait_for_function("getComputedStyle(document.querySelector('.html-body__title-enter'))"
                           ".display === 'none'", timeout=SLOW)
    buttons = page.locator('[class*="_Title_button_text"]')
    assert buttons.first.inner_text().strip() == "开始游戏"
    title = shot(page, "webgal-title")
    assert title.stat().st_size > 10_000
    page.locator('[class*="_Title_button_"]').first.click()

    # start.txt: intro (click through it), then the language choice.
    english = page.get_by_text("English", exact=True)
    for _ in range(30):
        if english.count() and english.first.is_visible():
            break
        page.mouse.click(1000, 300)
        try:  # the next click once this one has had its time, unless the choice shows first
            english.first.wait_for(state="visible", timeout=1500)
        except PlaywrightTimeout:
            pass
    english.first.click()

    first = dialogue(server.workspace, "station_en.txt", 5)
    assert first.startswith("6:40 in the evening")
    shows_text(page, first)
    # (Engine 4.5.18 reports a scene entered by a choice under the option's
    # text, "English", rather than its file name.) Its sync message can
    # trail the text box by a moment: wait for the state to reach the line.
    try:
        page.wait_for_function(f"{STATE} && {STATE}.line === 5", timeout=5_000)
    except PlaywrightTimeout:
        pass  # the assertion below says what the state is instead
    state = page.evaluate(STATE)
    assert state["line"] == 5 and state["text"] == first
    shot(page, "webgal-first-line")

    # The game's files came from the workspace through /webgal/game/.
    status, body = api(server, "/api/webgal/status")
    assert status == 200 and body["engine"] == {"available": True, "version": "4.5.18",
                                                "origin": engine_site(server)[0]}
    # The shell's own viewer may be running a second copy of the game.
    assert first in [p["text"] for p in body["previews"]], body["previews"]

    # A jump from where the game is. The socket needs the session token like every route.
    status, _ = api(server, "/api/webgalsync", token=False)
    assert status == 401

    line = 10
    expected = dialogue(server.workspace, "station_en.txt", line)
    status, result = api(server, "/api/webgal/jump",
                         {"scene": "station_en", "line": line, "wait": 80})
    assert status == 200, result
    # The shell's viewer may run a second copy of the game in its own frame;
    # every connected game gets the jump.
    assert result["delivered"] >= 1 and result["landed"] is True, result
    assert result["preview"]["scene"] == "station_en.txt"
    assert result["preview"]["line"] == line
    assert result["preview"]["speaker"] == "Mio" and result["preview"]["text"] == expected
    # Its URL is the engine's site, with that site's token, never the server's.
    origin, engine_url = engine_site(server)
    assert result["url"] == f"{engine_url}#scene=station_en.txt&line={line}"
    shows_text(page, expected)
    shot(page, "webgal-jump-line10")

    # A missing scene is refused before anything is sent.
    status, error = api(server, "/api/webgal/jump", {"scene": "nowhere.txt"})
    assert status == 404 and error["error"]["code"] == "E_NOT_FOUND"

    # The server's /webgal/ page passes its fragment (scene and line) on to
    # the engine it frames, and reports the engine's position (postMessage).
    context = page.context
    page.close()  # one game at a time: the next page boots its own
    other = context.new_page()
    target = dialogue(server.workspace, "station_zh.txt", 12)
    other.goto(f"{server.base}/webgal/#scene=station_zh.txt&line=12")
    frame = engine_frame(other, origin)
    shows_text(frame, target)
    # The engine reports its position once a second.
    try:
        # A function, not an expression: the page's policy allows no eval.
        other.wait_for_function(f"() => {STATE}.line === 12 && {STATE}.scene === 'station_zh.txt'",
                                timeout=30_000)  # a loaded machine delays the engine's reports
    except PlaywrightTimeout:
        raise AssertionError(f"the page says {other.evaluate(STATE)}, its engine "
                             f"{frame.evaluate(STATE)}") from None
    shot(other, "webgal-fragment-zh12")
    assert foreign == []


def test_write_confirmation_apply_and_reject(pneuma_server: Any, open_page: Any, shot: Any) -> None:
    """A write_to_file dry run shows its diff in the page; Reject makes the real
    write fail and leaves the file alone, Apply lets it land."""
    server = pneuma_server("webgal", backend="none")
    origin, _ = engine_site(server)
    # The dialog is the shell's: the viewer's game is not what this looks at,
    # and booting it in software would only slow every step down.
    page = open_page(server, before_goto=lambda p: p.route(f"{origin}/**", lambda route: route.abort()))
    page.wait_for_selector(".wg-line", timeout=20_000)
    path = server.workspace / "game/scene/station_en.txt"
    before = path.read_text(encoding="utf-8")
    lines = before.split("\n")
    changed = "\n".join(lines[:12] + ["Mio:Shall we wait together?;"] + lines[12:])
    args = {"path": "game/scene/station_en.txt", "content": changed}

    status, dry = api(server, "/api/tools/write_to_file", {**args, "dryRun": True})
    assert status == 200 and dry["applied"] is False and dry["confirmationId"], dry
    dialog = page.locator('.modal[data-kind="write"]')
    dialog.wait_for(timeout=10_000)
    assert "game/scene/station_en.txt" in dialog.inner_text()
    added = dialog.locator(".diff-add")
    assert added.count() == 1 and "Mio:Shall we wait together?;" in added.inner_text()
    assert "13" in added.locator(".diff-num").inner_text()
    color = added.evaluate("e => getComputedStyle(e).backgroundColor")
    assert color not in ("rgba(0, 0, 0, 0)", "transparent"), color
    shot(page, "write-confirmation-diff")

    dialog.get_by_role("button", name="Reject").click()
    dialog.wait_for(state="detached", timeout=10_000)
    status, error = api(server, "/api/tools/write_to_file", {**args, "dryRun": False})
    assert status == 403 and error["error"]["code"] == "E_POLICY_VIOLATION", error
    assert "rejected" in error["error"]["message"]
    assert path.read_text(encoding="utf-8") == before

    # A fresh dry run asks again; this time Apply, and the write lands.
    status, dry = api(server, "/api/tools/write_to_file", {**args, "dryRun": True})
    assert status == 200 and dry["confirmationId"]
    dialog.wait_for(timeout=10_000)
    dialog.get_by_role("button", name="Apply").click()
    status, done = api(server, "/api/tools/write_to_file", {**args, "dryRun": False})
    assert status == 200 and done["applied"] is True, done
    assert path.read_text(encoding="utf-8") == changed


def test_preview_scene_through_the_server_with_no_tab_open(pneuma_server: Any, open_page: Any,
                                                          shot: Any) -> None:
    """preview_scene under `pneuma run` jumps over POST /api/webgal/jump: with no
    game open the jump waits for the first one to open, which lands on the line."""
    server = pneuma_server("webgal", backend="none")
    policies = server.workspace / ".pneuma" / "webgal-policies.json"
    policies.write_text(json.dumps({"policies": {"previewWaitSeconds": 60}}))
    line = 10
    expected = dialogue(server.workspace, "station_en.txt", line)

    status, result = api(server, "/api/tools/preview_scene",
                         {"scenePath": "station_en", "line": line})
    assert status == 200, result
    # The URL opens in any browser: it is the engine's site and carries that
    # site's own token (traded for its cookie), not the server's.
    _, engine_url = engine_site(server)
    assert result["url"] == f"{engine_url}#scene=station_en.txt&line={line}"
    assert any("no preview is open" in entry for entry in result["logs"]), result["logs"]
    status, body = api(server, "/api/webgal/status")
    assert body["previews"] == [] and body["pendingJump"]["scene"] == "station_en.txt"

    # The first game to open (the viewer's, in the shell) gets the jump.
    page = open_page(server, viewport={"width": 1280, "height": 720})
    page.wait_for_function(
        "([s, l]) => { const f = document.querySelector('.wg-frame');"
        " const w = f && f.contentWindow; const st = w && w.pneumaWebgal && w.pneumaWebgal.state;"
        " return st && st.scene === s && st.line === l; }",
        arg=["station_en.txt", line], timeout=SLOW)
    # The server hears of the game over its sync socket, a moment after the page does.
    deadline = time.monotonic() + 30
    while True:
        status, body = api(server, "/api/webgal/status")
        if body["previews"] or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert [(p["scene"], p["line"], p["text"]) for p in body["previews"]] == \
        [("station_en.txt", line, expected)]

    # With the game open, preview_scene reports where it landed and what it shows.
    target = dialogue(server.workspace, "station_en.txt", 12)
    status, result = api(server, "/api/tools/preview_scene",
                         {"scenePath": "game/scene/station_en.txt", "line": 12})
    assert status == 200, result
    assert result["url"] == f"{engine_url}#scene=station_en.txt&line=12"
    assert any("landed on station_en.txt line 12" in e and target in e for e in result["logs"]), \
        result["logs"]
    shot(page, "webgal-preview-scene-tool")


def test_preview_scene_without_pneuma_run_opens_in_a_browser(browser: Any, tmp_path: Path,
                                                              shot: Any) -> None:
    """preview_scene called as the agent's MCP server calls it, with no
    `pneuma run` up: it starts the Pneuma server headless, and the URL it
    hands out opens the game at the line in a browser that has never seen
    the server (the token in the URL becomes its cookie, then leaves the
    address bar)."""
    from pneuma.api import call_mode_tool, request_json, running_headless_server
    from pneuma.host.registry import get_mode
    from pneuma.workspace.params import init_workspace

    workspace = (tmp_path / "ws").resolve()
    init_workspace(get_mode("webgal"), workspace, {"language": "en"})
    (workspace / ".pneuma").mkdir(exist_ok=True)
    (workspace / ".pneuma" / "webgal-policies.json").write_text(
        json.dumps({"policies": {"previewWaitSeconds": 60}}))
    result = call_mode_tool("webgal", workspace, "preview_scene",
                            {"scenePath": "station_en", "line": 10}, server_url="")
    server = running_headless_server("webgal", workspace)
    try:
        assert "error" not in result and server is not None, result
        status, body = request_json(server.url, "GET", "/api/webgal/status", token=server.token)
        assert status == 200, body
        origin, engine_url = body["engine"]["origin"], body["url"]
        # The engine's own site and its own token: the URL cannot drive the server.
        assert result["url"] == f"{engine_url}#scene=station_en.txt&line=10"
        assert origin != server.url and server.token not in result["url"]
        context = cap_engine_frame_rate(browser.new_context(viewport={"width": 1280, "height": 720}))
        foreign = watch_requests(context, server.url, origin)
        page = context.new_page()
        page.goto(result["url"])
        expected = dialogue(workspace, "station_en.txt", 10)
        shows_text(page, expected)
        page.wait_for_function(f"{STATE}.line === 10 && {STATE}.scene === 'station_en.txt'",
                               timeout=10_000)
        assert "token" not in page.url and page.url.endswith("#scene=station_en.txt&line=10")
        shot(page, "webgal-headless-preview")
        # A second call finds the game open: it jumps it and says what it shows.
        again = call_mode_tool("webgal", workspace, "preview_scene",
                               {"scenePath": "station_en", "line": 12}, server_url="")
        target = dialogue(workspace, "station_en.txt", 12)
        assert any("reused" in entry for entry in again["logs"]), again["logs"]
        assert any("landed on station_en.txt line 12" in e and target in e
                   for e in again["logs"]), again["logs"]
        assert foreign == []
        context.close()
    finally:
        if server is not None:
            server.stop()
