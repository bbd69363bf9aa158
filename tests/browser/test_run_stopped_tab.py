"""A tab of `pneuma run` stopped in its terminal (Ctrl-C, SIGTERM) is told
so before its server closes (issue 25, item 7): one line saying where it
was stopped, sending off, no reconnecting to a port nobody serves."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.test_launcher import _new_page
from tests.pneuma_process import no_server_left, start_run  # noqa: F401 (autouse fixture)


def test_a_tab_of_a_run_stopped_in_its_terminal_says_so_and_stops(
        browser: Any, tmp_path: Path) -> None:
    proc = start_run(tmp_path / "notes", "doc", "--port", "0", "--backend", "socket")
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("[pneuma] ready "), line
    page = _new_page(browser, "en-US")
    page.clock.install()  # the page's timers run only when the test says
    attempts: list[str] = []
    page.on("websocket", lambda ws: attempts.append(ws.url))
    saves: list[str] = []
    page.on("request", lambda r: saves.append(r.url) if "/api/preferences" in r.url
            and r.method == "POST" else None)
    try:
        page.goto(line.split()[-1])
        expect(page.locator('.pill[data-state="open"]')).to_be_visible(timeout=15_000)
        # The viewer has all it loads (its module, styles and the seed's
        # picture): a stop meanwhile would fail those loads, not the tab.
        expect(page.locator(".pd-doc h1").first).to_be_visible(timeout=10_000)
        page.wait_for_load_state("networkidle")
        # A change whose save is still waiting when the server stops.
        page.evaluate("""() => import('/static/lib/preferences.js')
            .then((m) => m.setPreference('chatWidth', 500))""")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        ended = page.locator(".session-ended")
        expect(ended).to_have_attribute("data-ended", "terminal", timeout=10_000)
        expect(ended).to_contain_text("stopped in its terminal")
        expect(page.locator(".composer textarea")).to_be_disabled()
        expect(page.locator(".composer textarea")).to_have_attribute(
            "placeholder", "Stopped: sending is off")
        expect(page.locator(".composer .send")).to_be_disabled()
        tried = len(attempts)
        page.clock.run_for(60_000)  # any reconnect, and the waiting save, would be due
        page.evaluate("() => new Promise((r) => setTimeout(r, 0))")
        assert len(attempts) == tried, attempts
        assert saves == [], "a save knocked on the stopped server's port"
        assert [e for e in page.console_errors] == []
    finally:
        page.context.close()
