"""The CoAuthor viewer's annotate and follow capabilities
(docs/viewer-contract.md, "Annotate, edit in place, follow the agent") in the
real shell and Debian's Chromium, through the viewer instance the shell calls
(``window.pneuma.ui.host.instance``): a double-click selects a LaTeX
paragraph (its file and source lines), pins on two paragraphs show numbered
markers at their first lines, a pin's place changes when its paragraph
changes on disk and not when another does, and ``reveal``/``revealPin``
bring a file and a pinned paragraph to the front; an agent's turn (the fake
CLI writing a section) brings that section to the front in the shell.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send

INSTANCE = "window.pneuma.ui.host.instance"
INTRO = "sections/introduction.tex"


def test_pins_on_two_paragraphs_markers_places_and_reveal(pneuma_server: Any, open_page: Any, tmp_path: Path) -> None:
    ws = tmp_path / "paper"
    (ws / ".pneuma").mkdir(parents=True)
    (ws / ".pneuma" / "coauthor.toml").write_text('[build]\nlatexmk = "off"\n', encoding="utf-8")
    server = pneuma_server("coauthor", backend="none", workspace=ws)
    page = open_page(server)
    page.wait_for_selector(".ca-root .ca-board", timeout=10_000)
    assert page.evaluate("() => window.pneuma.ui.host.module.capabilities") == ["annotate", "follow"]

    # reveal: the agent changed the introduction, the viewer shows it.
    assert page.evaluate(f"() => {INSTANCE}.reveal('{INTRO}')") is True
    expect(page.locator(".ca-root")).to_have_attribute("data-file", INTRO)
    assert page.evaluate(f"() => {INSTANCE}.reveal('notes/nowhere.txt')") is False

    # A double-click on a line selects its whole paragraph.
    selected = []
    for line in (5, 9):
        page.locator(f'.ca-line[data-line="{line}"] .ca-tx').dblclick()
        page.wait_for_function(f"(n) => {INSTANCE}.state.sel && {INSTANCE}.state.sel.lines[0] <= n"
                               f" && n <= {INSTANCE}.state.sel.lines[1]", arg=line)
        selected.append(page.evaluate(f"() => {INSTANCE}.state.sel.lines"))
    assert selected == [[4, 6], [8, 11]]
    expect(page.locator(".ca-line.ca-sel")).to_have_count(4)

    pins = [
        {"id": "a", "number": 1, "selection": {"file": INTRO, "lines": [4, 6]}, "comment": "Cite more", "status": "open"},
        {"id": "b", "number": 2, "selection": {"file": INTRO, "lines": [8, 11]}, "comment": "Tighter", "status": "addressed"},
        {"id": "c", "number": 3, "selection": {"file": "sections/method.tex", "lines": [1, 1]}, "comment": "x", "status": "open"},
    ]
    page.evaluate(f"(pins) => {INSTANCE}.showPins(pins)", pins)
    expect(page.locator(".ca-pin")).to_have_count(2)
    expect(page.locator('.ca-line[data-line="4"] .ca-pin')).to_have_text("1")
    expect(page.locator('.ca-line[data-line="8"] .ca-pin')).to_have_text("2")
    expect(page.locator('.ca-line[data-line="8"] .ca-pin')).to_have_attribute("data-status", "addressed")
    expect(page.locator(".ca-line.ca-pinned")).to_have_count(3 + 4)
    # A new selection draws the file again: the markers stay. Each double-click
    # selects once (each selection may become a pin): the text's paragraph,
    # the gutter's line.
    page.evaluate(f"""() => {{ const ctx = {INSTANCE}.ctx, set = ctx.setSelection;
        window.__selections = []; ctx.setSelection = (s) => {{ window.__selections.push(s.lines); return set(s); }}; }}""")
    page.locator('.ca-line[data-line="14"] .ca-tx').dblclick()
    expect(page.locator(".ca-line.ca-sel")).to_have_count(3)
    page.locator('.ca-line[data-line="16"] .ca-ln').dblclick()
    expect(page.locator(".ca-line.ca-sel")).to_have_count(1)
    assert page.evaluate("() => window.__selections") == [[13, 15], [16, 16]]
    expect(page.locator('.ca-line[data-line="4"] .ca-pin')).to_have_text("1")
    expect(page.locator('.ca-line[data-line="8"] .ca-pin')).to_have_text("2")

    # The place of a pin is its paragraph's source: it changes with that paragraph only.
    place = f"(s) => {INSTANCE}.pinPlace(s, window.pneuma.ui.host.files)"
    before = [page.evaluate(place, pin["selection"]) for pin in pins[:2]]
    assert before[0].startswith("The hope that a machine") and before[1].startswith("Two styles of assistant")
    intro = ws / INTRO
    intro.write_text(intro.read_text().replace("is as old as interactive computing", "is as old as computing"))
    page.wait_for_function(f"(p) => {INSTANCE}.pinPlace(p.s, window.pneuma.ui.host.files) !== p.before",
                           arg={"s": pins[0]["selection"], "before": before[0]})
    assert page.evaluate(place, pins[1]["selection"]) == before[1]

    # Another file, then the pin: its paragraph comes back, flashed. (The
    # shell hands the viewer its pins again after each change of files.)
    page.evaluate(f"(pins) => {INSTANCE}.showPins(pins)", pins)
    assert page.evaluate("() => window.pneuma.ui.host.instance.reveal('sections/method.tex')") is True
    expect(page.locator(".ca-root")).to_have_attribute("data-file", "sections/method.tex")
    expect(page.locator(".ca-pin")).to_have_count(1)
    assert page.evaluate(f"(pin) => {INSTANCE}.revealPin(pin)", pins[1]) is True
    expect(page.locator(".ca-root")).to_have_attribute("data-file", INTRO)
    expect(page.locator('.ca-line[data-line="9"]')).to_have_class(re.compile(r"\bca-flash\b"))
    expect(page.locator('.ca-line[data-line="9"]')).to_be_in_viewport()
    page.evaluate(f"(pins) => {INSTANCE}.showPins(pins)", pins)
    expect(page.locator(".ca-pin")).to_have_count(2)
    page.evaluate(f"() => {INSTANCE}.showPins([])")
    expect(page.locator(".ca-pin")).to_have_count(0)
    assert page.console_errors == []


def test_a_turn_brings_the_section_it_wrote_to_the_front(
        pneuma_server: Any, fake_claude: Any, open_page: Any, tmp_path: Path) -> None:
    ws = tmp_path / "paper"
    (ws / ".pneuma").mkdir(parents=True)
    (ws / ".pneuma" / "coauthor.toml").write_text('[build]\nlatexmk = "off"\n', encoding="utf-8")
    server = pneuma_server("coauthor", claude_bin=fake_claude.bin, workspace=ws,
                           env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    page = open_page(server)
    expect(page.locator(".result-line")).to_have_count(1, timeout=15_000)  # the greeting
    expect(page.locator(".ca-root")).to_have_attribute("data-view", "board")
    send(page, "write sections/conclusion.tex \\section{Conclusion, rewritten}")
    expect(page.locator(".ca-root")).to_have_attribute("data-file", "sections/conclusion.tex", timeout=15_000)
    expect(page.locator('.ca-line[data-line="1"]')).to_contain_text("Conclusion, rewritten")
    assert page.console_errors == []


def test_with_annotate_on_each_double_click_is_one_pin_and_a_language_switch_adds_none(
        pneuma_server: Any, open_page: Any, tmp_path: Path) -> None:
    ws = tmp_path / "paper"
    (ws / ".pneuma").mkdir(parents=True)
    (ws / ".pneuma" / "coauthor.toml").write_text('[build]\nlatexmk = "off"\n', encoding="utf-8")
    server = pneuma_server("coauthor", backend="none", workspace=ws)
    page = open_page(server)
    page.wait_for_selector(".ca-root .ca-board", timeout=10_000)
    assert page.evaluate(f"() => {INSTANCE}.reveal('{INTRO}')") is True
    page.locator(".annotate-toggle").click()
    for count, (line, comment) in enumerate(((5, "Cite more"), (9, "Tighter")), 1):
        page.locator(f'.ca-line[data-line="{line}"] .ca-tx').dblclick()
        box = page.locator(".review-list textarea")
        expect(box).to_be_focused()
        box.fill(comment)
        box.press("Enter")
        expect(page.locator(".review-list .pin-item")).to_have_count(count)
    expect(page.locator(".ca-pin")).to_have_count(2)
    expect(page.locator('.ca-line[data-line="4"] .ca-pin')).to_have_text("1")
    expect(page.locator('.ca-line[data-line="8"] .ca-pin')).to_have_text("2")
    page.locator('.lang-btn[data-locale="zh-CN"]').click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(page.locator(".ca-pin")).to_have_count(2)
    expect(page.locator(".review-list .pin-item")).to_have_count(2)
    assert page.console_errors == []
