"""The shell draws its Chinese labels with real glyphs, even on a machine
with no CJK system font (as the machine these tests run on: `fc-list :lang=zh`
is empty there).

styles.css lists the usual system CJK fonts first and then Noto Sans SC,
which scripts/build-web places in pneuma/web/vendor/cjk-font/ (npm
@fontsource/noto-sans-sc, cut into unicode-range slices): the browser
fetches only the slices of the characters on screen. The check draws the
header's text on a canvas with the element's own font (GLYPH_RENDERING in
browser_helpers.py): empty boxes all look alike, real glyphs do not.

Native `title` tooltips are drawn by the browser's own UI with the system's
fonts, not the page's: this font cannot reach them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import GLYPH_RENDERING, assert_drawn_as_glyphs

REPO = Path(__file__).resolve().parents[2]
FONT = REPO / "pneuma" / "web" / "vendor" / "cjk-font"

pytestmark = pytest.mark.skipif(
    not (FONT / "noto-sans-sc.css").exists(), reason="the shell's CJK font is not set up (scripts/build-web)"
)

# The shell's own text in Chinese, each with a different font rule.
PARTS = (".topbar .mode-name", ".pill", ".lang-btn.current")


def test_the_chinese_shell_draws_real_glyphs(pneuma_server: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("draw", backend="none")
    fonts: list[tuple[str, int]] = []

    def record_fonts(page: Any) -> None:
        page.on("response", lambda r: fonts.append((r.url, r.status)) if "/cjk-font/" in r.url else None)

    page = open_page(server, locale="zh-CN", before_goto=record_fonts)
    header = page.locator(".topbar .mode-name")
    expect(header).to_have_text("绘图")

    result = page.evaluate(GLYPH_RENDERING, {"selectors": list(PARTS), "sample": "绘图"})
    shot(page, "shell-cjk-font-zh-CN")
    assert_drawn_as_glyphs(result, PARTS, "绘图", where="the shell")
    for selector in PARTS:
        assert "Pneuma Noto Sans SC" in result[selector]["family"], result[selector]["family"]

    # The slices came from this server, through its policy, and only some of them.
    assert all(url.startswith(server.base + "/static/vendor/cjk-font/") and status == 200
               for url, status in fonts), fonts
    slices = len(list((FONT / "files").glob("*.woff2")))
    woff2 = [url for url, _ in fonts if url.endswith(".woff2")]
    if woff2:  # none when the machine has a CJK system font, which comes first
        assert len(woff2) < slices / 2, f"{len(woff2)} of {slices} slices fetched"
    assert not [e for e in page.console_errors if "Content Security Policy" in e], page.console_errors


def test_an_english_page_fetches_only_the_slices_of_its_language_switch(
        pneuma_server: Any, open_page: Any) -> None:
    # The English page's one Chinese word is the switch's "中文": it draws
    # as glyphs too, and unicode-range keeps the download to its characters.
    server = pneuma_server("draw", backend="none")
    woff2: list[str] = []
    page = open_page(server, locale="en-US", before_goto=lambda p: p.on(
        "response", lambda r: woff2.append(r.url) if "/cjk-font/" in r.url and r.url.endswith(".woff2") else None))
    expect(page.locator(".topbar .mode-name")).to_have_text("Drawing")
    switch = ".lang-btn[data-locale='zh-CN']"
    expect(page.locator(switch)).to_have_text("中文")
    drawn = page.evaluate(GLYPH_RENDERING, {"selectors": [switch], "sample": "中文"})[switch]
    assert drawn["inked"] and drawn["differsFromTofu"] and drawn["charDiffersFromTofu"], drawn
    assert len(woff2) <= 2, woff2
