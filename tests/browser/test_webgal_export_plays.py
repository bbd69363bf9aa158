"""The webgal export's web build plays anywhere: `pneuma export --format web`
gives a zip; unpacked into a folder and served by Python's own static file
server (no Pneuma anywhere), it plays the game's first scene in Chromium,
every request the page makes going to that server alone.

The engine is the real npm webgal-engine 4.5.18 (scripts/build-web). Chromium
runs with --disable-gpu, so its 2560×1440 stage is drawn in software and is
slow: the waits are generous and the test boots one game only.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pneuma.host.registry import get_mode
from pneuma.workspace.params import init_workspace

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "plugins" / "webgal" / "pneuma_webgal" / "static" / "engine" / "index.html"
SLOW = 90_000  # ms: the software-rendered engine needs its time
FIRST_LINE = "The exported game plays its first line from a plain web server."

pytestmark = pytest.mark.skipif(
    not ENGINE.exists(), reason="the WebGAL engine is not set up (scripts/build-web)"
)


@pytest.fixture
def served_build(tmp_path: Path) -> Iterator[str]:
    """The seed game, its start.txt opening with a line of dialogue, exported
    as `web`, unpacked and served by `python -m http.server` on loopback."""
    from pneuma_webgal.export import EXPORTER

    workspace = tmp_path / "ws"
    init_workspace(get_mode("webgal"), workspace)
    (workspace / "game" / "scene" / "start.txt").write_text(
        f"changeBg:station_dusk.png -next;\nMio:{FIRST_LINE};\n:The second line.;\n", encoding="utf-8")
    result = EXPORTER.run(workspace, "web", tmp_path / "game.zip")
    site = tmp_path / "site"
    with zipfile.ZipFile(result.files[0]) as archive:
        archive.extractall(site)
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(site), "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        banner = server.stdout.readline() if server.stdout else ""  # "Serving HTTP on 127.0.0.1 port N (...)"
        port = int(banner.split(" port ")[1].split()[0])
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def shows_text(page: Any, text: str) -> None:
    """Wait until the engine's text box shows `text` typed out: it draws each
    word in layers and splits some, so the box's text (spaces dropped) must
    hold every character in order and end with the last word."""
    page.wait_for_function(
        """text => {
            const want = text.replace(/\\s+/g, '');
            return [...document.querySelectorAll('[class*="_TextBox_"]')].some((box) => {
                const seen = box.innerText.replace(/\\s+/g, '');
                let i = 0;
                for (const ch of want) {
                    i = seen.indexOf(ch, i);
                    if (i < 0) return false;
                    i += 1;
                }
                return seen.includes(want.slice(-6));
            });
        }""", arg=text, timeout=SLOW)


def test_the_unpacked_web_build_plays_its_first_scene_from_a_plain_static_server(
        served_build: str, browser: Any, shot: Any) -> None:  # fmt: skip
    # Service workers off: a request the engine's worker made would bypass
    # the routing below, which must see every request.
    context = browser.new_context(viewport={"width": 1280, "height": 720}, service_workers="block")
    foreign: list[str] = []

    def only_the_server(route: Any) -> None:
        if route.request.url.startswith(served_build + "/") or route.request.url.startswith("data:"):
            route.continue_()
        else:
            foreign.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_server)
    context.on("websocket", lambda ws: None if ws.url.startswith(served_build.replace("http", "ws", 1))
               else foreign.append(ws.url))
    try:
        page = context.new_page()
        page.goto(served_build + "/")
        # The engine's landing screen, its one-time language picker (a game
        # without Default_Language in config.txt asks each new player, as
        # any WebGAL web build does), then its title over the game's title.png.
        page.mouse.click(640, 360)
        page.wait_for_function("getComputedStyle(document.querySelector('.html-body__title-enter'))"
                               ".display === 'none'", timeout=SLOW)
        page.locator('[class*="_langSelectButton_"]', has_text="English").click(timeout=SLOW)
        page.locator('[class*="_Title_button_"]').first.click(timeout=SLOW)
        shows_text(page, FIRST_LINE)
        shot(page, "webgal-export-first-line")
        assert foreign == []
    finally:
        context.close()
