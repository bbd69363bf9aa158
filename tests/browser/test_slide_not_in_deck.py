"""Issue 16 item 5 in the slide viewer (plugins/slide/pneuma_slide/static/viewer.js):
a slide file the agent wrote but did not list in manifest.json is shown to
the person as "not in the deck", with one click to add it; the viewer keeps
its position across a reload; the selection chip and the slide's caption
follow a slide's renamed title.

Real `pneuma run --mode slide --backend none` on the seed deck and Debian's
Chromium (tests/browser/conftest.py). Files are written on disk as the agent
writes them; what the person sees is read from the page.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

HOST = "window.pneuma.ui.host"
EXTRA = "slides/09-extra.html"
EXTRA_HTML = ('<section class="slide"><header class="stack"><p class="eyebrow">Appendix</p>'
              "<h1>Questions we often hear</h1></header></section>\n")


def open_deck(open_page: Any, server: Any, locale: str | None = None, **kwargs: Any) -> Any:
    page = open_page(server, viewport={"width": 1500, "height": 900}, locale=locale, **kwargs)
    wait_deck(page, 8)
    return page


def wait_deck(page: Any, count: int) -> None:
    page.wait_for_function(f"window.pneuma && window.pneuma.ui && {HOST} && {HOST}.instance && {HOST}.module")
    page.wait_for_function(
        """(n) => {
          const frames = Array.from(document.querySelectorAll('.pns-frame--thumb, .pns-frame--stage'));
          return frames.length === n + 1 && frames.every((f) => f.contentDocument
            && f.contentDocument.querySelector('section.slide'));
        }""", arg=count, timeout=10_000)


def manifest(workspace: Path) -> dict[str, Any]:
    return json.loads((workspace / "manifest.json").read_text())


def wait_for(predicate: Any, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert predicate()


def stage_heading(page: Any) -> str:
    return page.evaluate("""() => (document.querySelector('.pns-frame--stage').contentDocument
        .querySelector('h1, .statement') || {}).textContent || ''""").strip()


def look(page: Any, shot: Any, name: str) -> None:
    """A screenshot once the page's fonts have loaded (the CJK web font comes in slices, on demand)."""
    page.evaluate("() => document.fonts.ready.then(() => true)")
    shot(page, name)


def no_errors(page: Any) -> None:
    assert [e for e in page.console_errors if "favicon" not in e] == []


def test_a_slide_missing_from_the_manifest_is_shown_and_added_in_one_click(
        pneuma_server: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("slide", backend="none")
    ws = Path(server.workspace)
    page = open_deck(open_page, server)
    group = page.locator(".pns-extra")
    expect(group).to_be_hidden()  # the seed deck lists every slide file

    before = (ws / "manifest.json").read_text()
    (ws / EXTRA).write_text(EXTRA_HTML)  # the agent forgot manifest.json
    item = page.locator(f'.pns-extra-item[data-file="{EXTRA}"]')
    expect(item).to_be_visible(timeout=3000)
    expect(group.locator(".pns-extra-heading")).to_have_text("Not in the deck")
    expect(item.locator(".pns-extra-title")).to_have_text("Questions we often hear")
    expect(item.locator(".pns-extra-file")).to_have_text(EXTRA)
    # Its thumbnail is the slide itself, rendered like the deck's.
    page.wait_for_function("""() => { const f = document.querySelector('.pns-frame--extra');
        return f && f.contentDocument && f.contentDocument.querySelector('h1'); }""")
    assert page.locator(".pns-thumb").count() == 8
    assert page.locator(".pns-counter").inner_text() == "1 / 8"
    item.scroll_into_view_if_needed()
    look(page, shot, "slide-not-in-deck")
    # The agent hears about it too.
    view = page.evaluate(f"{HOST}.instance.describeView()")
    assert view["data"]["notInDeck"] == [EXTRA] and EXTRA in view["message"]

    item.get_by_role("button", name="Add to deck").click()
    # On disk: appended, in the manifest's own layout, the rest untouched.
    wait_for(lambda: [s["file"] for s in manifest(ws)["slides"]][-1:] == [EXTRA])
    after = (ws / "manifest.json").read_text()
    assert manifest(ws)["slides"][-1] == {"file": EXTRA, "title": "Questions we often hear"}
    lines = before.splitlines()  # "{", title, "slides": [, 8 entries, ], }
    added = f'    {{"file": "{EXTRA}", "title": "Questions we often hear"}}'
    assert after.splitlines() == [*lines[:10], lines[10] + ",", added, *lines[11:]]
    # In the deck, last, and on screen; the group is gone.
    wait_deck(page, 9)
    expect(page.locator(".pns-counter")).to_have_text("9 / 9")
    expect(page.locator(".pns-thumb-title").last).to_have_text("Questions we often hear")
    expect(group).to_be_hidden()
    assert stage_heading(page) == "Questions we often hear"
    assert page.evaluate(f"{HOST}.activeFile") == EXTRA
    expect(page.locator(".pns-notice")).to_contain_text("Questions we often hear")
    look(page, shot, "slide-added-to-deck")
    no_errors(page)


def test_adding_keeps_what_the_agent_wrote_meanwhile_and_refuses_a_broken_manifest(
        pneuma_server: Any, open_page: Any) -> None:
    server = pneuma_server("slide", backend="none")
    ws = Path(server.workspace)
    page = open_deck(open_page, server)
    (ws / EXTRA).write_text(EXTRA_HTML)
    item = page.locator(f'.pns-extra-item[data-file="{EXTRA}"]')
    expect(item).to_be_visible(timeout=3000)

    # A broken manifest: the click changes nothing on disk and says why.
    broken = (ws / "manifest.json").read_text().replace('"slides": [', '"slides": [[', 1)
    (ws / "manifest.json").write_text(broken)
    expect(page.locator(".pns-banner")).to_contain_text("manifest.json is not valid JSON", timeout=3000)
    item.get_by_role("button", name="Add to deck").click()
    expect(page.locator(".pns-notice")).to_contain_text("Cannot add to the deck")
    time.sleep(0.3)
    assert (ws / "manifest.json").read_text() == broken

    # The agent repairs it and retitles the deck; the add keeps that edit.
    data = json.loads(broken.replace('"slides": [[', '"slides": [', 1))
    data["title"] = "Retitled by the agent"
    (ws / "manifest.json").write_text(json.dumps(data, indent=2))
    expect(page.locator(".pns-banner")).to_be_hidden(timeout=3000)
    item.get_by_role("button", name="Add to deck").click()
    wait_for(lambda: manifest(ws)["slides"][-1]["file"] == EXTRA)
    assert manifest(ws)["title"] == "Retitled by the agent"
    assert len(manifest(ws)["slides"]) == 9
    no_errors(page)


def test_a_reload_keeps_the_slide_on_screen_and_the_outline_scroll(
        pneuma_server: Any, open_page: Any) -> None:
    server = pneuma_server("slide", backend="none")
    page = open_page(server, viewport={"width": 1400, "height": 620})
    wait_deck(page, 8)
    page.locator('.pns-thumb[data-index="5"]').click()
    expect(page.locator(".pns-counter")).to_have_text("6 / 8")
    page.evaluate("() => { document.querySelector('.pns-nav').scrollTop = 400; }")
    time.sleep(0.4)  # the scroll position is saved a moment after scrolling stops
    scrolled = page.evaluate("() => document.querySelector('.pns-nav').scrollTop")
    assert scrolled > 300

    page.reload()
    wait_deck(page, 8)
    expect(page.locator(".pns-counter")).to_have_text("6 / 8")
    assert stage_heading(page) == "Seven modes, one protocol"
    assert page.evaluate(f"{HOST}.activeFile") == "slides/06-modes.html"
    page.wait_for_function("(y) => Math.abs(document.querySelector('.pns-nav').scrollTop - y) <= 2", arg=scrolled)

    # The grid view is kept too, and the slide, by file, after a reorder on disk.
    page.get_by_role("button", name="All slides in a grid").click()
    data = manifest(Path(server.workspace))
    data["slides"].reverse()
    (Path(server.workspace) / "manifest.json").write_text(json.dumps(data, indent=2))
    expect(page.locator(".pns-counter")).to_have_text("3 / 8", timeout=3000)
    page.reload()
    page.wait_for_function(f"window.pneuma && window.pneuma.ui && {HOST} && {HOST}.instance")
    expect(page.locator(".pns-grid")).to_be_visible()
    expect(page.locator(".pns-counter")).to_have_text("3 / 8")
    assert page.evaluate(f"{HOST}.activeFile") == "slides/06-modes.html"
    no_errors(page)


def test_the_chip_and_the_caption_follow_a_renamed_title(pneuma_server: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("slide", backend="none")
    ws = Path(server.workspace)
    page = open_deck(open_page, server)
    page.locator('.pns-thumb[data-index="2"]').click()
    chip = page.locator(".ctx-row .ctx-chip")
    expect(chip).to_contain_text("Slide 3 · Point at it. Don't describe it.")
    expect(page.locator(".pns-caption-title")).to_have_text("Point at it. Don't describe it.")

    # The agent renames the slide (its manifest title) and moves it first.
    data = manifest(ws)
    entry = data["slides"].pop(2)
    entry["title"] = "Point, don't describe"
    data["slides"].insert(0, entry)
    (ws / "manifest.json").write_text(json.dumps(data, indent=2))
    expect(chip).to_contain_text("Slide 1 · Point, don't describe", timeout=3000)
    expect(page.locator(".pns-caption-title")).to_have_text("Point, don't describe")
    expect(page.locator(".pns-caption-num")).to_have_text("Slide 1 of 8")
    expect(page.locator(".pns-thumb-title").first).to_have_text("Point, don't describe")
    assert page.evaluate(f"{HOST}.selection.title") == "Point, don't describe"
    assert 'Slide 1 of 8: "Point, don\'t describe"' in page.evaluate(f"{HOST}.context()")
    look(page, shot, "slide-renamed-title")

    # With an element selected the chip names the element, and the context the new title.
    page.frame_locator(".pns-frame--stage").locator("p.lead").click()
    expect(chip).to_contain_text("Slide 1 · p.lead")
    entry["title"] = "Show it"
    (ws / "manifest.json").write_text(json.dumps(data, indent=2))
    expect(page.locator(".pns-caption-title")).to_have_text("Show it", timeout=3000)
    page.wait_for_function(f"() => {HOST}.selection.title === 'Show it'")
    context = page.evaluate(f"{HOST}.context()")
    assert 'Slide 1 of 8: "Show it"' in context and "Selector: section.slide > p.lead" in context
    no_errors(page)


def test_not_in_the_deck_in_chinese(pneuma_server: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("slide", backend="none")
    ws = Path(server.workspace)
    (ws / EXTRA).write_text(EXTRA_HTML)
    page = open_page(server, viewport={"width": 1500, "height": 900}, locale="zh-CN")
    page.wait_for_function(f"window.pneuma && window.pneuma.ui && {HOST} && {HOST}.instance")
    item = page.locator(f'.pns-extra-item[data-file="{EXTRA}"]')
    expect(page.locator(".pns-extra-heading")).to_have_text("未加入演示文稿")
    expect(item.get_by_role("button", name="加入演示文稿")).to_be_visible()
    item.scroll_into_view_if_needed()
    look(page, shot, "slide-not-in-deck-zh-CN")
    item.get_by_role("button", name="加入演示文稿").click()
    expect(page.locator(".pns-notice")).to_have_text("已将“Questions we often hear”加入演示文稿，作为第 9 页。")
    expect(page.locator(".ctx-row .ctx-chip")).to_contain_text("第 9 页 · Questions we often hear")
    expect(page.locator(".pns-caption-num")).to_have_text("第 9 页，共 9 页")
    no_errors(page)
