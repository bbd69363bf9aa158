"""`pneuma run --mode slide --backend codex` in a real browser: the REAL
Codex CLI against the fake Responses API (tests/fakes/openai_responses.py),
Chromium through Playwright, all inside the loopback-only namespace.

The fake API runs on its own event loop in a thread (Playwright's sync API
owns this one). The person sees a streamed reply, and a slide the agent
rewrites with apply_patch changes on the stage without a reload.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from pneuma.agents.codex.binary import find_codex_binary, pinned_binary
from tests.browser.browser_helpers import send
from tests.codex.codex_helpers import RecordingProxy, codex_config
from tests.fakes.openai_responses import TEXT_REPLY, FakeResponsesAPI

# The pinned version when scripts/install brought it, else whichever is found.
CODEX_BIN = pinned_binary() or find_codex_binary()
TURN = 30_000  # ms a Codex turn may take in the page

pytestmark = pytest.mark.skipif(
    CODEX_BIN is None,
    reason="the Codex CLI is not installed: scripts/install (npm @openai/codex@0.169.0)",
)


class ThreadedFakes:
    """The fake Responses API and the recording proxy, served from a
    thread with its own event loop."""

    def __init__(self) -> None:
        self.api = FakeResponsesAPI()
        self.proxy = RecordingProxy()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> ThreadedFakes:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.api.start(), self.loop).result(10)
        asyncio.run_coroutine_threadsafe(self.proxy.start(), self.loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.api.close(), self.loop).result(10)
        asyncio.run_coroutine_threadsafe(self.proxy.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture
def fakes() -> Iterator[ThreadedFakes]:
    with ThreadedFakes() as running:
        yield running


def codex_env(tmp_path: Path, fakes: ThreadedFakes) -> dict[str, str]:
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(codex_config(fakes.api.base_url))
    env = {"CODEX_HOME": str(codex_home), "FAKE_OPENAI_API_KEY": "sk-fake",
           "PNEUMA_CODEX_BIN": str(CODEX_BIN), "OPENAI_API_KEY": "", "RUST_LOG": "warn",
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy",
                 "all_proxy"):
        env[name] = fakes.proxy.url
    return env


def test_codex_streams_a_reply_and_rewrites_a_slide_live(tmp_path: Path, fakes: ThreadedFakes,
                                                        pneuma_server: Any, open_page: Any,
                                                        shot: Any) -> None:
    server = pneuma_server("slide", backend="codex", env=codex_env(tmp_path, fakes))
    page = open_page(server)
    # The hidden greeting turn of a fresh slide session.
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle")

    send(page, "Say hello")
    expect(page.locator(".msg.user .bubble")).to_have_text("Say hello")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    replies = page.locator(".msg.assistant .md", has_text=TEXT_REPLY)
    expect(replies).to_have_count(2)  # the greeting and this reply, each once
    expect(page.locator(".md.streaming")).to_have_count(0)

    stage = page.frame_locator(".pns-frame--stage")
    expect(stage.locator("h1")).to_have_text("Making things with an agent you can see")
    send(page, "[patch: slides/01-title.html]"
               "[content: <section class=\"slide slide--title\"><h1>Written by Codex</h1></section>]")
    expect(stage.locator("h1")).to_have_text("Written by Codex", timeout=TURN)
    expect(page.locator(".result-line")).to_have_count(3, timeout=TURN)
    shot(page, "codex-slide-update")
    assert (server.workspace / "slides" / "01-title.html").read_text().startswith(
        '<section class="slide slide--title"><h1>Written by Codex</h1>')
    assert fakes.api.other_requests == [] and fakes.proxy.requests == []
    assert page.console_errors == []
