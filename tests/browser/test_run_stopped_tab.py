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
    attempts: list[str] = []
    page.on("websocket", lambda ws: attempts.append(ws.url))
    try:
        page.goto(line.split()[-1])
        expect(page.locator('.pill[data-state="open"]')).to_be_visible(timeout=15_000)
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
        page.wait_for_timeout(3_000)  # the first reconnect would come within a second or two
        assert len(attempts) == tried, attempts
    finally:
        page.context.close()
