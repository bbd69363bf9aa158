"""A follow-up still queued when `pneuma run` was stopped comes back in
the page held: marked "Not sent: Pneuma stopped before the agent took
it", with Send; it reaches the agent only after Send (docs/protocol.md,
"Queued follow-ups"). Chromium against two runs of `pneuma run` on one
workspace, the fake CLI's "slow" turn keeping the first one busy."""

from __future__ import annotations

import signal

from playwright.sync_api import expect

from tests.browser.browser_helpers import send
from tests.browser.test_shell import TURN, wait_greeting

HELD = "Not sent: Pneuma stopped before the agent took it"
FOLLOW_UP = "then make the title red"


def test_a_follow_up_queued_before_a_stop_is_back_held_and_sent_on_send(
        pneuma_server, fake_claude, open_page, tmp_path, shot):
    workspace = tmp_path / "deck"
    first = pneuma_server("slide", claude_bin=fake_claude.bin, workspace=workspace)
    page = open_page(first)
    wait_greeting(page)
    send(page, "slow please")
    expect(page.locator(".md.streaming")).to_contain_text("word1", timeout=TURN)
    send(page, FOLLOW_UP)
    expect(page.locator(".msg.user.queued .queued-mark")).to_have_text("Queued")
    first.process.send_signal(signal.SIGTERM)
    first.process.wait(15)
    page.close()

    again = pneuma_server("slide", claude_bin=fake_claude.bin, workspace=workspace)
    page = open_page(again)
    held = page.locator(".msg.user.queued.held")
    expect(held).to_have_count(1, timeout=TURN)
    expect(held.locator(".bubble")).to_have_text(FOLLOW_UP)
    expect(held.locator(".queued-mark")).to_have_text(HELD)
    expect(held.locator(".queued-send")).to_have_text("Send")
    expect(held.locator(".queued-edit")).to_be_visible()
    expect(held.locator(".queued-cancel")).to_be_visible()
    shot(page, "held-follow-up")
    # The agent is free and has not got it: it waits for the person.
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle", timeout=TURN)
    assert not any(FOLLOW_UP in text for text in fake_claude.user_texts())

    results = page.locator(".result-line").count()
    held.locator(".queued-send").click()
    expect(page.locator(".msg.user.queued")).to_have_count(0, timeout=TURN)
    expect(page.locator(".msg.user:not(.queued)", has_text=FOLLOW_UP)).to_have_count(1)
    expect(page.locator(".result-line")).to_have_count(results + 1, timeout=TURN)
    assert fake_claude.user_texts()[-1].endswith(FOLLOW_UP)
    assert not page.console_errors
