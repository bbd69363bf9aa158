"""The page says when saving is paused (issue 23, item 1), in Chromium.

Another process takes the conversation log's write lock while the person
talks (a database browser left open, say): the message is shown, the log
cannot take it, and the page shows "Saving is paused" above the chat until
the lock is released; then the banner goes and the message is in the log."""

from __future__ import annotations

import sqlite3
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send
from tests.server.log_faults import hold_lock

TURN = 15_000  # ms a fake CLI turn may take in the page
RESUMED = 15_000  # ms: the periodic save (every 5 s) writes what waited


def test_the_page_shows_saving_paused_until_the_log_takes_messages_again(
        pneuma_server: Any, open_page: Any, fake_claude: Any) -> None:
    server = pneuma_server("slide", claude_bin=fake_claude.bin)
    page = open_page(server)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting
    expect(page.locator(".saving-paused")).to_have_count(0)
    log = server.workspace / ".pneuma" / "conversation.db"
    holder = hold_lock(log)
    try:
        send(page, "hello while the log is held")
        banner = page.locator(".saving-paused")
        expect(banner).to_be_visible(timeout=TURN)
        expect(banner).to_contain_text("Saving is paused")
        expect(banner).to_contain_text("another process holds the conversation log")
        assert "conversation" in (banner.get_attribute("data-paused") or "")
        expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)  # the chat goes on
    finally:
        holder.communicate("")
    expect(page.locator(".saving-paused")).to_have_count(0, timeout=RESUMED)
    db = sqlite3.connect(f"{log.resolve().as_uri()}?mode=ro", uri=True)
    try:
        bodies = [row[0] for row in db.execute("SELECT body FROM messages")]
    finally:
        db.close()
    assert any("hello while the log is held" in body for body in bodies)
    assert not page.console_errors
