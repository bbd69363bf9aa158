"""The viewer follows the agent (issue 26, item 5; docs/notifications.md).

Two tabs of one slide workspace, as a person with two windows has them:
the agent's turns (the fake CLI writing a slide file, as Claude Code's Write
tool does) start in tab B. A turn that rewrites slide 3 while slide 1 is on
screen brings slide 3 to the front; in tab A, where the person has text in
the composer, nothing moves and a notice with Show names the file instead,
and Show brings it; with "Follow the agent" off, nothing moves at all.
What is on screen is read where the person reads it: the header's current
file, which the slide viewer sets for the slide it shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send

TURN = 15_000  # ms a fake CLI turn may take in the page
ON_SCREEN = ".crumbs .active-file"


def slide_line(title: str) -> str:
    """A one-line slide file, as the fake CLI's `write` writes one line."""
    return f'<section class="slide"><h1>{title}</h1></section>'


def go_to_first_slide(page: Any) -> None:
    page.locator('.pns-thumb').first.click()
    expect(page.locator(ON_SCREEN)).to_have_text("slides/01-title.html")


def test_a_turn_brings_the_changed_slide_to_the_front_unless_the_person_is_busy(
        pneuma_server: Any, fake_claude: Any, open_page: Any, tmp_path: Path, shot: Any) -> None:
    server = pneuma_server("slide", claude_bin=fake_claude.bin, env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    agent_tab = open_page(server)
    expect(agent_tab.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting
    person_tab = open_page(server)
    expect(person_tab.locator(".result-line")).to_have_count(1, timeout=TURN)
    for page in (agent_tab, person_tab):
        expect(page.locator(ON_SCREEN)).to_have_text("slides/01-title.html", timeout=TURN)

    # The person types in tab A; the agent rewrites slide 3 from tab B's message.
    person_tab.locator(".composer textarea").fill("and then make the title")
    send(agent_tab, "write slides/03-point.html " + slide_line("Point, rewritten"))
    expect(agent_tab.locator(ON_SCREEN)).to_have_text("slides/03-point.html", timeout=TURN)
    notice = person_tab.locator(".follow-notice")
    expect(notice).to_contain_text("The agent changed slides/03-point.html", timeout=TURN)
    expect(person_tab.locator(ON_SCREEN)).to_have_text("slides/01-title.html")
    expect(person_tab.locator(".composer textarea")).to_have_value("and then make the title")
    shot(person_tab, "follow-notice")
    notice.locator(".follow-show").click()
    expect(person_tab.locator(ON_SCREEN)).to_have_text("slides/03-point.html")
    expect(notice).to_have_count(0)

    # Following off (under the bell) in tab A: the next turn moves only tab B.
    person_tab.locator(".composer textarea").fill("")
    go_to_first_slide(person_tab)
    person_tab.locator(".attention-btn").click()
    person_tab.locator("[data-switch=followAgent] input").uncheck()
    person_tab.keyboard.press("Escape")
    go_to_first_slide(agent_tab)
    send(agent_tab, "write slides/02-problem.html " + slide_line("The problem, rewritten"))
    expect(agent_tab.locator(ON_SCREEN)).to_have_text("slides/02-problem.html", timeout=TURN)
    person_tab.wait_for_function("""() => window.pneuma.ui.host.files.some((f) =>
        f.path === 'slides/02-problem.html' && f.content.includes('The problem, rewritten'))""")
    expect(person_tab.locator(ON_SCREEN)).to_have_text("slides/01-title.html")
    expect(person_tab.locator(".follow-notice")).to_have_count(0)
    assert agent_tab.console_errors == [] and person_tab.console_errors == []
