"""Workspace content cannot drive the agent (pneuma/server/csp.py).

A slide, an HTML page and an SVG in the workspace each carry a script that
tries what a hostile page would: write a file through ``POST /api/files``
with the user's cookie. The deck still renders in the slide viewer; opened
on their own (as a user clicking "open the raw file" would), the page and
the SVG run in an opaque origin and every call to the API is refused. The
shell itself runs only its own script files.
"""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

HOST = "window.pneuma.ui.host"
WEBGAL_GAME_BOOTED = ("() => { const f = document.querySelector('.wg-frame');"
                      " const w = f && f.contentWindow; const api = w && w.pneumaWebgal;"
                      " return !!(api && api.state.scene === 'start.txt'); }")

# The script records how its write went in the document title, so the test
# can tell "it ran and was refused" from "it never ran".
ATTACK = """
fetch('/api/files', {{method: 'POST', credentials: 'include',
  headers: {{'Content-Type': 'application/json'}},
  body: JSON.stringify({{path: '{target}', content: 'written by workspace content'}})}})
  .then((r) => {{ document.title = 'answered ' + r.status; }},
        (e) => {{ document.title = 'refused'; }});
"""

SLIDE = """<section class="slide slide--title">
  <h1>A deck with a script in it</h1>
  <img src="x-missing.png" alt="" onerror="fetch('/api/files', {{method: 'POST', headers: {{'Content-Type': 'application/json'}}, body: JSON.stringify({{path: 'pwned-onerror.txt', content: 'x'}})}})">
  <script>{attack}</script>
</section>
"""

PAGE = """<!doctype html><html><head><title>not run</title></head>
<body><h1>A page the agent fetched</h1><script>{attack}</script></body></html>
"""

SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">
<title>not run</title><circle cx="50" cy="50" r="40" fill="teal"/>
<script>{attack}</script></svg>
"""


@pytest.fixture
def hostile(pneuma_server: Any) -> Any:
    server = pneuma_server("slide", backend="none")
    ws = Path(server.workspace)
    (ws / "slides" / "01-title.html").write_text(
        SLIDE.format(attack=ATTACK.format(target="pwned-slide.txt")), encoding="utf-8")
    (ws / "fetched.html").write_text(PAGE.format(attack=ATTACK.format(target="pwned-page.txt")),
                                     encoding="utf-8")
    (ws / "drawing.svg").write_text(SVG.format(attack=ATTACK.format(target="pwned-svg.txt")),
                                    encoding="utf-8")
    return server


def written(ws: Path) -> list[str]:
    return sorted(p.name for p in ws.glob("pwned*"))


def test_scripts_in_workspace_content_cannot_call_the_api(hostile: Any, open_page: Any,
                                                          shot: Any) -> None:
    ws = Path(hostile.workspace)
    page = open_page(hostile, viewport={"width": 1500, "height": 900})
    page.wait_for_function(f"{HOST} && {HOST}.instance && {HOST}.module")
    # The deck renders, the hostile slide included, with its elements in place.
    page.wait_for_function("""() => {
        const d = document.querySelector('.pns-frame--stage').contentDocument;
        return d && d.querySelector('h1') && d.querySelector('h1').textContent.includes('script in it');
      }""", timeout=10_000)
    assert page.locator(".pns-counter").inner_text() == "1 / 8"
    shot(page, "content-isolation-deck")

    # Opened on their own, in the same browser (the session cookie is there).
    for name, title_when_run in (("fetched.html", "refused"), ("drawing.svg", "refused")):
        raw = page.context.new_page()
        response = raw.goto(f"{hostile.base}/content/{name}")
        assert response is not None and response.status == 200
        # The script runs (pages keep working) but its write is refused.
        raw.wait_for_function("() => /^(answered|refused)/.test(document.title)", timeout=10_000)
        assert (name, raw.title()) == (name, title_when_run)
        assert raw.evaluate("() => self.origin") == "null"
        policy = response.headers.get("content-security-policy", "")
        assert policy.startswith("sandbox") and "allow-same-origin" not in policy
        raw.close()

    time.sleep(1.0)  # a late write would land by now
    assert written(ws) == []


def test_the_shell_runs_only_its_own_script_files(pneuma_server: Any, open_page: Any) -> None:
    server = pneuma_server("slide", backend="none")
    with urllib.request.urlopen(server.url, timeout=10) as answer:
        policy = answer.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy.split("script-src", 1)[1].split(";", 1)[0]
    page = open_page(server)
    page.wait_for_function(f"{HOST} && {HOST}.instance && {HOST}.module")
    # Markup that reaches the shell's DOM (a preview, a message) cannot run.
    page.evaluate("""() => {
        const box = document.createElement('div');
        box.innerHTML = '<img src="nope.png" onerror="window.__ranHandler = true">';
        document.body.append(box);
        const s = document.createElement('script');
        s.textContent = 'window.__ranInline = true';
        document.body.append(s);
      }""")
    time.sleep(0.5)
    assert page.evaluate("() => [window.__ranHandler === true, window.__ranInline === true]") == [
        False, False]
    # The shell and the deck work under the policy: the only complaints are
    # the two refusals above (and the missing picture).
    assert page.locator('.pill[data-state="open"]').count() == 1
    refusals = [e for e in page.console_errors if "violates the following Content Security Policy" in e]
    others = [e for e in page.console_errors
              if e not in refusals and "404 (Not Found)" not in e and "favicon" not in e]
    assert len(refusals) == 2 and others == [], page.console_errors


@pytest.mark.parametrize("mode", ["slide", "doc", "draw", "coauthor", "webgal", "diagram", "webcraft"])
def test_every_viewer_works_under_the_shell_policy(mode: str, pneuma_server: Any,
                                                   open_page: Any) -> None:
    """The policy refuses nothing the shipped viewers (and their vendored
    libraries: Excalidraw, markdown-it, highlight.js, the WebGAL engine) do."""
    server = pneuma_server(mode, backend="none")
    page = open_page(server, viewport={"width": 1400, "height": 860})
    page.wait_for_function(f"{HOST} && {HOST}.instance && {HOST}.module", timeout=20_000)
    # Late work, waited for rather than slept through: the game booted in
    # the engine's frame, every font and picture fetched, the fonts in use.
    if mode == "webgal":
        page.wait_for_function(WEBGAL_GAME_BOOTED, timeout=90_000)
    page.wait_for_load_state("networkidle")
    page.evaluate("() => document.fonts.ready.then(() => true)")
    refused = [e for e in page.console_errors
               if "Content Security Policy" in e or "unsafe-eval" in e or "sandboxed" in e]
    assert refused == []


def _settled_webcraft_frame(page: Any, name: str) -> Any:
    """The frame showing ``name`` once its attack has run (its title says
    how it ended). Looked up again each try: on a busy machine a reload may
    swap the frame for a new one between the lookup and the question."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        handle = page.locator("iframe.webcraft-frame[data-viewport='desktop']").element_handle()
        inner = handle.content_frame() if handle else None
        try:
            if inner is not None and inner.url.split("?")[0].endswith("/" + name) \
                    and inner.title().startswith(("answered", "refused")):
                return inner
        except Exception:  # detached mid-question: ask the new one
            pass
        time.sleep(0.1)
    raise AssertionError(f"the preview never showed {name} with its attack done")


def test_a_webcraft_page_runs_on_its_own_origin_and_cannot_write(pneuma_server: Any,
                                                                 open_page: Any) -> None:
    """The webcraft preview frames the page from the mode's content site
    (pneuma.api.ContentSite): another origin, so its scripts' writes to the
    Pneuma server are refused (the Origin check), and to its own site too
    (read-only)."""
    server = pneuma_server("webcraft", backend="none")
    ws = Path(server.workspace)
    attack = ATTACK.replace("'/api/files'", "'{url}/api/files'")
    (ws / "index.html").write_text(PAGE.format(attack=attack.format(
        url=server.base, target="pwned-webcraft.txt")), encoding="utf-8")
    (ws / "local.html").write_text(PAGE.format(attack=ATTACK.format(target="pwned-local.txt")),
                                   encoding="utf-8")
    page = open_page(server)
    for name, title in (("index.html", "refused"), ("local.html", "answered 403")):
        page.click(f'.webcraft-tab[data-page="{name}"]')
        inner = _settled_webcraft_frame(page, name)
        assert (name, inner.title()) == (name, title)
        origin = inner.evaluate("() => self.origin")
        assert origin.startswith("http://127.0.0.1:") and origin != server.base
    time.sleep(1.0)
    assert written(ws) == []
