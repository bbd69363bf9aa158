"""Issue 25, item 5 under stress: in Chromium with its back/forward cache,
the launcher left again and again in a random way (a new workspace from
the dialog, Open on a listed one, Open on a running one) and brought back
with Back, sometimes Forward and Back again. After every return the page
is usable: no dialog left open, no button left busy, the lists read
again. Bounded in moves and in time."""

from __future__ import annotations

import random
import re
import time
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import fake_claude  # noqa: F401 (the fixture)
from tests.browser.test_launcher import launcher  # noqa: F401 (the fixture)
from tests.browser.test_launcher_back import (  # noqa: F401 (the bfcache browser)
    _new_page,
    _wait_for_workspace,
    _watch_restores,
    browser,
)
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

MOVES = 6
TIME_CAP = 45.0  # seconds; the counts say how far it got
MODES = ["doc", "draw", "webcraft"]
WAIT = 45_000  # ms: generous, as a busy machine starts workspaces slowly; the time cap still bounds the run


def _leave(page: Any, rng: random.Random, made: list[str]) -> str:
    """Leave the launcher for a workspace page one of three ways; which."""
    fresh = [m for m in MODES if m not in made]
    if fresh and (not made or rng.random() < 0.4):
        mode = fresh[0]
        page.locator(f".ln-card[data-mode='{mode}']").click()
        page.locator(".ln-dialog button[type=submit]").click()
        made.append(mode)
        _wait_for_workspace(page, WAIT)
        return "new"
    mode = rng.choice(made)
    if rng.random() < 0.5:
        button = page.locator(".ln-row", has=page.locator(".ln-ws-name", has_text=mode)) \
            .locator(".ln-btn-primary")
        way = "open"
    else:
        button = page.locator(".ln-session", has=page.locator(".ln-ws-name", has_text=mode)) \
            .locator(".ln-btn-primary")
        way = "running"
    button.click()
    _wait_for_workspace(page, WAIT)
    return way


def test_back_to_the_launcher_leaves_it_usable_every_time(browser, launcher):  # noqa: F811
    rng = random.Random(25_5)
    served = launcher()
    page = _new_page(browser, "en-US")
    _watch_restores(page)
    started = time.monotonic()
    ways = {"new": 0, "open": 0, "running": 0}
    restored = forwards = stuck = 0
    made: list[str] = []
    try:
        page.goto(served.url)
        expect(page.locator(".ln-card")).to_have_count(12, timeout=10_000)
        moves = 0
        while moves < MOVES and time.monotonic() - started < TIME_CAP:
            ways[_leave(page, rng, made)] += 1
            page.go_back(wait_until="commit")  # a page from the cache fires no load
            if rng.random() < 0.3:
                page.go_forward(wait_until="commit")
                expect(page.locator('.pill[data-state="open"]')).to_be_visible(timeout=WAIT)
                page.go_back(wait_until="commit")
                forwards += 1
            expect(page).to_have_url(re.compile(re.escape(served.base)))
            expect(page.locator(".ln-card")).to_have_count(12, timeout=WAIT)
            restored += bool(page.evaluate("() => window.__restoredFromCache === true"))
            page.evaluate("() => { window.__restoredFromCache = false; }")
            try:
                expect(page.locator(".ln-dialog")).to_have_count(0)
                expect(page.locator(".ln-btn-primary", has_text="Opening…")).to_have_count(0)
                expect(page.locator(".ln-session")).to_have_count(len(made), timeout=WAIT)
            except AssertionError:
                stuck += 1
            moves += 1
    finally:
        page.context.close()
    record("25.5 launcher back", f"{count(moves)} returns with Back ({', '.join(f'{count(n)} from {w}' for w, n in ways.items())}; "
                                 f"{count(forwards)} with Forward and Back again), {count(restored)} from the "
                                 f"back/forward cache: {count(stuck)} left stuck")
    assert stuck == 0
    assert restored > 0, "Chromium never used its back/forward cache: the test saw nothing"
