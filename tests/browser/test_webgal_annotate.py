"""Review pins on a WebGAL script line, and the viewer following the agent to
a scene (docs/viewer-contract.md, "Annotate, edit in place, follow the
agent"; docs/modes.md), in Debian's Chromium on one `pneuma run --mode
webgal` for the module: the person turns the shell's Annotate switch on,
clicks a line of the scene, writes a comment; the number shows in that
line's gutter and the pin's place is the line's text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.module_run import module_page, module_run, pins_loaded, stored_pins

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "plugins" / "webgal" / "pneuma_webgal" / "static" / "engine" / "index.html"
HOST = "window.pneuma.ui.host"
START = "game/scene/start.txt"
STATION = "game/scene/station_en.txt"

pytestmark = pytest.mark.skipif(not ENGINE.exists(), reason="the WebGAL engine is not set up (scripts/build-web)")


@pytest.fixture(scope="module")
def webgal(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    with module_run(tmp_path_factory.mktemp("webgal-annotate"), "webgal") as server:
        # The game's frame gets an empty page: the engine, busy drawing, is
        # not what these tests look at, and on a loaded machine it slows every click.
        def blank_game(page: Any) -> None:
            page.route(lambda url: urlsplit(url).path.startswith("/webgal/"),
                       lambda route: route.fulfill(body="", content_type="text/html"))  # fmt: skip

        with module_page(browser, server.url, viewport={"width": 1440, "height": 900},
                         before_goto=blank_game) as page:  # fmt: skip
            page.wait_for_selector(f'.wg-scene.active[data-path="{START}"]', timeout=20_000)
            page.wait_for_function(f"() => {HOST} && {HOST}.instance && {HOST}.instance.showPins")
            pins_loaded(page)
            yield server, page


def test_a_pin_on_a_script_line_shows_in_its_gutter(webgal: tuple[Any, Any]) -> None:
    server, page = webgal
    assert page.evaluate(f"() => {HOST}.module.capabilities") == ["annotate", "follow"]
    scene = server.workspace / START
    line3 = scene.read_text(encoding="utf-8").split("\n")[2]
    page.locator(".annotate-toggle").click()
    page.locator('.wg-line[data-line="3"] .wg-code').click()
    comment = page.locator(".pin-box textarea")
    comment.fill("Say it in one language")
    comment.press("Enter")
    marker = page.locator('.wg-line[data-line="3"] .wg-gutter .wg-pin')
    expect(marker).to_have_text("1")
    expect(page.locator(".wg-pin")).to_have_count(1)
    stored = stored_pins(server, 1, placed=False)
    assert [p["comment"] for p in stored] == ["Say it in one language"]
    selection = stored[0]["selection"]
    assert (selection["file"], selection["start"], selection["end"]) == (START, 3, 3)
    # the place the shell keeps for the pin: the line's text
    assert page.evaluate(f"(s) => {HOST}.instance.pinPlace(s)", selection) == line3

    # another scene shows no marker; the review list's pin brings the line back
    page.locator(f'.wg-scene[data-path="{STATION}"]').click()
    expect(page.locator(".wg-pin")).to_have_count(0)
    page.locator(".pin-body").click()
    expect(page.locator(f'.wg-scene.active[data-path="{START}"]')).to_have_count(1)
    expect(marker).to_have_text("1")
    expect(page.locator('.wg-line[data-line="3"]')).to_have_class("wg-line cursor")

    # the agent rewrites the line: the pin's place is the new text
    scene.write_text(scene.read_text(encoding="utf-8").replace(line3, "intro:A dusk at a country station;"),
                     encoding="utf-8")  # fmt: skip
    page.wait_for_function(f"(s) => {HOST}.instance.pinPlace(s) === 'intro:A dusk at a country station;'",
                           arg=selection)  # fmt: skip
    expect(marker).to_have_text("1")  # drawn again with the new script
    page.locator(".pin-remove").click()
    expect(page.locator(".wg-pin")).to_have_count(0)
    page.locator(".annotate-toggle").click()
    expect(page.locator(".annotate-toggle")).to_have_attribute("aria-checked", "false")
    # (the engine's own requests for optional files answer 404: not the viewer's errors)
    assert [e for e in page.console_errors if e.startswith("pageerror")] == []


def test_reveal_opens_the_scene(webgal: tuple[Any, Any]) -> None:
    _server, page = webgal
    assert page.evaluate(f"() => {HOST}.instance.reveal('{STATION}')") is True
    expect(page.locator(f'.wg-scene.active[data-path="{STATION}"]')).to_have_count(1)
    assert page.evaluate(f"() => {HOST}.instance.reveal('game/background/title.png')") is False
    assert page.evaluate(f"() => {HOST}.instance.reveal('start')") is True
    expect(page.locator(f'.wg-scene.active[data-path="{START}"]')).to_have_count(1)
