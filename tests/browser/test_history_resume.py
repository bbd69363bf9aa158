"""A tab left open while its server restarts (docs/conversations.md, "A long
conversation opens at once"): it reconnects with what it holds, receives
only the turn it missed (under 64 KB, not the whole first page again) and
shows it after everything it showed before, in Chromium.

The server is the one ``pneuma run`` builds (``build_session_app``: the
stored session resumed, its conversation log), served twice on the same
port with the same token, on an event loop in a thread; between the two
runs one more turn is logged, as the end of a turn the tab did not see.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from pathlib import Path
from typing import Any

from aiohttp import web
from playwright.sync_api import expect

from pneuma.server.persistence import load_session, save_session
from pneuma.startup.runner import (
    RunOptions,
    bind_socket,
    build_session_app,
    session_url,
)
from pneuma.testing import load_mode, make_workspace
from tests.browser.test_history_paging import offset_of, scroll_to_top_and_anchor
from tests.server.test_history_first_page import conversation, log_turn_after

TURNS = 300  # several first pages' worth
STEP = 15_000  # ms: the tab retries with a backoff of up to a few seconds


class RestartableServer:
    """``pneuma run``'s app for one workspace, stopped and started again
    on the same port with the same token (what an open tab reconnects to)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.token = secrets.token_urlsafe(16)
        sock = bind_socket("127.0.0.1", 0)
        self.port = sock.getsockname()[1]
        sock.close()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.runner: web.AppRunner | None = None
        self.url = ""

    def call(self, coro: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> None:
        self.call(self._start())

    async def _start(self) -> None:
        options = RunOptions(mode=load_mode("slide"), workspace=self.workspace, params={},
                             port=self.port, backend="none", open_browser=False, token=self.token)
        session_id = load_session(self.workspace, "slide", "none").session_id
        app = build_session_app(options, session_id=session_id, token=self.token, port=self.port)
        self.runner = web.AppRunner(app, handle_signals=False, access_log=None,
                                    shutdown_timeout=1.0)
        await self.runner.setup()
        await web.SockSite(self.runner, bind_socket("127.0.0.1", self.port, tries=1)).start()
        self.url = session_url("127.0.0.1", self.port, session_id, self.token)

    def stop(self) -> None:
        """As a crash or a restart looks to a tab: its socket just closes."""
        if self.runner is not None:
            self.call(self.runner.cleanup())
            self.runner = None

    def close(self) -> None:
        self.stop()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


def log_missed_turn(workspace: Path, conversation_id: str, after_seq: int) -> str:
    """One more turn in the log after seq ``after_seq``; returns the
    person's message."""
    return str(log_turn_after(workspace, conversation_id, after_seq)[0]["content"])


def test_a_tab_open_across_a_restart_gets_only_the_turn_it_missed(tmp_path, open_page):
    workspace = make_workspace("slide", tmp_path / "deck")
    messages = conversation(TURNS)
    last_seq = messages[-1]["seq"] + 1
    save_session(workspace, session_id="resume-test", mode="slide", backend="none",
                 agent_session_id=None, last_seq=last_seq)
    (workspace / ".pneuma" / "history.json").write_text(json.dumps(
        {"version": 1, "lastSeq": last_seq, "messages": messages}))
    server = RestartableServer(workspace)
    try:
        server.start()
        page = open_page(server)
        bubbles = page.locator(".msg.user .bubble")
        expect(bubbles.last).to_have_text(f"Question {TURNS:04}", timeout=STEP)
        shown = bubbles.all_inner_texts()
        held = page.evaluate("() => document.querySelectorAll('.msg').length")

        received: list[int] = []
        page.on("websocket", lambda ws: ws.on(
            "framereceived", lambda payload: received.append(len(
                payload.encode("utf-8") if isinstance(payload, str) else payload))))
        server.stop()
        expect(page.locator(".pill[data-state='open']")).to_have_count(0, timeout=STEP)
        new_turn = log_missed_turn(workspace, "resume-test", last_seq)
        server.start()

        expect(bubbles.last).to_have_text(new_turn, timeout=STEP)
        expect(page.locator(".pill[data-state='open']")).to_have_count(1, timeout=STEP)
        # Everything it showed is still there, the new turn after it, once.
        assert bubbles.all_inner_texts() == [*shown, new_turn]
        expect(page.locator(".msg")).to_have_count(held + 3)  # asked, read, answered
        expect(page.locator(".tool-card").last).to_have_class("tool-card done")
        assert sum(received) < 64 * 1024, f"{sum(received):,} bytes after the restart"
        # Chromium logs each refused attempt while the server was down; nothing else.
        assert [e for e in page.console_errors if "ERR_CONNECTION_REFUSED" not in e] == []
    finally:
        server.close()


def test_a_message_larger_than_a_page_shows_as_a_preview_then_whole(tmp_path, open_page):
    from tests.browser.test_history_paging import ThreadServer  # noqa: PLC0415

    served = ThreadServer(tmp_path / "ws")
    try:
        answer = " ".join(f"Point {i}: the spring tide comes forty minutes later." for i in range(900))
        whole_file = "".join(f"line {i}\n" for i in range(12_000))
        served.emit(
            {"type": "user_message", "content": "Read the whole deck", "timestamp": 1_700_000_000},
            {"type": "assistant", "message": {"id": "msg_read", "role": "assistant", "content": [
                {"type": "tool_use", "id": "tool_big", "name": "Read",
                 "input": {"file_path": "slides/all.md"}}]}},
            {"type": "tool_result", "tool_use_id": "tool_big", "content": whole_file,
             "is_error": False},
            {"type": "assistant", "message": {"id": "msg_answer", "role": "assistant",
                                              "content": [{"type": "text", "text": answer}]}},
            {"type": "result", "data": {"subtype": "success", "is_error": False}})
        page = open_page(served)
        text = page.locator(".msg.assistant .md").last
        expect(text).to_contain_text("Point 0:", timeout=STEP)
        assert "Point 899:" not in text.inner_text()
        buttons = page.locator(".show-whole")
        expect(buttons).to_have_count(2)  # the answer and the tool's result
        expect(buttons.last).to_have_text(f"Show the whole message ({round(len(answer) / 1024)} KB)")
        buttons.last.click()
        expect(text).to_contain_text("Point 899:", timeout=STEP)
        expect(buttons).to_have_count(1)
        buttons.first.click()
        expect(buttons).to_have_count(0, timeout=STEP)
        page.locator(".tool-card .tool-head").click()
        expect(page.locator(".tool-card .clipped button")).to_have_text("Show all 12,001 lines")
        assert page.console_errors == []
    finally:
        served.close()


def test_a_2000_turn_conversation_draws_its_newest_messages_and_older_ones_on_scroll(
        tmp_path, open_page):
    workspace = make_workspace("slide", tmp_path / "deck")
    messages = conversation(2000)
    save_session(workspace, session_id="long-test", mode="slide", backend="none",
                 agent_session_id=None, last_seq=messages[-1]["seq"] + 1)
    (workspace / ".pneuma" / "history.json").write_text(json.dumps(
        {"version": 1, "lastSeq": messages[-1]["seq"] + 1, "messages": messages}))
    server = RestartableServer(workspace)
    try:
        server.start()
        page = open_page(server)
        bubbles = page.locator(".msg.user .bubble")
        expect(bubbles.last).to_have_text("Question 2000", timeout=STEP)
        # The first page holds dozens of turns; what is drawn is what fits
        # on screen and a little more.
        drawn = page.evaluate("() => document.querySelectorAll('.msg').length")
        assert drawn <= 60, drawn
        seen = len(bubbles.all_inner_texts())
        for step in range(4):  # scrolling up draws (then fetches) older turns, in order
            anchor = scroll_to_top_and_anchor(page)
            expect(bubbles).not_to_have_count(seen, timeout=STEP)
            now = bubbles.all_inner_texts()
            first = int(now[0].split()[-1])
            assert now == [f"Question {i:04}" for i in range(first, 2001)], now[:3]
            seen = len(now)
            # What the person was reading stays where it was.
            assert abs(offset_of(page, anchor["text"]) - anchor["offset"]) <= 1, (step, anchor, now[:2])
        assert page.console_errors == []
    finally:
        server.close()
