"""One turn of the REAL Claude Code CLI in the print mode (issue 30, "Done
when"): `pneuma run --mode print` with the CLI against the fake Anthropic
Messages API (tests/fakes/anthropic_api.py), the shell open in Debian's
Chromium, everything in the loopback-only network namespace of the root
conftest.

The person clicks a heading on page 2 and asks for a new one; the request
the model receives carries the page and the element as viewer context; the
scripted model reads the page's file and edits it with the CLI's own Edit
tool; the sheet in Chromium then shows the new heading, no page overflows,
and "Compare" shows the page before and after the turn, read-only.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import send
from tests.browser.test_agent_viewer_actions import (
    TURN,
    ThreadedFakeAPI,
    fake_api,  # noqa: F401 (the fixture)
    start_with_real_cli,
)
from tests.e2e.pneuma_run import CLAUDE_BIN
from tests.fakes.anthropic_api import text, tool_use
from tests.loopback import fail_unless_loopback_only

pytestmark = pytest.mark.skipif(
    CLAUDE_BIN is None,
    reason="the real Claude Code CLI is not installed: pip install claude-agent-sdk==0.2.187",
)
HOST = "window.pneuma.ui.host"
PAGE = "pages/02-the-year.html"


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    fail_unless_loopback_only("the print agent turn", "tests/browser/test_print_agent_turn.py")


def test_the_agent_edits_the_page_the_person_pointed_at_and_the_sheet_shows_it(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:
    fake_api.push(text("Hi! A three-page A4 report is open."))
    server = start_with_real_cli(pneuma_server, fake_api, "print")
    page = open_page(server, viewport={"width": 1400, "height": 900})
    page.wait_for_function(f"() => {HOST} && {HOST}.instance && {HOST}.instance.sheets.length === 3")
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn
    heading = page.frame_locator(".pnp-sheet[data-page='2'] iframe").locator("h1")
    expect(heading).to_have_text("The year in numbers")
    heading.click()

    path = str(server.workspace / PAGE)
    fake_api.push(tool_use("Read", {"file_path": path}))
    fake_api.push(tool_use("Edit", {"file_path": path, "old_string": "<h1>The year in numbers</h1>",
                                    "new_string": "<h1>A record harvest</h1>"}))
    fake_api.push(text("Page 2's heading now reads “A record harvest”."))
    send(page, "Make this heading say what the year was like")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    assert fake_api.pending() == 0

    # The model was told which page and which element the person meant.
    asked = fake_api._on_loop(lambda: fake_api.api.conversation_requests())
    # The person's message, wherever the CLI put it in the request (it may
    # add a system note after it: "deferred tools are now available", once its
    # MCP servers connect, whose timing varies).
    said = [m for r in asked for m in r["messages"]
            if m.get("role") == "user" and "what the year was like" in str(m["content"])]
    assert said, [str(r["messages"][-1])[:200] for r in asked]
    content = said[0]["content"]
    context = content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)
    assert f'<viewer-context mode="print" file="{PAGE}" page="2">' in context, context
    assert 'Selected: <h1> "The year in numbers"' in context and "Selector: body > h1" in context

    # On disk and on the sheet: the new heading, the rest of the page as it was.
    assert "<h1>A record harvest</h1>" in (server.workspace / PAGE).read_text(encoding="utf-8")
    expect(heading).to_have_text("A record harvest", timeout=10_000)
    expect(page.locator(".pnp-sheet.is-overflowing")).to_have_count(0)
    shot(page, "print-agent-turn")

    # "Compare" mounts the viewer twice more, read-only, over the turn's two
    # checkpoints: each side's page 2 shows that side's heading.
    row = page.locator('.turn-changes[data-ref="1"]')
    expect(row.locator(".compare-btn")).to_be_visible(timeout=TURN)
    row.locator(".compare-btn").click()
    expect(page.locator(".compare-panel")).to_have_attribute("data-ready", "true", timeout=TURN)
    for side, words in (("before", "The year in numbers"), ("after", "A record harvest")):
        scope = f'.compare-side[data-side="{side}"] .pnp-sheet[data-page="2"] iframe'
        expect(page.frame_locator(scope).locator("h1")).to_have_text(words, timeout=TURN)
        expect(page.locator(f'.compare-side[data-side="{side}"] .pnp-root')).to_have_class("pnp-root is-readonly")
    shot(page, "print-compare")
    page.keyboard.press("Escape")
    assert page.console_errors == []
