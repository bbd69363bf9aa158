"""A follow-up typed while the agent works is shown as queued, editable and
cancellable until the agent takes it; after Esc the "Stopped" line stays
with the turn that was stopped (issue 25, item 8). Chromium against
`pneuma run` with the fake CLI, whose "slow" turn streams until interrupted."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.browser.browser_helpers import send
from tests.browser.test_shell import TURN, chat  # noqa: F401  (the fixture)

# The chat's rows in the order the person reads them: each user message
# (queued ones marked) and each result line.
CHAT_ORDER = """() => [...document.querySelectorAll('.messages .msg.user, .messages .result-line')]
  .map((el) => el.classList.contains('result-line')
    ? `result: ${el.querySelector('.result-label').textContent}`
    : `${el.classList.contains('queued') ? 'queued' : 'user'}: ${el.querySelector('.bubble')?.textContent ?? ''}`)"""


def chat_order(page: Any) -> list[str]:
    return page.evaluate(CHAT_ORDER)


def start_slow_turn(page: Any) -> None:
    send(page, "slow please")
    expect(page.locator(".md.streaming")).to_contain_text("word1", timeout=TURN)


def test_a_follow_up_shows_as_queued_is_edited_and_goes_after_the_stopped_turn(chat, fake_claude, shot):
    page = chat()
    start_slow_turn(page)
    send(page, "then make the title red")
    queued = page.locator(".msg.user.queued")
    expect(queued).to_have_count(1)
    expect(queued.locator(".queued-mark")).to_have_text("Queued")
    expect(queued.locator(".bubble")).to_have_text("then make the title red")
    # Not shown as sent, and the agent has not got it.
    expect(page.locator(".msg.user:not(.queued)", has_text="title red")).to_have_count(0)
    assert not any("title red" in text for text in fake_claude.user_texts())
    # The answer streams on above it: the queued message stays the last row.
    expect(page.locator(".md.streaming")).to_contain_text("word8", timeout=TURN)
    assert chat_order(page)[-1] == "queued: then make the title red"

    editor = queued.locator(".queued-editor")
    # The answer streams above the queued row and moves it: a click that a
    # layout moved away from the button is tried again (CI, load 10).
    for _ in range(3):
        queued.locator(".queued-edit").click()
        try:
            editor.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            continue
    editor.fill("then make the title green")
    editor.press("Enter")
    expect(queued.locator(".bubble")).to_have_text("then make the title green")
    shot(page, "queued-follow-up")

    page.keyboard.press("Escape")
    # The stopped turn ends; the follow-up is taken as an ordinary message
    # and answered (the greeting, the stopped turn, the follow-up).
    expect(page.locator(".result-line")).to_have_count(3, timeout=TURN)
    expect(page.locator(".msg.user.queued")).to_have_count(0)
    assert chat_order(page)[-4:] == [
        "user: slow please", "result: Stopped", "user: then make the title green", "result: Done"]
    assert fake_claude.user_texts()[-1].endswith("then make the title green")
    assert not any("title red" in text for text in fake_claude.user_texts())
    shot(page, "queued-follow-up-taken")
    assert page.console_errors == []


def test_a_cancelled_follow_up_never_reaches_the_agent(chat, fake_claude):
    page = chat()
    start_slow_turn(page)
    send(page, "never send this")
    queued = page.locator(".msg.user.queued")
    expect(queued).to_have_count(1)
    queued.locator(".queued-cancel").click()
    expect(queued).to_have_count(0)
    page.keyboard.press("Escape")
    expect(page.locator(".result-line").last).to_contain_text("Stopped", timeout=TURN)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle")
    # The next message the agent gets is the next one sent, not the withdrawn one.
    send(page, "hello instead")
    expect(page.locator(".result-line")).to_have_count(3, timeout=TURN)
    assert fake_claude.user_texts()[-1].endswith("hello instead")
    assert not any("never send this" in text for text in fake_claude.user_texts())
    assert "user: never send this" not in chat_order(page)
    assert page.console_errors == []


def test_a_reloaded_page_still_shows_the_follow_up_as_queued(chat, fake_claude, shot):
    page = chat()
    start_slow_turn(page)
    send(page, "after the reload")
    expect(page.locator(".msg.user.queued")).to_have_count(1)
    page.reload()
    page.wait_for_selector('.pill[data-state="open"]', timeout=10_000)
    queued = page.locator(".msg.user.queued")
    expect(queued).to_have_count(1)
    expect(queued.locator(".bubble")).to_have_text("after the reload")
    expect(page.locator(".msg.user:not(.queued)", has_text="after the reload")).to_have_count(0)
    shot(page, "queued-after-reload")
    # Still editable from the reloaded page, and taken when the turn stops.
    expect(page.locator(".send.stop")).to_be_visible()  # the reloaded page knows the agent works
    page.keyboard.press("Escape")
    expect(page.locator(".result-line")).to_have_count(3, timeout=TURN)
    expect(queued).to_have_count(0)
    assert chat_order(page)[-2:] == ["user: after the reload", "result: Done"]
    assert fake_claude.user_texts()[-1].endswith("after the reload")
