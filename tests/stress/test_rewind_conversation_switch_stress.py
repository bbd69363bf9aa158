"""Issue 25, item 4 under stress: in Chromium, three conversations, each
with a turn that changed a file, shown in a random order of switches and
reloads: after every one, each turn of the shown conversation still says
what it changed and offers "Rewind to here"."""

from __future__ import annotations

import random
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser, fake_claude, open_page, pneuma_server  # noqa: F401 (fixtures)
from tests.browser.test_rewind_from_chat import TURN, doc_chat, pick, turn
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

CONVERSATIONS = 3
MOVES = 12


def _new_conversation(page: Any) -> None:
    page.locator(".conv-bar .conv-new").click()
    expect(page.locator(".msg.user")).to_have_count(0, timeout=TURN)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle", timeout=TURN)


def test_switches_and_reloads_keep_every_turns_changes(pneuma_server, fake_claude, open_page):  # noqa: F811
    rng = random.Random(25_4)
    _server, page = doc_chat(pneuma_server, fake_claude, open_page)
    titles: list[str] = []
    for index in range(CONVERSATIONS):
        if index:
            _new_conversation(page)
        title = f"conversation{index}"
        turn(page, f"write notes/{title}.md Written in {title}", 2)
        titles.append(title)
    shown, moves = titles[-1], {"switches": 0, "reloads": 0, "lost": 0}
    for _ in range(MOVES):
        if rng.random() < 0.25:
            page.reload()
            page.wait_for_selector('.pill[data-state="open"]', timeout=10_000)
            moves["reloads"] += 1
        else:
            shown = rng.choice([t for t in titles if t != shown])
            pick(page, shown)
            moves["switches"] += 1
        expect(page.locator(".msg.user .bubble")).to_have_text(
            [f"write notes/{shown}.md Written in {shown}"], timeout=TURN)
        chip = page.locator(".turn-changes .changes-chip")
        try:
            expect(chip).to_contain_text("1 file changed", timeout=TURN)
            expect(page.locator(".turn-changes .rewind-btn")).to_be_visible()
        except AssertionError:
            moves["lost"] += 1
    record("25.4 rewind after switches",
           f"{count(CONVERSATIONS)} conversations, {count(moves['switches'])} switches and "
           f"{count(moves['reloads'])} reloads: {count(moves['lost'])} turns without their changes or rewind")
    assert moves["lost"] == 0
    assert page.console_errors == []
