"""A shared file dropped on the launcher's page in real Chromium (issue 29,
item 2): the page offers "Open as a new workspace", naming the work, its
mode and its turns; opened, the workspace's page shows the shared
conversation as its history, its files are the last turn's, and Replay
draws each shared turn from the workspace's own checkpoints. Another
file dropped is said not to be a shared file."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from pneuma.share.model import fill_template
from tests.browser.test_launcher import _new_page, launcher  # noqa: F401 (the fixture)
from tests.share.test_open import DECK_2, TEMPLATE, shared_deck

DROP = """([name, text]) => {
  const transfer = new DataTransfer();
  transfer.items.add(new File([text], name, { type: 'text/html' }));
  document.querySelector('.ln-main').dispatchEvent(
    new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
}"""


def test_a_shared_file_dropped_on_the_launcher_opens_as_a_new_workspace(browser, launcher):  # noqa: F811
    served = launcher()
    page = _new_page(browser, "en-US")
    try:
        page.goto(served.url)
        expect(page.locator(".ln-card")).not_to_have_count(0, timeout=10_000)
        page.evaluate(DROP, ["notes.html", "<!doctype html><p>just a page</p>"])
        expect(page.locator(".ln-notice")).to_contain_text("notes.html is not a file shared from Pneuma")

        page.evaluate(DROP, ["deck.html", fill_template(TEMPLATE, shared_deck())])
        dialog = page.locator(".ln-shared-dialog")
        expect(dialog.locator("h2")).to_have_text("Open deck.html")
        expect(dialog.locator(".ln-shared-about")).to_contain_text("“Launch deck”")
        expect(dialog.locator(".ln-shared-about")).to_contain_text("2 turns and 4 messages")
        dialog.locator(".ln-shared-open").click()
        page.wait_for_url(re.compile(r"/\?session=[^&]+&token="), timeout=20_000)
        users = page.locator(".chat .msg.user")
        expect(users).to_have_count(2, timeout=15_000)
        expect(users.first).to_contain_text("make a deck")
        expect(page.locator(".chat")).to_contain_text("Retitled slide 1 and added slide 3.")
        # Its turns are the workspace's own checkpoints: Replay draws each one.
        page.locator(".replay-open").click()
        panel = page.locator(".replay-panel")
        expect(panel.locator(".replay-note")).to_contain_text("deck.html")
        panel.locator(".replay-play").click()  # pause on turn 1
        for turn, heading in ((1, "Hello"), (2, "Hello again")):
            panel.locator(".replay-seek").fill(str(turn))
            frame = page.locator(f'.replay-frame[data-ready="true"][data-turn="{turn}"]')
            expect(frame).to_have_count(1, timeout=15_000)
            page.wait_for_function(
                "(h) => [...document.querySelectorAll('.replay-frame[data-ready=\"true\"] iframe')]"
                ".some((f) => f.contentDocument && f.contentDocument.body"
                " && f.contentDocument.body.innerText.trim() === h)", arg=heading, timeout=15_000)
        workspace = served.home / "Pneuma" / "Launch deck"
        assert (workspace / "slides" / "01-deck.html").read_bytes() == DECK_2
    finally:
        page.context.close()
