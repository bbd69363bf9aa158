"""A workspace's tab when its session is over (issue 25, item 7), in real
Chromium: stopped from the launcher, the tab says so in one line with a
link back to the launcher, disables sending and stops reconnecting; when
its server is gone without a word, it retries with a bounded backoff and
then says the server is gone instead of spinning forever.

Time runs on Playwright's clock (``page.clock``), so a minute of backoff
takes no minute; the page's socket attempts are counted with
``page.on("websocket")``, and a socket of the test's own is the barrier
that every attempt made before it has been seen."""

from __future__ import annotations

import json
import os
import re
import signal
import urllib.request
from typing import Any
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import expect

from tests.browser.browser_helpers import kill_process_group
from tests.browser.test_launcher import _new_page, launcher  # noqa: F401  (the fixture)

WORKSPACE_PAGE = re.compile(r"/\?session=[^&]+&token=")
BACKOFF_STEP_MS = 13_000  # the longest single wait: 10 s with its 20 % jitter, and some


def _count_sockets(page: Any) -> list[str]:
    attempts: list[str] = []
    page.on("websocket", lambda ws: attempts.append(ws.url))
    return attempts


def _attempts_so_far(page: Any, attempts: list[str]) -> list[str]:
    """The page's socket attempts, all of them seen: a probe socket of the
    test's own is opened and waited for; the browser reports sockets in the
    order they are made."""
    with page.expect_websocket(lambda ws: ws.url.endswith("/probe")):
        page.evaluate("() => { new WebSocket(`ws://${location.host}/probe`); }")
    return [url for url in attempts if not url.endswith("/probe")]


def _launcher_stop(served: Any, path: str) -> None:
    token = parse_qs(urlparse(served.url).query)["token"][0]
    request = urllib.request.Request(
        f"{served.base}/api/sessions/stop", data=json.dumps({"path": path}).encode(), method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200


def _sending_is_off(page: Any, placeholder: str) -> None:
    expect(page.locator(".composer textarea")).to_be_disabled()
    expect(page.locator(".composer textarea")).to_have_attribute("placeholder", placeholder)
    expect(page.locator(".composer .send")).to_be_disabled()


def test_a_tab_of_a_workspace_stopped_from_the_launcher_says_so_and_stops(
        browser, launcher, shot):  # noqa: F811
    served = launcher()
    page = _new_page(browser, "en-US")
    page.clock.install()
    attempts = _count_sockets(page)
    try:
        page.goto(served.url)
        page.locator(".ln-card[data-mode='doc']").click()
        page.locator(".ln-dialog button[type=submit]").click()
        page.wait_for_url(WORKSPACE_PAGE, timeout=20_000)
        expect(page.locator('.pill[data-state="open"]')).to_be_visible(timeout=15_000)
        expect(page.locator(".composer textarea")).to_be_enabled()
        expect(page.locator(".pd-doc h1").first).to_contain_text(  # the viewer has all it loads
            "Welcome to your document workspace", timeout=10_000)
        page.wait_for_load_state("networkidle")  # its pictures too: a stop must not cut a load
        workspace = str((served.home / "Pneuma" / "doc").resolve())

        _launcher_stop(served, workspace)
        ended = page.locator(".session-ended")
        expect(ended).to_have_attribute("data-ended", "stopped", timeout=10_000)
        expect(ended).to_contain_text("This workspace was stopped from the launcher")
        expect(page.locator(".pill")).to_have_attribute("data-state", "stopped")
        _sending_is_off(page, "Stopped: sending is off")
        reopen = urlparse(ended.locator("a.session-reopen").get_attribute("href"))
        assert f"{reopen.scheme}://{reopen.netloc}" == served.base
        assert parse_qs(reopen.query) == {"reopen": [workspace]}  # and no token
        shot(page, "workspace-stopped-from-launcher")

        # No attempt to reach the stopped server, however long the tab stays open.
        before = _attempts_so_far(page, attempts)
        page.clock.run_for(5 * 60_000)
        assert _attempts_so_far(page, attempts) == before
        page.locator(".pill").click()  # not even when asked to
        assert _attempts_so_far(page, attempts) == before
        expect(page.locator(".pill")).to_have_attribute("data-state", "stopped")

        # The link goes to the launcher, its row shown with Open focused;
        # a click there serves the workspace again.
        ended.locator("a.session-reopen").click()
        page.wait_for_url(re.compile(re.escape(served.base) + r"/$"), timeout=10_000)
        row = page.locator(".ln-row.is-reopen")
        expect(row).to_have_attribute("data-path", workspace, timeout=10_000)
        expect(row.locator(".ln-btn-primary")).to_be_focused()
        page.keyboard.press("Enter")
        page.wait_for_url(WORKSPACE_PAGE, timeout=20_000)
        expect(page.locator('.pill[data-state="open"]')).to_be_visible(timeout=15_000)
        expect(page.locator(".composer textarea")).to_be_enabled()
        assert [e for e in page.console_errors if "probe" not in e] == []
    finally:
        page.context.close()


def test_a_tab_whose_server_is_gone_gives_up_after_a_bounded_backoff(
        browser, pneuma_server, shot):
    server = pneuma_server("doc", backend="none")
    page = _new_page(browser, "en-US")
    page.clock.install()
    attempts = _count_sockets(page)
    try:
        page.goto(server.url)
        expect(page.locator('.pill[data-state="open"]')).to_be_visible(timeout=15_000)
        # Gone without a word (SIGTERM would tell the tab it was stopped).
        os.killpg(server.process.pid, signal.SIGKILL)
        kill_process_group(server.process)

        pill = page.locator(".pill")
        expect(pill).to_have_attribute("data-state", "reconnecting", timeout=10_000)
        for _ in range(20):  # eight retries at most: this bounds the loop, not the page
            if pill.get_attribute("data-state") == "gone":
                break
            page.clock.run_for(BACKOFF_STEP_MS)
            page.wait_for_function(
                "() => ['reconnecting', 'gone'].includes(window.pneuma.store.state.connection.state)",
                polling=50)
        expect(pill).to_have_attribute("data-state", "gone")
        tried = _attempts_so_far(page, attempts)
        assert 2 <= len(tried) <= 1 + 8, tried  # the first connection and at most eight retries

        ended = page.locator(".session-ended")
        expect(ended).to_have_attribute("data-ended", "gone")
        expect(ended).to_contain_text("This workspace's server is gone")
        _sending_is_off(page, "Server gone: sending is off")
        shot(page, "workspace-server-gone")

        page.clock.run_for(5 * 60_000)
        assert _attempts_so_far(page, attempts) == tried  # no more by itself
        ended.locator(".session-retry").click()  # one more when asked
        expect(pill).to_have_attribute("data-state", "gone", timeout=10_000)
        assert len(_attempts_so_far(page, attempts)) == len(tried) + 1
    finally:
        page.context.close()
