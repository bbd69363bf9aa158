"""The webgal viewer draws Chinese with real glyphs, even on a machine with
no CJK system font (as the machine these tests run on: `fc-list :lang=zh`
is empty there).

The viewer's stylesheet lists the usual system CJK fonts first and then a
copy of Noto Sans SC that scripts/build-web places in the mode's static
folder (npm @fontsource/noto-sans-sc, cut into unicode-range slices, served
by the mode's own static route under the shell's policy). Whether a string
drew as glyphs or as empty boxes is told by drawing it on a canvas with the
element's own font: boxes ("tofu") all look alike, whatever the character,
and like the box of U+10FFFD, a code point no font has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.browser_helpers import GLYPH_RENDERING, assert_drawn_as_glyphs

REPO = Path(__file__).resolve().parents[2]
STATIC = REPO / "plugins" / "webgal" / "pneuma_webgal" / "static"
ENGINE = STATIC / "engine" / "index.html"

pytestmark = pytest.mark.skipif(
    not ENGINE.exists(), reason="the WebGAL engine is not set up (scripts/build-web)"
)

SCENE = "game/scene/station_zh.txt"
SAMPLE = "站台"  # on line 6 of the seed scene
# Text the viewer draws, each with its own font rule in viewer.css.
PARTS = (".wg-code", ".wg-scene-name", ".wg-list-title", ".wg-file-title", ".wg-game-status",
         ".wg-btn")  # fmt: skip


def test_the_viewer_draws_chinese_with_real_glyphs(pneuma_server: Any, open_page: Any,
                                                   shot: Any) -> None:
    server = pneuma_server("webgal", backend="none")
    fonts: list[tuple[str, int]] = []
    page = open_page(server, viewport={"width": 1440, "height": 900},
                     before_goto=lambda p: p.on(
                         "response", lambda r: fonts.append((r.url, r.status))
                         if r.url.endswith(".woff2") else None))  # fmt: skip
    page.wait_for_selector(".wg-line", timeout=20_000)

    # The user opens the Chinese scene from the list.
    page.locator(f'.wg-scene[data-path="{SCENE}"]').click()
    page.wait_for_selector(f'.wg-scene.active[data-path="{SCENE}"]')
    line = page.locator('.wg-line[data-line="6"] .wg-code')
    assert SAMPLE in line.inner_text()

    result = page.evaluate(GLYPH_RENDERING, {"selectors": list(PARTS), "sample": SAMPLE})
    shot(page, "webgal-cjk")
    assert_drawn_as_glyphs(result, PARTS, SAMPLE, where="the viewer")

    # Fonts came from the server itself, through the shell's policy, and only
    # the slices the scene needs (each a small part of the whole font).
    assert all(url.startswith(server.base + "/") and status == 200 for url, status in fonts), fonts
    slices = len(list((STATIC / "vendor" / "cjk-font" / "files").glob("*.woff2")))
    if fonts:  # none when the machine has a CJK system font, which comes first
        assert len(fonts) < slices, f"{len(fonts)} of {slices} slices fetched"
    assert not [e for e in page.console_errors if "Content Security Policy" in e], page.console_errors
