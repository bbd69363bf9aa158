"""The webcraft viewer follows the agent (issue 26, item 5;
docs/viewer-contract.md, "Follow the agent"), in the real shell with the fake
CLI writing pages as Claude Code's Write tool does, in two tabs of one
workspace as a person with two windows has them:

* a turn that rewrites another page brings that page's tab to the front;
* in the tab where the person is editing a page's text in place, nothing
  moves (the edit stays under their caret) and a notice names the page;
* a page the agent broke (a script error) is marked on its tab.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send

TURN = 15_000  # ms a fake CLI turn may take in the page
SELECTED = '.webcraft-tab[aria-selected="true"]'


def page_line(title: str, script: str = "") -> str:
    """A one-line page, as the fake CLI's `write` writes one line."""
    return (f"<!doctype html><html lang='en'><head><title>{title}</title></head>"
            f"<body><h1>{title}</h1>{script}</body></html>")


def shown(page: Any) -> Any:
    return page.frame_locator('iframe.webcraft-frame[data-viewport="desktop"]')


def test_a_turn_brings_the_changed_page_to_the_front_unless_the_person_is_editing(
        pneuma_server: Any, fake_claude: Any, open_page: Any, tmp_path: Path) -> None:
    server = pneuma_server("webcraft", claude_bin=fake_claude.bin, env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    agent_tab = open_page(server)
    expect(agent_tab.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting
    person_tab = open_page(server)
    for page in (agent_tab, person_tab):
        expect(shown(page).locator("h1")).to_have_text("Notes that think with you.", timeout=TURN)

    # The person edits the heading in place in tab A; the agent rewrites about.html from tab B.
    heading = shown(person_tab).locator("h1")
    heading.dblclick()
    expect(heading).to_have_attribute("contenteditable", "plaintext-only")
    send(agent_tab, "write about.html " + page_line("About, rewritten"))
    expect(agent_tab.locator(SELECTED)).to_have_attribute("data-page", "about.html", timeout=TURN)
    expect(shown(agent_tab).locator("h1")).to_have_text("About, rewritten")
    expect(person_tab.locator(".follow-notice")).to_contain_text("about.html", timeout=TURN)
    expect(person_tab.locator(SELECTED)).to_have_attribute("data-page", "index.html")
    expect(heading).to_have_attribute("contenteditable", "plaintext-only")
    heading.press("Escape")
    expect(heading).not_to_have_attribute("contenteditable", "plaintext-only")

    # A page the agent writes with a script error: shown, and marked on its tab.
    send(agent_tab, "write broken.html " + page_line("Broken", "<script>missingThing.go()</script>"))
    expect(agent_tab.locator(SELECTED)).to_have_attribute("data-page", "broken.html", timeout=TURN)
    expect(agent_tab.locator('.webcraft-tab[data-page="broken.html"]')).to_have_class(
        re.compile(r"\bhas-problem\b"), timeout=TURN)
    assert "missingThing" in (agent_tab.locator('.webcraft-tab[data-page="broken.html"]').get_attribute("title") or "")
    # (Playwright also reports the broken page's own error, from inside its frame.)
    for page in (agent_tab, person_tab):
        assert [e for e in page.console_errors if "missingThing" not in e] == []
