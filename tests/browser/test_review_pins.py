"""Review pins in the shell (docs/viewer-contract.md, "Annotate"): with the
Annotate switch on, places clicked in the slide viewer become numbered pins
with comments in the review list; a comment can be edited and a pin removed;
the pins are the workspace's, so they survive a reload and a second tab shows
the same ones; Esc leaves annotate mode. One `pneuma run` (no agent) and its
pages serve the whole module."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.module_run import module_page, module_run

HOST = "window.pneuma.ui.host"
STAGE = ".pns-frame--stage"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with module_run(tmp_path_factory.mktemp("pins"), "slide") as served:
        yield served


def open_slide_page(browser: Any, url: str) -> Any:
    return module_page(browser, url, viewport={"width": 1500, "height": 900})


def stage_ready(page: Any) -> None:
    page.wait_for_function(
        f"() => {HOST} && {HOST}.instance && document.querySelector('{STAGE}')"
        f" && document.querySelector('{STAGE}').contentDocument.querySelector('section.slide')")


def pin_comments(page: Any) -> list[str]:
    return page.locator(".review-list .pin-item .pin-comment").all_inner_texts()


def stored(run: Any) -> list[dict[str, Any]]:
    path = Path(run.workspace) / ".pneuma" / "review-pins.json"
    return json.loads(path.read_text())["pins"] if path.exists() else []


def comment_on(page: Any, text: str) -> None:
    box = page.locator(".pin-box textarea")
    box.fill(text)
    box.press("Enter")
    page.wait_for_selector(".pin-box", state="detached")


def test_pins_made_commented_edited_removed_and_seen_everywhere(browser: Any, run: Any) -> None:
    from playwright.sync_api import expect

    with open_slide_page(browser, run.url) as page:
        stage_ready(page)
        switch = page.locator(".annotate-toggle")
        expect(switch).to_have_attribute("aria-checked", "false")
        # The viewer is told (its optional setAnnotating), e.g. to enter its own pointing mode.
        page.evaluate(f"() => {{ window.told = []; {HOST}.instance.setAnnotating = (on) => window.told.push(on); }}")
        switch.click()
        expect(switch).to_have_attribute("aria-checked", "true")
        assert page.evaluate("() => window.told") == [True]
        expect(page.locator(".annotate-hint")).to_be_visible()

        stage = page.frame_locator(STAGE)
        stage.locator("section.slide h1").first.click()
        expect(page.locator(".pin-box textarea")).to_be_focused()
        comment_on(page, 'Shorter, and "bolder" <b>please</b>')
        stage.locator("section.slide p").first.click()
        comment_on(page, "Wrong year")
        page.locator('.pns-thumb[data-index="1"]').click()
        page.wait_for_function("() => document.querySelector('.pns-counter').textContent.startsWith('2 /')")
        stage.locator("section.slide h1, section.slide h2").first.click()
        comment_on(page, "Say who")

        # Three numbered pins; the clicks set no chip of their own (the
        # slide viewer's "slide on screen" context stays, as auto).
        expect(page.locator(".review-list .pin-item")).to_have_count(3)
        assert page.evaluate("() => { const s = window.pneuma.ui.selection; return !s || s.auto === true; }")
        assert page.locator(".review-list .pin-number").all_inner_texts() == ["1", "2", "3"]
        assert pin_comments(page) == ['Shorter, and "bolder" <b>please</b>', "Wrong year", "Say who"]
        assert page.locator(".review-send").inner_text().strip().endswith("(3)")

        # Edit the second comment, remove the first: numbers follow the list.
        second = page.locator('.pin-item[data-pin-number="2"]')
        second.hover()
        second.locator(".pin-edit").click()
        comment_on(page, "Wrong year: 2026")
        first = page.locator('.pin-item[data-pin-number="1"]')
        first.hover()
        first.locator(".pin-remove").click()
        expect(page.locator(".review-list .pin-item")).to_have_count(2)
        assert pin_comments(page) == ["Wrong year: 2026", "Say who"]
        assert [p["comment"] for p in _wait_stored(page, run, 2)] == ["Wrong year: 2026", "Say who"]

        # Esc leaves annotate mode (and interrupts nothing); a click is a chip again.
        page.keyboard.press("Escape")
        expect(switch).to_have_attribute("aria-checked", "false")
        assert page.evaluate("() => window.told") == [True, False]
        stage.locator("section.slide h1, section.slide h2").first.click()
        page.wait_for_function("() => { const s = window.pneuma.ui.selection; return s && !s.auto; }")
        expect(page.locator(".review-list .pin-item")).to_have_count(2)

        # A second tab shows the same pins, and a change in one shows in the other.
        with open_slide_page(browser, run.url) as other:
            stage_ready(other)
            expect(other.locator(".review-list .pin-item")).to_have_count(2)
            assert pin_comments(other) == ["Wrong year: 2026", "Say who"]
            last = other.locator('.pin-item[data-pin-number="2"]')
            last.hover()
            last.locator(".pin-remove").click()
            expect(page.locator(".review-list .pin-item")).to_have_count(1)

        # A reload keeps them (the server's copy).
        page.reload()
        page.wait_for_selector('.pill[data-state="open"]')
        stage_ready(page)
        expect(page.locator(".review-list .pin-item")).to_have_count(1)
        assert pin_comments(page) == ["Wrong year: 2026"]

        # A viewer that does not declare "annotate" gets no switch, and its
        # selection is today's single chip.
        page.locator(".annotate-toggle").click()  # on, then the viewer no longer declares it
        page.evaluate("() => { window.pneuma.ui.host.module.capabilities = []; window.pneuma.store.notify(); }")
        expect(page.locator(".annotate-toggle")).to_have_count(0)
        page.frame_locator(STAGE).locator("section.slide p").first.click()
        page.wait_for_function("() => { const s = window.pneuma.ui.selection; return s && !s.auto; }")
        expect(page.locator(".review-list .pin-item")).to_have_count(1)
        assert not page.console_errors, page.console_errors


def _wait_stored(page: Any, run: Any, count: int) -> list[dict[str, Any]]:
    page.wait_for_function(
        "(n) => fetch('/api/review/pins').then((r) => r.json()).then((b) => b.pins.length === n)", arg=count)
    return stored(run)


def test_a_pin_made_before_the_workspace_pins_arrive_joins_them(browser: Any, run: Any) -> None:
    # The page asks for the workspace's pins as it opens; a pin made and
    # commented before that answer lands is kept, and so are the pins the
    # workspace already had (a whole-list save made earlier would drop them).
    from playwright.sync_api import expect

    with open_slide_page(browser, run.url) as page:
        stage_ready(page)
        before = [p["comment"] for p in stored(run)]
        assert before, "the test above leaves a pin in the workspace"
    held: list[Any] = []

    def hold(route: Any) -> None:
        if route.request.method == "GET" and not held:
            held.append(route)  # answered below, after the new pin is made
        else:
            route.continue_()

    context = browser.new_context(viewport={"width": 1500, "height": 900})
    try:
        page = context.new_page()
        page.route("**/api/review/pins", hold)
        page.goto(run.url)
        page.wait_for_function("() => window.pneuma && window.pneuma.ui && window.pneuma.ui.host")
        stage_ready(page)
        assert held, "the page asked for the workspace's pins"
        page.locator(".annotate-toggle").click()
        page.frame_locator(STAGE).locator("section.slide h1").first.click()
        comment_on(page, "Made before the pins came")
        held[0].continue_()
        expect(page.locator(".review-list .pin-item")).to_have_count(len(before) + 1)
        assert pin_comments(page) == [*before, "Made before the pins came"]
        kept = _wait_stored(page, run, len(before) + 1)
        assert [p["comment"] for p in kept] == [*before, "Made before the pins came"]
    finally:
        context.close()
