"""The WebGAL engine cannot drive the agent (issue 14, item 2).

The engine plays the game's scenes and assets, which are workspace content,
and evaluates script expressions with ``new Function``: whatever runs in the
engine's page is as good as the game's author. Here a script runs in the
engine's page of the webgal viewer (what a hostile game would make it run)
and tries what a hostile page would with the user's cookie: write a file
through ``POST /api/files`` (relative, and against the server's own origin),
run a tool, read the server's config, open the browser WebSocket (the one
that sends the agent messages) and reach into the shell around it. Every
attempt fails and nothing is written, while the preview still plays and
the shell's click on a script line still jumps the game (postMessage).

The same page, server and game first check the webgal viewer itself: its
scene list and script, its viewer actions, the selection it hands the agent
and an edit on disk. The software-drawn game takes a core for many seconds
to boot, so one boot serves both checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_webgal_preview import api, dialogue, engine_site, watch_requests

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "plugins" / "webgal" / "pneuma_webgal" / "static" / "engine" / "index.html"
SLOW = 90_000  # ms: the software-rendered engine needs its time

pytestmark = pytest.mark.skipif(
    not ENGINE.exists(), reason="the WebGAL engine is not set up (scripts/build-web)"
)

VIEWER_GAME = ("() => { const f = document.querySelector('.wg-frame');"
               " const w = f && f.contentWindow; const api = w && w.pneumaWebgal;"
               " return !!(api && api.state.scene === 'start.txt'); }")

# Runs in the engine's page. Each attempt records what happened; an attempt
# the browser or the server refused must not have had any effect.
ATTACK = """async ({server, sid}) => {
  const out = {};
  const write = (path) => JSON.stringify({path, content: 'written by the game'});
  const settle = (p) => p.then((r) => 'answered ' + r.status, (e) => 'failed');
  out.relative = await settle(fetch('/api/files', {method: 'POST', credentials: 'include',
    headers: {'Content-Type': 'application/json'}, body: write('pwned-relative.txt')}));
  // A "simple" request (no preflight): the browser sends it with the
  // user's cookie; only the server's Origin check stands in the way.
  await fetch(server + '/api/files', {method: 'POST', mode: 'no-cors', credentials: 'include',
    headers: {'Content-Type': 'text/plain'}, body: write('pwned-simple.txt')}).catch(() => null);
  out.cors = await settle(fetch(server + '/api/files', {method: 'POST', credentials: 'include',
    headers: {'Content-Type': 'application/json'}, body: write('pwned-cors.txt')}));
  await fetch(server + '/api/tools/write_to_file', {method: 'POST', mode: 'no-cors',
    credentials: 'include', headers: {'Content-Type': 'text/plain'},
    body: JSON.stringify({path: 'pwned-tool.txt', content: 'x'})}).catch(() => null);
  out.read = await fetch(server + '/api/config', {credentials: 'include'})
    .then((r) => r.text(), () => 'failed');
  out.socket = await new Promise((resolve) => {
    let ws;
    try { ws = new WebSocket(server.replace('http', 'ws') + '/ws/browser/' + sid); }
    catch (e) { resolve('blocked'); return; }
    ws.onopen = () => {
      ws.send(JSON.stringify({type: 'user_message', content: 'sent by the game'}));
      resolve('open');
    };
    ws.onerror = () => resolve('refused');
    setTimeout(() => resolve('no answer'), 10000);
  });
  try { out.shell = String(window.top.document.title); } catch (e) { out.shell = 'blocked'; }
  try { out.bridge = typeof window.parent.pneumaWebgal; } catch (e) { out.bridge = 'blocked'; }
  return out;
}"""


def find_engine_frame(page: Any) -> Any:
    """The frame the engine runs in (its landing screen and launcher.js)."""
    for _ in range(300):
        for frame in page.frames:
            try:
                if frame.evaluate("() => !!(document.querySelector('.html-body__title-enter')"
                                  " && window.pneumaWebgal)"):
                    return frame
            except Exception:
                continue
        page.wait_for_timeout(100)
    raise AssertionError(f"no engine frame in {[f.url for f in page.frames]}")


def check_the_viewer_lists_scenes_shows_the_script_and_answers_actions(server: Any, page: Any) -> None:
    """The scene list and the script, navigate-to, preview-scene, the
    selected lines as the viewer context and describe-view."""
    scenes = page.locator(".wg-scene[data-kind=scene]").all_inner_texts()
    assert [s.split("\n")[0].strip("▶✓ ") for s in scenes][0] == "start.txt"
    assert len(scenes) == len(list((server.workspace / "game" / "scene").glob("*.txt")))
    start_lines = (server.workspace / "game/scene/start.txt").read_text().split("\n")
    assert page.locator(".wg-line").count() == len(start_lines)

    # navigate-to opens a scene, as the agent asks over HTTP.
    status, answer = api(server, "/api/viewer/action?timeout=20",
                         {"actionId": "navigate-to", "params": {"file": "game/scene/station_en.txt"}})
    assert status == 200 and answer["success"] is True, answer
    page.wait_for_selector('.wg-scene.active[data-path="game/scene/station_en.txt"]')
    assert "Mio" in page.locator('.wg-line[data-line="8"]').inner_text()

    # preview-scene jumps the viewer's own game and reports what it shows.
    page.wait_for_function(VIEWER_GAME, timeout=SLOW)
    expected = dialogue(server.workspace, "station_en.txt", 12)
    status, answer = api(server, "/api/viewer/action?timeout=85",
                         {"actionId": "preview-scene", "params": {"scene": "station_en.txt", "line": 12}})
    assert status == 200 and answer["success"] is True, answer
    assert answer["data"]["landed"] is True and answer["data"]["text"] == expected, answer
    page.wait_for_function(
        "t => document.querySelector('.wg-game-status').textContent.includes(t)",
        arg=expected, timeout=SLOW)
    assert page.locator('.wg-line.playing').get_attribute("data-line") == "12"

    # Lines selected with click + shift-click become the viewer context.
    page.locator('.wg-line[data-line="9"] .wg-gutter').click()
    page.locator('.wg-line[data-line="10"] .wg-gutter').click(modifiers=["Shift"])
    context = page.evaluate("window.pneuma.ui.host.context()")
    assert context.startswith('<viewer-context mode="webgal" file="game/scene/station_en.txt" lines="9-10">')
    assert "10: Mio:The last train leaves at 7:20 today." in context

    # describe-view says what is on screen.
    status, answer = api(server, "/api/viewer/action?timeout=20",
                         {"actionId": "describe-view", "params": {}})
    assert answer["data"]["file"] == "game/scene/station_en.txt"
    assert answer["data"]["selection"] == {"file": "game/scene/station_en.txt", "lines": "9-10"}


def check_an_edit_on_disk_re_renders_the_script(server: Any, page: Any) -> None:
    path = server.workspace / "game/scene/station_en.txt"
    path.write_text(path.read_text().replace("Mio:Late again...;", "Mio:Late again, of course...;"))
    page.wait_for_function(
        "() => document.querySelector('.wg-line[data-line=\"13\"]').textContent.includes('of course')",
        timeout=10_000)


def test_the_viewer_works_and_a_script_in_the_engine_page_cannot_drive_the_server(
        pneuma_server: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("webgal", backend="none")
    ws = Path(server.workspace)
    page = open_page(server, viewport={"width": 1440, "height": 900})
    foreign = watch_requests(page.context, server.base, engine_site(server)[0])
    page.wait_for_selector(".wg-line", timeout=20_000)
    check_the_viewer_lists_scenes_shows_the_script_and_answers_actions(server, page)
    engine = find_engine_frame(page)

    out = engine.evaluate(ATTACK, {"server": server.base, "sid": server.session_id})

    assert sorted(p.name for p in ws.glob("pwned*")) == [], out
    # The engine is not on the server's origin.
    assert not engine.url.startswith(server.base + "/"), engine.url
    assert out["relative"] != "answered 200", out
    assert out["cors"] == "failed" and out["read"] == "failed", out
    assert out["socket"] != "open", out
    assert out["shell"] == "blocked" and out["bridge"] == "blocked", out
    # The refused socket sent nothing: no such message in the conversation.
    assert page.get_by_text("sent by the game").count() == 0

    # The preview still plays, and the shell still drives it: clicking a line
    # of the script jumps the game there (bridge.js -> postMessage). The
    # viewer checks above left station_en.txt open: start.txt first, so the
    # click on station_en.txt is what opens it.
    page.locator('.wg-scene[data-path="game/scene/start.txt"]').click()
    page.wait_for_selector('.wg-scene.active[data-path="game/scene/start.txt"]')
    page.locator('.wg-scene[data-path="game/scene/station_en.txt"]').click()
    page.wait_for_selector('.wg-scene.active[data-path="game/scene/station_en.txt"]')
    line = 10
    raw = (ws / "game/scene/station_en.txt").read_text(encoding="utf-8").split("\n")[line - 1]
    expected = raw.split(";")[0].split(":", 1)[1].strip()
    page.locator(f'.wg-line[data-line="{line}"] .wg-gutter').click()
    page.wait_for_function(
        "t => document.querySelector('.wg-game-status').textContent.includes(t)",
        arg=expected, timeout=SLOW)
    page.wait_for_function(
        f"() => (document.querySelector('.wg-line.playing') || {{}}).dataset?.line === '{line}'",
        timeout=SLOW)
    assert engine.evaluate("() => window.pneumaWebgal.state.line") == line
    # The viewer's own frame API (re-sync after an edit) is postMessage only.
    page.evaluate("() => document.querySelector('.wg-frame').contentWindow"
                  ".pneumaWebgal.jump('station_en.txt', 12)")
    engine.wait_for_function("() => window.pneumaWebgal.state.line === 12", timeout=SLOW)
    page.wait_for_function(
        "() => (document.querySelector('.wg-line.playing') || {}).dataset?.line === '12'",
        timeout=SLOW)
    shot(page, "webgal-isolation")

    check_an_edit_on_disk_re_renders_the_script(server, page)
    shot(page, "webgal-viewer")
    assert foreign == []
