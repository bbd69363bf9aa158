""""Compare" and the timeline of a webcraft site show the checkpoint's pages,
not the live site (issue 28, item 3's last gap), in Chromium against
`pneuma run --mode webcraft` with the fake CLI: a turn rewrites the home
page, the person then edits it by hand; each side's frames show that side's
page, served by the content site under /__pneuma__/snapshot/ (on the site's
own origin, as the live pages are), and no "live site" note is shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send

TURN = 15_000  # ms a fake CLI turn may take in the page
SHOTS = Path("/tmp/pneuma-screenshots")
PAGE = "index.html"
TURN_PAGE = ('<!doctype html><html><head><title>Turned</title><link rel="stylesheet" href="css/style.css">'
             '</head><body><h1>Written by the turn</h1></body></html>')


def heading(page: Any, scope: str) -> Any:
    """The h1 of the page shown in the (cross-origin) frame under ``scope``."""
    return page.frame_locator(f"{scope} iframe.webcraft-frame").first.locator("h1")


def test_compare_and_the_timeline_show_the_checkpoints_pages(pneuma_server: Any, fake_claude: Any,
                                                            open_page: Any) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    server = pneuma_server("webcraft", claude_bin=fake_claude.bin)
    page = open_page(server)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting
    original_heading = "Notes that think with you."

    send(page, f"write {PAGE} {TURN_PAGE}")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    row = page.locator('.turn-changes[data-ref="1"]')
    expect(row.locator(".compare-btn")).to_be_visible(timeout=TURN)
    # After the turn the person edits the page by hand: the live site shows that.
    (server.workspace / PAGE).write_text(TURN_PAGE.replace("Written by the turn", "Edited by hand"))
    expect(heading(page, ".viewer-root")).to_have_text("Edited by hand", timeout=TURN)

    row.locator(".compare-btn").click()
    panel = page.locator(".compare-panel")
    expect(panel).to_have_attribute("data-ready", "true", timeout=TURN)
    before, after = '.compare-side[data-side="before"]', '.compare-side[data-side="after"]'
    expect(heading(page, before)).to_have_text(original_heading, timeout=TURN)
    expect(heading(page, after)).to_have_text("Written by the turn", timeout=TURN)
    for scope in (before, after):
        src = page.locator(f"{scope} iframe.webcraft-frame").first.get_attribute("src") or ""
        assert "/__pneuma__/snapshot/1/" in src and not src.startswith(server.base), src
        expect(page.locator(f"{scope} .compare-viewer")).not_to_have_attribute("data-live-site", "true")
    expect(page.locator(".compare-live-site")).to_have_count(0)
    page.screenshot(path=str(SHOTS / "compare-webcraft.png"))
    page.keyboard.press("Escape")
    expect(panel).to_have_count(0)

    # The timeline's point before turn 1: the page as the turn found it.
    page.locator('.timeline .timeline-tick[data-ref="1"]').click()
    view = page.locator(".timeline-view")
    expect(view).to_have_attribute("data-ready", "true", timeout=TURN)
    expect(heading(page, ".timeline-view")).to_have_text(original_heading, timeout=TURN)
    expect(page.locator(".compare-live-site")).to_have_count(0)
    assert (server.workspace / PAGE).read_text().count("Edited by hand") == 1  # nothing restored
    assert page.console_errors == []
