"""The shell in Chromium against `pneuma run --backend native`.

The model is the fake Messages API (tests/fakes/anthropic_api.py), served
with the local test pages from a background thread; the browser client is a
real `pneuma browser-client` subprocess (headless Chromium of its own). The
person's side is this test driving the page: the client picker, the
confirmation dialog with its summary, the streamed chat, the tool cards and
the live twin of the selected client's tabs. Screenshots land in
$PNEUMA_SCREENSHOTS (see conftest).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from playwright.sync_api import expect

from tests.browser.browser_helpers import api_call, send
from tests.fakes.anthropic_api import FakeAnthropicAPI, text, tool_use

PAGES = Path(__file__).resolve().parents[1] / "native" / "pages"
STEP = 20_000  # ms a step may take in the page (Chromium clients are slow to start)
CLIENT_NAME = "Test Chromium"


class Background:
    """The fake Messages API and the local pages on an event loop in a thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.api = FakeAnthropicAPI()
        self.call(self.api.start())
        self._pages = web.AppRunner(self._pages_app(), access_log=None)
        self.call(self._pages.setup())
        site = web.TCPSite(self._pages, "127.0.0.1", 0)
        self.call(site.start())
        self.pages = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]

    @staticmethod
    def _pages_app() -> web.Application:
        app = web.Application()
        app.router.add_static("/", PAGES)
        return app

    def call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def push(self, *blocks: Any, delay: float = 0.0) -> None:
        async def push() -> None:
            self.api.push(*blocks, delay=delay)

        self.call(push())

    def close(self) -> None:
        self.call(self._pages.cleanup())
        self.call(self.api.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture
def background() -> Iterator[Background]:
    servers = Background()
    yield servers
    servers.close()


def get(server: Any, path: str) -> Any:
    """The server's JSON answer to an authorised GET."""
    status, answer = api_call(server, "GET", path, timeout=10)
    assert status == 200, (status, answer)
    return answer


def browser_clients(server: Any) -> list[dict[str, Any]]:
    return [c for c in get(server, "/api/extension/extension-list")["clients"]
            if c["kind"] == "browser"]


@pytest.fixture
def browser_client() -> Iterator[Any]:
    started: list[subprocess.Popen] = []

    def start(server: Any, client_id: str = "ui-client") -> subprocess.Popen:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        process = subprocess.Popen(
            [str(Path(sys.executable).with_name("pneuma")), "browser-client", "--server", server.base,
             "--token", server.token, "--client-id", client_id, "--name", CLIENT_NAME],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=env, start_new_session=True)
        started.append(process)
        deadline = time.monotonic() + 30
        while not any(c["clientId"] == client_id and c["online"] for c in browser_clients(server)):
            assert process.poll() is None, process.stderr.read().decode(errors="replace")
            assert time.monotonic() < deadline, "the browser client did not come online"
            time.sleep(0.2)
        return process

    yield start
    for process in started:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(10)


def native_server(pneuma_server: Any, background: Background) -> Any:
    return pneuma_server("slide", backend="native", env={
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": background.api.base_url,
        "PNEUMA_NATIVE_MODEL": "claude-fake-1"})


def test_browser_task_picker_confirmation_twin_and_streamed_chat(
        pneuma_server, background, browser_client, open_page, shot):
    server = native_server(pneuma_server, background)
    browser_client(server)
    page = open_page(server)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle")
    expect(page.locator(".browser-twin")).to_have_count(0)  # no client selected yet: no twin

    article = f"{background.pages}/article.html"
    summary = "The page is about **tide pools** north of the harbour: anemones, hermit crabs and sculpins. " * 3
    background.push(text("Let me look at the links first."),
                    tool_use("browser_xpath_scan", {"scope": "document"}))
    background.push(text(summary, chunk=6), delay=0.03)
    send(page, f"Summarise {article} for me")

    # No client selected: the picker offers the connected one (never a viewer tab).
    picker = page.locator('.modal[data-kind="browser-picker"]')
    expect(picker).to_be_visible(timeout=STEP)
    expect(picker.locator(".browser-clients li")).to_have_count(1)
    expect(picker.locator(".browser-clients li")).to_contain_text(CLIENT_NAME)
    expect(picker.locator(".browser-clients li")).to_contain_text("online")
    shot(page, "native-1-picker")
    picker.get_by_role("button", name=CLIENT_NAME).click()
    expect(picker).to_have_count(0)

    # Then the confirmation, with the summary of what will happen.
    dialog = page.locator('.modal[data-kind="browser_task"]')
    expect(dialog).to_be_visible(timeout=STEP)
    expect(dialog.locator("h2")).to_have_text("Let the agent use your browser?")
    expect(dialog.locator(".modal-summary")).to_contain_text(f"Open {article}")
    expect(dialog.locator(".detail-client")).to_contain_text(CLIENT_NAME)
    expect(dialog.locator(".detail-url")).to_contain_text(article)
    expect(dialog).not_to_contain_text("viewer-context")  # the person's words only
    expect(dialog.locator(".detail-taskId")).to_have_count(0)
    shot(page, "native-2-confirm")
    dialog.get_by_role("button", name="Approve").click()
    expect(dialog).to_have_count(0)

    # The task runs: the tool card, then the answer streaming in.
    card = page.locator('.tool-card[data-tool="browser_xpath_scan"]')
    expect(card).to_be_visible(timeout=STEP)
    expect(page.locator(".md.streaming")).to_be_visible(timeout=STEP)
    shot(page, "native-3-streaming")
    expect(page.locator(".result-line")).to_have_count(1, timeout=STEP)
    expect(card).to_have_class("tool-card done")
    expect(page.locator(".msg.assistant .md strong").last).to_have_text("tide pools")
    card.locator(".tool-head").click()
    expect(card.locator(".tool-body")).to_contain_text("xpath")

    # The live twin of the selected client shows the task's tab.
    twin = page.locator(".browser-twin")
    expect(twin).to_be_visible()
    expect(twin.locator("summary")).to_contain_text(CLIENT_NAME)
    twin.locator("summary").click()
    expect(twin.locator("li.active .tab-title")).to_have_text("Tide pools of the north coast")
    expect(twin.locator("li.active .tab-url")).to_have_text(article)
    shot(page, "native-4-done-twin")

    # A second browser task: no picker (the client stays selected), a new
    # confirmation, and the twin follows the tab to the new page.
    form = f"{background.pages}/form.html"
    background.push(text("The form greets you by name."))
    send(page, f"What does {form} do?")
    dialog = page.locator('.modal[data-kind="browser_task"]')
    expect(dialog).to_be_visible(timeout=STEP)
    expect(picker).to_have_count(0)
    dialog.get_by_role("button", name="Approve").click()
    expect(page.locator(".result-line")).to_have_count(2, timeout=STEP)
    expect(twin.locator("li.active .tab-title")).to_have_text("Greeting form", timeout=STEP)
    expect(twin.locator("summary")).to_contain_text("1 tab")
    shot(page, "native-5-twin-updated")

    statuses = [t["status"] for t in get(server, "/api/tasks")["tasks"]]
    assert statuses == ["completed", "completed"]
    assert page.console_errors == []


def test_reloaded_page_shows_the_twin_and_picker_uses_the_socket(
        pneuma_server, background, browser_client, open_page, shot):
    server = native_server(pneuma_server, background)
    browser_client(server)
    page = open_page(server)
    sent: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(str(payload))))
    page.reload()
    page.wait_for_selector('.pill[data-state="open"]', timeout=10_000)

    # The picker's Cancel stops a task that waits for a browser.
    send(page, f"Read {background.pages}/form.html")
    picker = page.locator('.modal[data-kind="browser-picker"]')
    expect(picker).to_be_visible(timeout=STEP)
    picker.get_by_role("button", name="Cancel the task").click()
    expect(picker).to_have_count(0)
    expect(page.locator(".result-line")).to_have_count(1, timeout=STEP)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle")
    assert [t["status"] for t in get(server, "/api/tasks")["tasks"]] == ["ongoing"]

    background.push(text("It is about tide pools."))
    send(page, f"Read {background.pages}/article.html")
    expect(picker).to_be_visible(timeout=STEP)
    picker.get_by_role("button", name=CLIENT_NAME).click()
    dialog = page.locator('.modal[data-kind="browser_task"]')
    expect(dialog).to_be_visible(timeout=STEP)
    assert any('"select_browser"' in frame and "ui-client" in frame for frame in sent)
    dialog.get_by_role("button", name="Approve").click()
    expect(page.locator(".result-line")).to_have_count(2, timeout=STEP)

    # A fresh tab learns the selection and the twin over HTTP at start.
    fresh = open_page(server)
    twin = fresh.locator(".browser-twin")
    expect(twin).to_be_visible(timeout=STEP)
    expect(twin.locator("summary")).to_contain_text(CLIENT_NAME)
    shot(fresh, "native-6-fresh-tab-twin")
    listing = get(server, "/api/extension/extension-list")
    viewers = [c for c in listing["clients"] if c["kind"] == "viewer" and c["online"]]
    assert len(viewers) == 2 and {v["mode"] for v in viewers} == {"slide"}
    assert fresh.console_errors == [] and page.console_errors == []
