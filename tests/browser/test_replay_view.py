"""Replay in Chromium against `pneuma run --mode slide` with the fake CLI
(issue 29, item 3): a 3-turn session played back shows turn 1's deck (and
what it changed, in slides), then
turn 2's by itself; the slider seeks to turn 3; paused, it stays where it
is; the conversation beside it holds the turns up to the one shown and no
later one; "Continue from here" on turn 1 goes back, files and
conversation, to just after turn 1 on a new branch; nothing of the
workspace is written by playing it back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send

TURN = 15_000  # ms a fake CLI turn may take in the page
CHANGED = "slides/03-point.html"
HEADINGS = ["Turn one heading", "Turn two heading", "Turn three heading"]


def slide(heading: str) -> str:
    return f'<section class="slide"><h2>{heading}</h2><p>Written by the agent.</p></section>'


def frame_text(page: Any) -> str:
    """The text of every slide the replay's drawn frame shows."""
    return page.locator('.replay-frame[data-ready="true"]').evaluate(
        "(el) => [...el.querySelectorAll('iframe')].map((f) => "
        "f.contentDocument && f.contentDocument.body ? f.contentDocument.body.innerText : '')"
        ".join('\\n')")


def shows_turn(page: Any, turn: int) -> None:
    panel = page.locator(".replay-panel")
    expect(panel).to_have_attribute("data-turn", str(turn), timeout=TURN)
    expect(page.locator(f'.replay-frame[data-ready="true"][data-turn="{turn}"]')).to_have_count(
        1, timeout=TURN)
    page.wait_for_function(
        "(heading) => [...document.querySelectorAll('.replay-frame[data-ready=\"true\"] iframe')]"
        ".some((f) => f.contentDocument && f.contentDocument.body"
        " && f.contentDocument.body.innerText.includes(heading))",
        arg=HEADINGS[turn - 1], timeout=TURN)
    text = frame_text(page)
    for other in HEADINGS:
        if other != HEADINGS[turn - 1]:
            assert other not in text, (turn, other)
    entries = page.locator(".replay-transcript .replay-turn")
    expect(entries).to_have_count(turn)
    expect(entries.last.locator(".replay-user")).to_contain_text(f"write {CHANGED}")


def workspace_files(workspace: Path) -> dict[str, bytes]:
    return {p.relative_to(workspace).as_posix(): p.read_bytes()
            for p in workspace.rglob("*") if p.is_file() and ".pneuma" not in p.parts}


def test_replay_plays_seeks_pauses_and_continues_from_a_turn(pneuma_server, fake_claude, open_page):
    server = pneuma_server("slide", claude_bin=fake_claude.bin)
    page = open_page(server)
    Path("/tmp/pneuma-screenshots").mkdir(parents=True, exist_ok=True)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting
    for n, heading in enumerate(HEADINGS, start=2):
        send(page, f"write {CHANGED} {slide(heading)}")
        expect(page.locator(".result-line")).to_have_count(n, timeout=TURN)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle", timeout=TURN)
    before = workspace_files(server.workspace)

    page.locator(".replay-open").click()
    panel = page.locator(".replay-panel")
    expect(panel).to_have_attribute("data-playing", "true")
    shows_turn(page, 1)  # each turn stays 2 s at 1x
    # What the turn changed, in the mode's terms, under its message.
    expect(page.locator('.replay-turn[data-turn="1"] .replay-changes')).to_contain_text("Slide 3")
    expect(panel).to_have_attribute("data-turn", "2", timeout=TURN)  # by itself: it plays
    panel.locator(".replay-play").click()  # pause
    expect(panel).to_have_attribute("data-playing", "false")
    shows_turn(page, 2)

    panel.locator(".replay-seek").fill("3")
    shows_turn(page, 3)
    panel.locator(".replay-speed select").select_option("4")
    panel.locator(".replay-seek").fill("1")
    shows_turn(page, 1)
    # Paused, it stays: three times what a turn is shown for at 4x.
    page.wait_for_timeout(1500)
    expect(panel).to_have_attribute("data-turn", "1")
    page.screenshot(path="/tmp/pneuma-screenshots/replay-turn-1.png")
    assert workspace_files(server.workspace) == before  # playing back wrote nothing

    # Continue from turn 1: back to just before turn 2, files and conversation.
    panel.locator(".replay-continue").click()
    dialog = page.locator(".rewind-dialog")
    expect(dialog).to_have_attribute("data-target", "2")
    expect(dialog.locator('.rewind-choice-item[data-choice="both"] input')).to_be_checked()
    dialog.locator(".rewind-confirm").click()
    expect(dialog).to_have_count(0, timeout=TURN)
    assert HEADINGS[0] in (server.workspace / CHANGED).read_text()
    page.locator(".replay-close").click()
    expect(panel).to_have_count(0)
    expect(page.locator(".chat .msg.user").filter(
        has_text=f"write {CHANGED}")).to_have_count(1, timeout=TURN)
