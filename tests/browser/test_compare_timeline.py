""""Compare" on a turn and the timeline under the viewer, in Chromium against
`pneuma run --mode slide` with the fake CLI (issue 28, item 3): the slide
viewer draws the deck before the turn beside the deck after it, both from
the checkpoint store, on the slide the turn changed; the two sides' pixels
differ on that slide and nowhere else; nothing is written and the live
viewer stays where it was. The timeline shows the deck as it was at a
checkpoint, read-only, and "Restore this" rewinds to it after the same
confirmation as "Rewind to here"."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send

TURN = 15_000  # ms a fake CLI turn may take in the page
SHOTS = Path("/tmp/pneuma-screenshots")
CHANGED = "slides/03-point.html"
NEW_SLIDE = ('<section class="slide" style="background:#c0262d;color:#fff">'
             '<h2>A louder point</h2><p>Rewritten by the agent.</p></section>')


def differing_share(first: bytes, second: bytes) -> float:
    """The share of pixels that differ between two screenshots of one size."""
    from PIL import Image, ImageChops  # noqa: PLC0415 - only this test compares pixels

    a = Image.open(io.BytesIO(first)).convert("RGB")
    b = Image.open(io.BytesIO(second)).convert("RGB")
    assert a.size == b.size, (a.size, b.size)
    mask = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v > 24 else 0)
    return mask.histogram()[255] / (a.size[0] * a.size[1])


def side(page: Any, name: str) -> Any:
    return page.locator(f'.compare-side[data-side="{name}"]')


def stage_text(page: Any, scope: str) -> str:
    """The text of the slide on the stage of the viewer under ``scope``."""
    return page.locator(scope).locator(".pns-frame--stage").evaluate(
        "(frame) => frame.contentDocument.body.innerText")


def workspace_state(workspace: Path) -> dict[str, tuple[int, bytes]]:
    return {p.relative_to(workspace).as_posix(): (p.stat().st_mtime_ns, p.read_bytes())
            for p in workspace.rglob("*") if p.is_file() and ".pneuma" not in p.parts}


def test_compare_shows_the_changed_slide_before_and_after_and_the_timeline_restores(
        pneuma_server, fake_claude, open_page):
    SHOTS.mkdir(parents=True, exist_ok=True)
    server = pneuma_server("slide", claude_bin=fake_claude.bin)
    page = open_page(server)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting
    original = (server.workspace / CHANGED).read_text()

    send(page, f"write {CHANGED} {NEW_SLIDE}")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle", timeout=TURN)
    row = page.locator('.turn-changes[data-ref="1"]')
    expect(row.locator(".changes-chip")).to_be_visible(timeout=TURN)

    # The live viewer on slide 1: where it must still be after comparing.
    page.locator(".viewer-root .pns-thumb").first.click()
    expect(page.locator(".viewer-root .pns-counter")).to_have_text("1 / 8")
    live_position = page.evaluate("() => JSON.stringify(sessionStorage)")
    before_compare = workspace_state(server.workspace)

    row.locator(".compare-btn").click()
    panel = page.locator(".compare-panel")
    expect(panel).to_have_attribute("data-ready", "true", timeout=TURN)
    expect(side(page, "before").locator(".compare-viewer")).to_have_attribute("data-state", "ready")
    expect(side(page, "after").locator(".compare-viewer")).to_have_attribute("data-state", "ready")
    # Both sides on the slide the turn changed, each drawn from its own state.
    assert panel.get_attribute("data-file") == CHANGED
    expect(side(page, "before").locator(".pns-counter")).to_have_text("3 / 8")
    expect(side(page, "after").locator(".pns-counter")).to_have_text("3 / 8")
    assert "Point at it" in stage_text(page, '.compare-side[data-side="before"]')
    assert "A louder point" in stage_text(page, '.compare-side[data-side="after"]')
    page.screenshot(path=str(SHOTS / "compare-1-side-by-side.png"))

    # The pixels differ on the changed slide, and not on a slide the turn left alone.
    changed = [side(page, n).locator(".pns-stage-box").screenshot(path=str(SHOTS / f"compare-stage-{n}.png"))
               for n in ("before", "after")]
    assert differing_share(*changed) > 0.3
    alone = [side(page, n).locator(".pns-thumb").nth(0).locator("iframe").screenshot() for n in ("before", "after")]
    assert differing_share(*alone) < 0.01

    # Read-only: an edit in place on a side is refused, nothing reaches the disk.
    heading = side(page, "after").frame_locator(".pns-frame--stage").locator("h2")
    heading.dblclick()
    page.keyboard.type(" EDITED")
    page.keyboard.press("Enter")
    expect(side(page, "after").locator(".pns-notice")).to_be_visible()
    assert "EDITED" not in (server.workspace / CHANGED).read_text()

    # Moving through one side moves the other with it.
    side(page, "before").locator(".pns-thumb").nth(1).click()
    expect(side(page, "after").locator(".pns-counter")).to_have_text("2 / 8")

    # The slider lays the after side over the before side.
    panel.locator('.compare-layout[data-layout="over"]').click()
    expect(panel.locator(".compare-stage")).to_have_attribute("data-layout", "over")
    expect(panel.locator(".compare-slider")).to_be_visible()
    page.screenshot(path=str(SHOTS / "compare-2-slider.png"))

    # In Chinese, the panel's words follow the switch.
    page.locator(".lang-btn[data-locale='zh-CN']").click()
    expect(panel.locator(".compare-title")).to_have_text("对比第 1 轮")
    expect(side(page, "before").locator(".compare-side-label")).to_have_text("第 1 轮之前")
    page.locator(".lang-btn[data-locale='en']").click()
    expect(panel.locator(".compare-close")).to_have_text("Close")

    # Escape closes; nothing was written, the live viewer did not move.
    page.keyboard.press("Escape")
    expect(panel).to_have_count(0)
    expect(page.locator(".viewer-root .pns-counter")).to_have_text("1 / 8")
    assert page.evaluate("() => JSON.stringify(sessionStorage)") == live_position
    assert workspace_state(server.workspace) == before_compare

    # The timeline: the deck before turn 1, read-only, then restored.
    timeline = page.locator(".timeline")
    timeline.locator('.timeline-tick[data-ref="1"]').click()
    view = page.locator(".timeline-view")
    expect(view).to_have_attribute("data-ready", "true", timeout=TURN)
    view.locator(".pns-thumb").nth(2).click()
    expect(view.locator(".pns-counter")).to_have_text("3 / 8")
    assert "Point at it" in stage_text(page, ".timeline-view")
    expect(timeline.locator(".timeline-status")).to_have_text("Before turn 1")
    page.screenshot(path=str(SHOTS / "timeline-1-before-turn-1.png"))
    timeline.locator(".timeline-now").click()
    expect(view).to_have_count(0)
    assert workspace_state(server.workspace) == before_compare

    timeline.locator('.timeline-tick[data-ref="1"]').click()
    expect(view).to_have_attribute("data-ready", "true", timeout=TURN)
    timeline.locator(".timeline-restore").click()
    dialog = page.locator(".rewind-dialog")
    expect(dialog.locator(".detail-write")).to_contain_text(CHANGED, timeout=TURN)
    dialog.locator(".rewind-confirm").click()
    expect(page.locator('.rewind-note[data-target="1"]')).to_be_visible(timeout=TURN)
    assert (server.workspace / CHANGED).read_text() == original
    expect(view).to_have_count(0)  # back to now, which is the restored deck
    expect(timeline.locator('.timeline-tick[data-ref="u1"]')).to_have_count(1, timeout=TURN)
    assert page.console_errors == []
