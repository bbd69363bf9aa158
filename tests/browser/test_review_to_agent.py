"""A review of several pins reaches the REAL Claude Code CLI as one message
(docs/viewer-contract.md, "Annotate"; issue 26's "Done when").

`pneuma run --mode slide`, then `--mode webcraft`, each with the real CLI
against the fake Anthropic Messages API (tests/fakes/anthropic_api.py), the
shell open in Debian's Chromium. The person turns Annotate on, pins three
places on the slides and two on the web page, comments each and presses
"Send review": the model's request holds every pin's <viewer-context> and
comment in one <viewer-review>, with the slide viewer's crops as images.
The scripted model then rewrites one pinned heading: that pin shows as
addressed, the others stay sent.

Everything runs in the loopback-only network namespace of the root conftest.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_agent_viewer_actions import (
    TURN,
    ThreadedFakeAPI,
    bash,
    fake_api,  # noqa: F401 (the fixture)
    start_with_real_cli,
)
from tests.e2e.pneuma_run import CLAUDE_BIN
from tests.fakes.anthropic_api import text
from tests.loopback import fail_unless_loopback_only

pytestmark = pytest.mark.skipif(
    CLAUDE_BIN is None,
    reason="the real Claude Code CLI is not installed: pip install claude-agent-sdk==0.2.187",
)
STAGE = ".pns-frame--stage"


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    fail_unless_loopback_only("the review-to-agent tests", "tests/browser/test_review_to_agent.py")


def pin_with_comment(page: Any, place: Any, comment: str) -> None:
    place.click()
    box = page.locator(".pin-box textarea")
    expect(box).to_be_focused()
    box.fill(comment)
    box.press("Enter")
    page.wait_for_selector(".pin-box", state="detached")


def review_request(fake_api: ThreadedFakeAPI) -> tuple[str, int]:
    """The text of the person's review message as the model received it, and
    how many images came with it."""
    requests = fake_api._on_loop(fake_api.api.conversation_requests)
    for body in reversed(requests):
        for message in reversed(body["messages"]):
            if message["role"] != "user" or isinstance(message["content"], str):
                continue
            texts = [b.get("text", "") for b in message["content"] if b.get("type") == "text"]
            joined = "\n".join(texts)
            if "<viewer-review" in joined:
                images = sum(1 for b in message["content"] if b.get("type") == "image")
                return joined, images
    raise AssertionError("no request held a <viewer-review>")


def pins_in(review: str) -> list[tuple[str, str, str]]:
    """(number, comment, viewer-context) of each <pin> of the review."""
    return re.findall(r'<pin n="(\d+)" comment="([^"]*)">\n(<viewer-context[\s\S]*?</viewer-context>)\n</pin>',
                      review)


def test_three_slide_pins_go_out_as_one_review_and_the_changed_one_is_addressed(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:
    fake_api.push(text("Hi! A starter deck is open."))
    server = start_with_real_cli(pneuma_server, fake_api, "slide")
    page = open_page(server, viewport={"width": 1500, "height": 900})
    page.wait_for_function(f"() => document.querySelector('{STAGE}')"
                           f" && document.querySelector('{STAGE}').contentDocument.querySelector('section.slide h1')")
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn

    page.locator(".annotate-toggle").click()
    stage = page.frame_locator(STAGE)
    pin_with_comment(page, stage.locator("section.slide h1"), 'Shorter, and say "you"')
    pin_with_comment(page, stage.locator("section.slide p.lead"), "One line, not two")
    page.locator('.pns-thumb[data-index="1"]').click()
    page.wait_for_function("() => document.querySelector('.pns-counter').textContent.startsWith('2 /')")
    pin_with_comment(page, stage.locator("section.slide h1, section.slide h2").first, "A question, not a claim")
    expect(page.locator(".review-list .pin-item")).to_have_count(3)

    title = "slides/01-title.html"
    fake_api.push(text("Shortening the title."),
                  bash(f"sed -i 's/Making things with an agent you can see/Make it with an agent you see/' {title}",
                       "Shorten the title"))
    fake_api.push(text("The title is shorter now."))
    page.locator(".review-send").click()
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    assert fake_api.pending() == 0

    review, images = review_request(fake_api)
    assert review.startswith('<viewer-review pins="3">'), review[:200]
    pins = pins_in(review)
    assert [(n, c) for n, c, _ in pins] == [
        ("1", "Shorter, and say &quot;you&quot;"), ("2", "One line, not two"), ("3", "A question, not a claim")]
    assert 'file="slides/01-title.html" slide="1"' in pins[0][2] and "Selected: <h1>" in pins[0][2]
    assert 'file="slides/01-title.html" slide="1"' in pins[1][2] and "p.lead" in pins[1][2]
    assert 'slide="2"' in pins[2][2]
    assert "Please address these review comments." in review
    assert images == 3  # each pinned element, cropped

    # The rewritten heading's pin is addressed; the others wait, sent.
    expect(page.locator('.pin-item[data-pin-number="1"]')).to_have_attribute("data-status", "addressed", timeout=10_000)
    expect(page.locator('.pin-item[data-pin-number="2"]')).to_have_attribute("data-status", "sent")
    expect(page.locator('.pin-item[data-pin-number="3"]')).to_have_attribute("data-status", "sent")
    stored = json.loads((server.workspace / ".pneuma" / "review-pins.json").read_text())
    assert [p["status"] for p in stored["pins"]] == ["addressed", "sent", "sent"]
    expect(page.locator(".ctx-chip.small").last).to_contain_text("3")
    shot(page, "review-slide-addressed")

    # Clear the addressed one; reopen a sent one: open again, in the next review.
    page.locator(".review-clear").click()
    expect(page.locator(".review-list .pin-item")).to_have_count(2)
    row = page.locator('.pin-item[data-pin-number="1"]')
    expect(row.locator(".pin-comment")).to_have_text("One line, not two")
    row.hover()
    row.locator(".pin-reopen").click()
    expect(row).to_have_attribute("data-status", "open")
    expect(page.locator(".review-send")).to_contain_text("(1)")
    assert not page.console_errors, page.console_errors


def test_two_webcraft_pins_go_out_as_one_review(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any) -> None:
    fake_api.push(text("Hi! A starter landing page is open."))
    server = start_with_real_cli(pneuma_server, fake_api, "webcraft")
    page = open_page(server)
    frame = page.frame_locator('iframe.webcraft-frame[data-viewport="desktop"]')
    expect(frame.locator("h1")).to_have_text("Notes that think with you.", timeout=15_000)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)

    page.locator(".annotate-toggle").click()
    # Annotate puts webcraft in Select by itself: the next click pins.
    expect(page.locator(".webcraft-pick")).to_have_attribute("aria-pressed", "true")
    pin_with_comment(page, frame.locator("h1"), "Warmer, <please>")
    pin_with_comment(page, frame.locator("p.lead"), "Too long")
    expect(page.locator(".review-list .pin-item")).to_have_count(2)

    fake_api.push(text("I will make the heading warmer and the lead shorter."))
    page.locator(".composer textarea").fill("Here is my review of the landing page.")
    page.locator(".review-send").click()
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)

    review, images = review_request(fake_api)
    assert review.startswith('<viewer-review pins="2">'), review[:200]
    pins = pins_in(review)
    assert [(n, c) for n, c, _ in pins] == [("1", "Warmer, &lt;please&gt;"), ("2", "Too long")]
    assert all('mode="webcraft"' in context and "index.html" in context for _, _, context in pins)
    assert "Notes that think with you." in pins[0][2]
    assert "Here is my review of the landing page." in review
    assert images == 2  # each pinned element, rendered by the server (webcraft)
    expect(page.locator(".composer textarea")).to_have_value("")
    expect(page.locator('.pin-item[data-status="sent"]')).to_have_count(2)
    assert not page.console_errors, page.console_errors
