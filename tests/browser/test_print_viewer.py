"""The print mode's viewer (plugins/print/pneuma_print/static/viewer.js) in
the real shell, in Debian's Chromium: one `pneuma run --mode print` on the
seeded A4 report serves the whole module. What the person sees is read from
the page, viewer actions are asked over HTTP as the agent asks them, files
are changed on disk as the agent changes them, and edits made in the page
are read back from the disk.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from pneuma.testing import call_tool
from tests.browser.browser_helpers import (
    GLYPH_RENDERING,
    assert_drawn_as_glyphs,
    viewer_answer,
)
from tests.browser.module_run import module_page, module_run, pins_loaded, stored_pins

REPO = Path(__file__).resolve().parents[2]
CJK_FONT = REPO / "pneuma" / "web" / "vendor" / "cjk-font" / "noto-sans-sc.css"
HOST = "window.pneuma.ui.host"
A4 = (210.0, 297.0)


@pytest.fixture(scope="module")
def printed(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    with module_run(tmp_path_factory.mktemp("print-viewer"), "print") as server:
        with module_page(browser, server.url, viewport={"width": 1300, "height": 900}) as page:
            page.wait_for_function(f"() => {HOST} && {HOST}.instance && {HOST}.instance.sheets.length === 3"
                                   " && {HOST}.instance.sheets.every((s) => s.fit)".replace("{HOST}", HOST))
            yield server, page


def frame_of(page: Any, number: int) -> Any:
    return page.frame_locator(f".pnp-sheet[data-page='{number}'] iframe")


def test_pages_are_drawn_at_the_papers_aspect_with_their_numbers(printed: tuple[Any, Any], shot: Any) -> None:
    server, page = printed
    sheets = page.locator(".pnp-sheet .pnp-paper")
    expect(sheets).to_have_count(3)
    for i in range(3):
        box = sheets.nth(i).bounding_box()
        assert abs(box["height"] / box["width"] - A4[1] / A4[0]) < 0.01, box
    # the numbers as the export prints them: the cover has none, then 2 and 3
    numbers = page.eval_on_selector_all(".pnp-number", "els => els.map((e) => e.textContent)")
    assert numbers == ["", "2", "3"]
    expect(page.locator(".pnp-paper-label")).to_have_text("A4")
    # the page in view is the context of the person's next message
    expect(page.locator(".composer .ctx-text, .ctx-chip .ctx-text").first).to_have_text("Page 1 · Cover")
    expect(frame_of(page, 2).locator("h1")).to_have_text("The year in numbers")
    expect(page.locator(".pnp-sheet.is-overflowing")).to_have_count(0)
    shot(page, "print-seed")
    assert page.console_errors == []


def test_a_page_made_too_long_is_flagged_and_reported_to_the_agent(printed: tuple[Any, Any], shot: Any) -> None:
    server, page = printed
    path = server.workspace / "pages" / "02-the-year.html"
    original = path.read_text(encoding="utf-8")
    filler = "<p>Another paragraph the page has no room for, written to push the content past its box.</p>\n" * 30
    path.write_text(original + filler, encoding="utf-8")
    try:
        flag = page.locator(".pnp-sheet[data-page='2'] .pnp-flag")
        expect(flag).to_be_visible(timeout=10_000)
        text = flag.inner_text()
        assert text.startswith("Overflows by ") and text.endswith(" mm"), text
        mm = float(text.split()[2])
        assert mm > 20, text
        expect(page.locator(".pnp-item[data-page='2']")).to_have_class("pnp-item is-overflowing")
        shot(page, "print-overflow")
        report = viewer_answer(server, "check-overflow")
        assert report["success"] and report["data"]["overflowing"] == [2], report
        facts = viewer_answer(server, "get-page", {"page": 2})["data"]
        assert facts["overflows"] and abs(facts["overflow_mm"]["bottom"] - mm) < 0.15 and facts["fill_percent"] > 100
        assert "Another paragraph" in facts["text"] and {"level": 2, "text": "Harvest by bed group"} in facts["headings"]
        # The page_report tool (the export's layout, headless) measures the same page the same
        headless = call_tool("print", server.workspace, "page_report", {"pages": [2]})["pages"][0]
        assert headless["overflows"] and abs(headless["overflow_mm"]["bottom"] - facts["overflow_mm"]["bottom"]) < 0.5
    finally:
        path.write_text(original, encoding="utf-8")
    expect(page.locator(".pnp-sheet[data-page='2'] .pnp-flag")).to_be_hidden(timeout=10_000)
    assert viewer_answer(server, "check-overflow")["data"]["overflowing"] == []


def test_a_click_points_at_an_element_for_the_agent(printed: tuple[Any, Any]) -> None:
    server, page = printed
    frame_of(page, 2).locator("table.data tbody tr:nth-child(2) td").first.click()
    selection = page.evaluate(f"() => {{ const s = {HOST}.instance.selection; return {{page: s.page, file: s.file, ...s.info}}; }}")
    assert selection["page"] == 2 and selection["file"] == "pages/02-the-year.html"
    assert selection["text"] == "River edge" and selection["tag"] == "td"
    context = page.evaluate(f"(s) => {HOST}.module.extractContext(s, {HOST}.instance.ctx.files)",
                            {"file": selection["file"], "page": 2, "tag": "td", "selector": selection["selector"],
                             "text": selection["text"], "classes": []})
    assert context.startswith('<viewer-context mode="print" file="pages/02-the-year.html" page="2">')
    assert 'Page 2 of 3: "The year in numbers" (A4)' in context and '<td> "River edge"' in context
    # the selector finds the element in the page as the file holds it
    assert frame_of(page, 2).locator(selection["selector"]).inner_text() == "River edge"
    view = viewer_answer(server, "describe-view")["data"]
    assert view["selection"]["text"] == "River edge" and view["paper"] == "A4"
    frame_of(page, 2).locator("table.data tbody tr:nth-child(2) td").first.click()  # a second click lets go
    assert page.evaluate(f"() => {HOST}.instance.selection") is None


def on_disk(path: Path, expected: str) -> str:
    deadline = time.monotonic() + 10
    while path.read_text(encoding="utf-8") != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return path.read_text(encoding="utf-8")


def test_text_edited_in_place_changes_only_those_bytes_on_disk(printed: tuple[Any, Any]) -> None:
    server, page = printed
    path = server.workspace / "pages" / "02-the-year.html"
    before = path.read_text(encoding="utf-8")
    heading = frame_of(page, 2).locator("h2").nth(1)
    expect(heading).to_have_text("Volunteer hours by season")
    heading.dblclick()
    expect(heading).to_have_attribute("contenteditable", "plaintext-only")
    page.keyboard.type("Hours given, season by season")
    page.keyboard.press("Enter")
    expected = before.replace("Volunteer hours by season", "Hours given, season by season")
    assert on_disk(path, expected) == expected
    expect(heading).to_have_text("Hours given, season by season")
    path.write_text(before, encoding="utf-8")
    expect(heading).to_have_text("Volunteer hours by season")


# GLYPH_RENDERING run on a page's own document (its frame runs no script of
# its own: the parent's code reads and draws in it).
IN_FRAME = GLYPH_RENDERING.replace(
    "async ({selectors, sample}) => {",
    "async ({selectors, sample, frame}) => { const document = window.document.querySelector(frame).contentDocument;", 1)


# The width of the element's first line of Han characters over their count, in ems.
EM_PER_HAN = """(el) => {
  const walker = el.ownerDocument.createTreeWalker(el, 4);
  const node = walker.nextNode();
  const text = node.nodeValue;
  const start = text.search(/\\p{Script=Han}/u);
  let end = start;
  while (end < text.length && /\\p{Script=Han}/u.test(text[end]) && end - start < 8) end += 1;
  const range = el.ownerDocument.createRange();
  range.setStart(node, start);
  range.setEnd(node, end);
  const size = parseFloat(getComputedStyle(el).fontSize);
  return range.getBoundingClientRect().width / (end - start) / size;
}"""


@pytest.mark.skipif(not CJK_FONT.exists(), reason="the shell's CJK font is not set up (scripts/build-web)")
def test_chinese_is_drawn_as_glyphs_without_a_system_cjk_font(printed: tuple[Any, Any], shot: Any) -> None:
    server, page = printed
    assert viewer_answer(server, "navigate-to", {"page": 3})["success"]
    expect(frame_of(page, 3).locator("h1")).to_have_text("致邻居们")
    parts = ("article h1", "article p:nth-of-type(2)", "article blockquote")
    result = page.evaluate(IN_FRAME, {"selectors": list(parts), "sample": "邻居", "frame": ".pnp-sheet[data-page='3'] iframe"})
    assert_drawn_as_glyphs(result, parts, "邻居", where="the print viewer")
    # As laid out on the sheet: a Chinese glyph is a full em wide, the box
    # drawn for a missing glyph much narrower.
    for selector in parts:
        ems = frame_of(page, 3).locator(selector).evaluate(EM_PER_HAN)
        assert ems > 0.95, f"{selector}: its Chinese is {ems:.2f} em a character: drawn as boxes"
    shot(page, "print-chinese")


def test_navigate_and_zoom_as_the_agent_asks(printed: tuple[Any, Any]) -> None:
    server, page = printed
    answer = viewer_answer(server, "navigate-to", {"file": "pages/02-the-year.html"})
    assert answer["success"] and "page 2 of 3" in answer["message"] and "fits its content box" in answer["message"]
    expect(page.locator(".pnp-counter")).to_have_text("Page 2 of 3")
    assert viewer_answer(server, "describe-view")["data"]["page"] == 2
    width = page.locator(".pnp-sheet[data-page='1']").bounding_box()["width"]
    assert viewer_answer(server, "ui:zoom", {"zoom": "50"})["success"]
    half = page.locator(".pnp-sheet[data-page='1']").bounding_box()["width"]
    assert abs(half - 210 / 25.4 * 96 * 0.5) < 1, (width, half)
    # a change's "Show" carries the page's number from its turn: the file wins when they disagree
    moved = viewer_answer(server, "navigate-to", {"page": 1, "file": "pages/03-neighbours.html"})
    assert moved["data"]["page"] == 3
    # follow: the shell brings a page the agent changed into view
    assert page.evaluate(f"() => {HOST}.instance.reveal('pages/01-cover.html')") is True
    expect(page.locator(".pnp-counter")).to_have_text("Page 1 of 3")
    assert page.evaluate(f"() => {HOST}.instance.reveal('style.css')") is False
    bad = viewer_answer(server, "navigate-to", {"page": 9})
    assert not bad["success"] and "from 1 to 3" in bad["message"]
    assert viewer_answer(server, "ui:zoom", {"zoom": "fit-width"})["success"]
    assert page.console_errors == []


def test_a_narrow_window_gives_the_sheets_the_width(printed: tuple[Any, Any], shot: Any) -> None:
    server, page = printed
    page.set_viewport_size({"width": 420, "height": 800})
    try:
        expect(page.locator(".pnp-list")).to_be_hidden()
        counter = page.locator(".pnp-counter").bounding_box()
        assert counter["height"] < 24, counter  # "Page 1 of 3" on one line, not broken over two
        viewer = page.locator(".pnp-root").bounding_box()
        sheet = page.locator(".pnp-sheet[data-page='1']").bounding_box()
        assert sheet["width"] > viewer["width"] * 0.8, (sheet, viewer)
        shot(page, "print-narrow")
    finally:
        page.set_viewport_size({"width": 1300, "height": 900})
    expect(page.locator(".pnp-list")).to_be_visible()


def test_a_review_pin_sits_on_its_element_and_knows_its_place(printed: tuple[Any, Any]) -> None:
    server, page = printed
    assert page.evaluate(f"() => {HOST}.module.capabilities") == ["annotate", "edit", "follow"]
    pins_loaded(page)
    page.locator(".annotate-toggle").click()
    target = frame_of(page, 2).locator("p.lede")
    target.click()
    stored_pins(server, 1, commented=False)
    comment = page.locator(".pin-box textarea")
    comment.fill("Shorter, please")
    comment.press("Enter")
    marker = page.locator(".pnp-sheet[data-page='2'] .pnp-pin")
    expect(marker).to_have_text("1")
    expect(marker).to_be_visible()
    page.wait_for_function(f"() => !{HOST}.instance.scrolling")  # a scroll to the pin has ended
    lede, pin = target.bounding_box(), marker.bounding_box()
    assert lede is not None and pin is not None, (lede, pin)
    assert abs(pin["x"] + pin["width"] / 2 - lede["x"]) < 3 and abs(pin["y"] + pin["height"] / 2 - lede["y"]) < 3
    stored = stored_pins(server, 1)[0]
    assert (stored["selection"]["file"], stored["selection"]["page"]) == ("pages/02-the-year.html", 2)
    assert stored["place"].startswith('<p class="lede"') and "wet spring" in stored["place"]
    page.locator(".pin-remove").click()
    expect(marker).to_have_count(0)
    page.locator(".annotate-toggle").click()


def test_a_pages_scripts_never_run(printed: tuple[Any, Any]) -> None:
    # Workspace markup is untrusted: the page's frame runs no script, inline or handler.
    server, page = printed
    path = server.workspace / "pages" / "01-cover.html"
    original = path.read_text(encoding="utf-8")
    path.write_text('<h1 id="hostile">Hostile</h1><script>parent.document.title = "owned"</script>'
                    '<img src="nope.png" onerror="parent.document.title = \'owned\'">', encoding="utf-8")
    try:
        expect(frame_of(page, 1).locator("#hostile")).to_have_text("Hostile", timeout=10_000)
        sandbox = page.locator(".pnp-sheet[data-page='1'] iframe").get_attribute("sandbox")
        assert sandbox == "allow-same-origin"
        page.wait_for_function("() => document.querySelector(\".pnp-sheet[data-page='1'] iframe\")"
                               ".contentDocument.querySelector('img').complete")
        assert page.title() != "owned"
    finally:
        path.write_text(original, encoding="utf-8")
    expect(frame_of(page, 1).locator("h1")).to_contain_text("Annual Report", timeout=10_000)
    page.console_errors.clear()  # the refused handler and the missing picture



def test_a_broken_print_json_is_said_in_the_page_and_the_last_good_pages_stay(printed: tuple[Any, Any]) -> None:
    server, page = printed
    path = server.workspace / "print.json"
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace('"pages": [', '"pages": [,'), encoding="utf-8")
    try:
        expect(page.locator(".pnp-banner")).to_contain_text("print.json is not valid JSON", timeout=10_000)
        expect(page.locator(".pnp-sheet")).to_have_count(3)
        view = viewer_answer(server, "describe-view")
        assert "print.json problem: print.json is not valid JSON" in view["message"]
        # a custom paper of absurd size is named as such, not as an "unknown" paper
        path.write_text(original.replace('"paper": "A4"', '"paper": {"width_mm": 1e308, "height_mm": 5}'),
                        encoding="utf-8")
        expect(page.locator(".pnp-banner")).to_contain_text("a custom paper must be 20–2000 mm on each side",
                                                            timeout=10_000)
        expect(page.locator(".pnp-sheet")).to_have_count(3)
        assert 'a custom "paper" must be 20–2000 mm' in viewer_answer(server, "describe-view")["message"]
    finally:
        path.write_text(original, encoding="utf-8")
    expect(page.locator(".pnp-banner")).to_be_hidden(timeout=10_000)


def test_an_edit_racing_an_agent_write_is_refused_and_nothing_is_lost(printed: tuple[Any, Any]) -> None:
    server, page = printed
    path = server.workspace / "pages" / "02-the-year.html"
    original = path.read_text(encoding="utf-8")
    caption = frame_of(page, 2).locator("figcaption")
    caption.dblclick()
    expect(caption).to_have_attribute("contenteditable", "plaintext-only")
    page.keyboard.type("My own caption")
    theirs = original.replace("What comes next", "The agent's heading")
    path.write_text(theirs, encoding="utf-8")  # the agent writes the page meanwhile
    page.wait_for_function(f"() => {HOST}.files.some((f) => f.path === 'pages/02-the-year.html'"
                           " && f.content.includes(\"The agent's heading\"))")
    # the text under the person's hands is not repainted, and the shell knows they are busy
    assert caption.get_attribute("contenteditable") == "plaintext-only"
    assert page.locator(".pnp-sheet[data-page='2'] iframe[data-pneuma-busy]").count() == 1
    page.keyboard.press("Enter")
    dialog = page.locator('[data-kind="edit-conflict"]')
    dialog.wait_for()
    assert "My own caption" in dialog.locator(".edit-conflict-mine textarea").input_value()
    dialog.locator(".edit-conflict-theirs-button").click()
    assert path.read_text(encoding="utf-8") == theirs
    kept = [p.read_text(encoding="utf-8") for p in (server.workspace / ".pneuma" / "edits" / "conflicts").rglob("*")
            if p.is_file()]
    assert any("My own caption" in text for text in kept)
    expect(frame_of(page, 2).locator("h2").nth(2)).to_have_text("The agent's heading")
    path.write_text(original, encoding="utf-8")
    expect(frame_of(page, 2).locator("h2").nth(2)).to_have_text("What comes next")


def test_a_listed_page_that_is_gone_or_not_text_is_said_on_its_sheet_and_to_the_agent(printed: tuple[Any, Any]) -> None:
    server, page = printed
    page.console_errors.clear()  # what earlier tests' frames refused to run is theirs
    path = server.workspace / "print.json"
    original = path.read_text(encoding="utf-8")
    picture = server.workspace / "pages" / "photo.html"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)  # a picture saved under a page's name
    listed = ('"pages": [{"file": "pages/gone.html", "title": "Gone"}, '
              '{"file": "pages/photo.html", "title": "Photo"}, ')
    path.write_text(original.replace('"pages": [', listed), encoding="utf-8")
    try:
        expect(page.locator(".pnp-sheet")).to_have_count(5, timeout=10_000)
        expect(frame_of(page, 1).locator("body")).to_contain_text("pages/gone.html is listed in print.json but does not exist")
        expect(frame_of(page, 2).locator("body")).to_contain_text("pages/photo.html is not a text file")
        view = viewer_answer(server, "describe-view")
        assert "page 1 (pages/gone.html) is listed in print.json but does not exist" in view["message"], view
        assert "page 2 (pages/photo.html) is not a text file" in view["message"], view
        assert [u["page"] for u in view["data"]["unreadable"]] == [1, 2]
    finally:
        path.write_text(original, encoding="utf-8")
        picture.unlink()
    expect(page.locator(".pnp-sheet")).to_have_count(3, timeout=10_000)
    assert page.console_errors == []
