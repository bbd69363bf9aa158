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

# For each selector: the element's font at a size where glyphs differ
# plainly, then the pixels of the sample, of each of its characters, and of
# as many U+10FFFD (tofu for sure) drawn with it.
RENDERING = """async ({selectors, sample}) => {
  await document.fonts.ready;
  const canvas = document.createElement('canvas');
  canvas.width = 160; canvas.height = 64;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const draw = (font, text) => {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.font = font;
    ctx.fillStyle = '#000';
    ctx.fillText(text, 4, 48);
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let ink = 0;
    const alpha = [];
    for (let i = 3; i < data.length; i += 4) { alpha.push(data[i]); if (data[i]) ink += 1; }
    return {key: alpha.join(','), ink, width: ctx.measureText(text).width};
  };
  const tofu = String.fromCodePoint(0x10FFFD);
  const out = {};
  for (const selector of selectors) {
    const el = document.querySelector(selector);
    if (!el) { out[selector] = null; continue; }
    const cs = getComputedStyle(el);
    const font = `${cs.fontStyle} ${cs.fontWeight} 40px ${cs.fontFamily}`;
    // What the browser does for any text shown in this font: fetch the faces
    // (the slices) that cover it.
    await document.fonts.load(font, sample);
    const whole = draw(font, sample), boxes = draw(font, tofu.repeat([...sample].length));
    const chars = [...sample].map((ch) => draw(font, ch));
    out[selector] = {
      family: cs.fontFamily,
      checked: document.fonts.check(font, sample),
      inked: whole.ink > 0,
      differsFromTofu: whole.key !== boxes.key,
      charsDiffer: chars[0].key !== chars[1].key,
      charDiffersFromTofu: chars[0].key !== draw(font, tofu).key,
    };
  }
  return out;
}"""


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

    result = page.evaluate(RENDERING, {"selectors": list(PARTS), "sample": SAMPLE})
    shot(page, "webgal-cjk")
    for selector in PARTS:
        drawn = result[selector]
        assert drawn is not None, f"the viewer shows no {selector}"
        assert drawn["inked"], f"{selector}: {SAMPLE} draws nothing ({drawn['family']})"
        assert drawn["differsFromTofu"] and drawn["charsDiffer"] and drawn["charDiffersFromTofu"], (
            f"{selector}: {SAMPLE} draws as empty boxes with {drawn['family']} "
            "(no CJK font: run scripts/build-web for the viewer's own)"
        )
        assert drawn["checked"], f"{selector}: the fonts for {SAMPLE} are not loaded ({drawn['family']})"

    # Fonts came from the server itself, through the shell's policy, and only
    # the slices the scene needs (each a small part of the whole font).
    assert all(url.startswith(server.base + "/") and status == 200 for url, status in fonts), fonts
    slices = len(list((STATIC / "vendor" / "cjk-font" / "files").glob("*.woff2")))
    if fonts:  # none when the machine has a CJK system font, which comes first
        assert len(fonts) < slices, f"{len(fonts)} of {slices} slices fetched"
    assert not [e for e in page.console_errors if "Content Security Policy" in e], page.console_errors
