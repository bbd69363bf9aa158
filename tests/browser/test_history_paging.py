"""A long conversation in the shell: the newest part first, the rest a page
at a time as the person scrolls up (``history_page``), in Chromium.

The server is ``pneuma.testing.serve`` (the real app, a ``FakeAgent``) on an
event loop in a thread, so that a test can shrink what the session keeps in
memory (its window) and the size of a page: a conversation of a few dozen
turns then spans a dozen pages. Playwright's sync API drives the page from
the main thread, as in the other browser tests.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from pneuma.server import session as session_module
from pneuma.testing import serve
from tests.stored_conversation import logged

TURNS = 40
# A turn larger than a page (its tool result): the one a page must split.
SPLIT_TURN = 20
STEP = 10_000  # ms the page may take to show what it was sent
FILLER = ("The tide tables for the north harbour differ from the south one by about "
          "forty minutes, which matters for the launch schedule on slide three. ")


def question(i: int) -> str:
    return f"Question {i:03}"


def turn(i: int) -> list[dict[str, Any]]:
    """One finished turn: the person asks, the agent answers and reads a file."""
    answer = f"Answer {i:03}. {FILLER}"
    return [
        {"type": "user_message", "content": question(i), "timestamp": 1_700_000_000 + i},
        {"type": "assistant", "message": {"id": f"msg_{i:03}", "role": "assistant", "content": [
            {"type": "text", "text": answer},
            {"type": "tool_use", "id": f"tool_{i:03}", "name": "Read",
             "input": {"file_path": f"slides/{i:03}.md"}}]}},
        {"type": "tool_result", "tool_use_id": f"tool_{i:03}",
         "content": f"slide {i:03}" + ("\n" + FILLER * 40 if i == SPLIT_TURN else ""),
         "is_error": False},
        {"type": "result", "data": {"subtype": "success", "is_error": False, "num_turns": 1,
                                    "duration_ms": 1200, "result": answer}},
    ]


class ThreadServer:
    """``serve("slide", workspace)`` running on an event loop in a thread."""

    def __init__(self, workspace: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self._serving = serve("slide", workspace, watch=False)
        self.server = self.call(self._serving.__aenter__())
        self.url = self.server.page_url  # what open_page opens
        self.session = self.server.pneuma.session

    def call(self, coro: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def emit(self, *messages: dict[str, Any]) -> None:
        """Messages from the agent, broadcast (and logged) in order."""

        async def emit() -> None:
            for message in messages:
                self.server.agent.emit(message)

        self.call(emit())

    def close(self) -> None:
        self.call(self._serving.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture
def long_chat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadServer]:
    """A served slide session holding ``TURNS`` finished turns, of which
    only the last few fit in its window; pages of about three turns."""
    monkeypatch.setattr(session_module, "HISTORY_PAGE_BYTES", 3000)
    served = ThreadServer(tmp_path / "ws")
    served.session._window_limit = 4000
    for i in range(1, TURNS + 1):
        served.emit(*turn(i))
    yield served
    served.close()


def questions(page: Any) -> list[str]:
    return page.locator(".msg.user .bubble").all_inner_texts()


def scroll_to_top_and_anchor(page: Any) -> dict[str, Any]:
    """Scroll the chat to its top, as a person does, and say which question
    is then the first on screen and how far (px) below the list's top edge."""
    return page.evaluate("""() => {
      const list = document.querySelector('.messages');
      list.scrollTop = 0;
      const top = list.getBoundingClientRect().top;
      const first = [...list.querySelectorAll('.msg.user .bubble')]
        .find((b) => b.getBoundingClientRect().bottom > top);
      return { text: first.textContent, offset: first.getBoundingClientRect().top - top };
    }""")


def offset_of(page: Any, text: str) -> float:
    return page.evaluate("""(text) => {
      const list = document.querySelector('.messages');
      const bubble = [...list.querySelectorAll('.msg.user .bubble')].find((b) => b.textContent === text);
      return bubble.getBoundingClientRect().top - list.getBoundingClientRect().top;
    }""", text)


def expect_newest_first(page: Any) -> None:
    expect(page.locator(".msg.user .bubble").last).to_have_text(question(TURNS), timeout=STEP)
    shown = questions(page)
    assert question(1) not in shown, "the whole conversation came at once"
    assert shown == [question(i) for i in range(TURNS - len(shown) + 1, TURNS + 1)]
    expect(page.locator(".load-earlier")).to_have_text("Load earlier messages")


def wait_idle(page: Any) -> None:
    """Until no older page is being loaded."""
    page.wait_for_function("() => !document.querySelector('.load-earlier[aria-busy=\"true\"]')")


def scroll_up_to_the_start(page: Any) -> int:
    """Scroll to the top until the first question is shown; after every
    page the list must hold consecutive questions ending with the newest,
    and the question that was first on screen must not have moved. Returns
    how many pages it took."""
    pages = 0
    while page.locator(".load-earlier").count():
        assert pages < TURNS, "the older messages never ran out"
        shown = len(questions(page))
        anchor = scroll_to_top_and_anchor(page)
        expect(page.locator(".msg.user .bubble")).not_to_have_count(shown, timeout=STEP)
        wait_idle(page)
        pages += 1
        now = questions(page)
        assert now == [question(i) for i in range(TURNS - len(now) + 1, TURNS + 1)], now
        assert abs(offset_of(page, anchor["text"]) - anchor["offset"]) <= 1, (
            f"{anchor['text']} jumped from {anchor['offset']} px to {offset_of(page, anchor['text'])} px")
        # Older content is above what the person was reading, not in its place.
        assert page.evaluate("() => document.querySelector('.messages').scrollTop") > 0
    expect(page.locator(".msg.user .bubble").first).to_have_text(question(1))
    return pages


def expect_every_tool_has_its_result(page: Any) -> None:
    cards = page.locator(".tool-card")
    expect(cards).to_have_count(TURNS)
    assert cards.evaluate_all("cs => cs.filter(c => !c.classList.contains('done')).length") == 0
    assert page.locator(".tool-card[data-tool='Tool result']").count() == 0
    expect(page.locator(".result-line")).to_have_count(TURNS)


def page_starts(served: ThreadServer) -> list[str]:
    """The type of the first message of the window and of every page."""

    async def walk() -> list[str]:
        tab = await served.server.tab(subscribe=False)
        first = await tab.subscribe(0)
        starts = [first["messages"][0]["type"]]
        before = first["before"]
        while before is not None:
            await tab.send({"type": "history_page", "before": before})
            page = await tab.wait_for("history_page")
            starts.append(page["messages"][0]["type"])
            before = page["before"] if page["has_more"] else None
        await tab.close()
        return starts

    return served.call(walk())


def test_a_long_chat_loads_older_messages_as_the_person_scrolls_up(long_chat, open_page, shot):
    starts = page_starts(long_chat)
    assert len(starts) >= 5
    # Pages hold whole turns, starting with the person's message, except
    # around a turn larger than a page: there a tool call and its result
    # land on different pages, and the card must still show the result.
    assert "tool_result" in starts[1:], starts
    assert starts.count("user_message") >= len(starts) - 2, starts

    asked: list[str] = []
    page = open_page(long_chat, before_goto=lambda p: p.on("websocket", lambda ws: ws.on(
        "framesent", lambda payload: asked.append(payload)
        if '"history_page"' in str(payload) else None)))
    expect_newest_first(page)
    shot(page, "history-paging-newest")
    scroll_up_to_the_start(page)
    # One request per page, none twice (a page of a split turn, with no
    # question of its own, is asked for on the way to the next one).
    assert len(asked) == len(starts) - 1, asked
    assert len(set(asked)) == len(asked), asked
    assert questions(page) == [question(i) for i in range(1, TURNS + 1)]
    expect_every_tool_has_its_result(page)
    shot(page, "history-paging-start")

    # A reload starts again from the newest part and pages the same way.
    asked.clear()
    page.reload()
    page.wait_for_selector('.pill[data-state="open"]', timeout=STEP)
    expect_newest_first(page)
    scroll_up_to_the_start(page)
    assert len(asked) == len(starts) - 1, asked
    assert questions(page) == [question(i) for i in range(1, TURNS + 1)]
    expect_every_tool_has_its_result(page)
    assert page.console_errors == []


def test_the_older_messages_load_from_the_keyboard(long_chat, open_page):
    page = open_page(long_chat)
    expect_newest_first(page)
    button = page.locator(".load-earlier")
    # Focusing it brings it into view, at the top of the list, which
    # loads a page by itself; then each Enter loads the next one.
    button.focus()
    for _ in range(2):
        wait_idle(page)
        expect(button).to_be_focused()
        shown = len(questions(page))
        page.keyboard.press("Enter")
        expect(page.locator(".msg.user .bubble")).not_to_have_count(shown, timeout=STEP)
    now = questions(page)
    assert now == [question(i) for i in range(TURNS - len(now) + 1, TURNS + 1)]


def test_a_page_that_arrives_twice_is_shown_once(long_chat, open_page):
    pages: list[str] = []

    def watch(ws: Any) -> None:
        ws.on("framereceived", lambda frame: pages.extend(
            line for line in str(frame).split("\n") if '"type":"history_page"' in line))

    page = open_page(long_chat, before_goto=lambda p: p.on("websocket", watch))
    expect_newest_first(page)
    for _ in range(2):
        shown = len(questions(page))
        # (Bringing the button into view may load a page by itself too.)
        page.locator(".load-earlier").click()
        expect(page.locator(".msg.user .bubble")).not_to_have_count(shown, timeout=STEP)
        wait_idle(page)
    assert len(pages) >= 2
    before = questions(page)
    # Ask for the next page and, before its answer can arrive, get every
    # earlier page again (as a confused network might deliver them): none
    # answers the request that is out, so none is shown again.
    page.evaluate("""(texts) => {
      document.querySelector('.load-earlier').click();
      for (const text of texts) window.pneuma.store.receive(JSON.parse(text));
    }""", pages)
    expect(page.locator(".msg.user .bubble")).not_to_have_count(len(before), timeout=STEP)
    wait_idle(page)
    now = questions(page)
    assert now[-len(before):] == before
    assert now == [question(i) for i in range(TURNS - len(now) + 1, TURNS + 1)]
    assert len(set(now)) == len(now)


def test_loading_older_turns_does_not_end_the_reply_being_streamed(long_chat, open_page):
    page = open_page(long_chat)
    expect_newest_first(page)

    def stream(event: dict[str, Any]) -> dict[str, Any]:
        return {"type": "stream_event", "event": event, "parent_tool_use_id": None}

    long_chat.emit(
        {"type": "status_change", "status": "running"},
        stream({"type": "message_start", "message": {"id": "msg_live", "content": []}}),
        stream({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
        stream({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "Live text"}}),
    )
    live = page.locator(".msg.assistant", has_text="Live text")
    expect(live.locator(".md.streaming")).to_have_count(1, timeout=STEP)
    # The pages hold finished turns (their results): loading them must not
    # finish the reply on its way.
    shown = len(questions(page))
    scroll_to_top_and_anchor(page)
    expect(page.locator(".msg.user .bubble")).not_to_have_count(shown, timeout=STEP)
    wait_idle(page)
    long_chat.emit(stream({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": " goes on"}}))
    expect(page.locator(".msg.assistant", has_text="goes on")).to_have_count(1, timeout=STEP)
    expect(live).to_have_count(1)
    expect(live).to_contain_text("Live text goes on")
    expect(live.locator(".md.streaming")).to_have_count(1)


def test_an_unreadable_log_says_so_and_can_be_retried(long_chat, open_page, monkeypatch, shot):
    conversation = long_chat.session.conversation

    def unreadable(*args: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(conversation, "read_page", unreadable)
    page = open_page(long_chat)
    expect_newest_first(page)
    shown = questions(page)
    scroll_to_top_and_anchor(page)
    expect(page.locator(".earlier-error")).to_contain_text("could not be read", timeout=STEP)
    expect(page.locator(".load-earlier")).to_have_text("Try again")
    shot(page, "history-paging-unreadable")
    assert questions(page) == shown
    # Not an error card in the conversation: a note where the older messages go.
    assert page.locator(".notice.error").count() == 0

    monkeypatch.undo()
    page.locator(".load-earlier").click()
    expect(page.locator(".msg.user .bubble")).not_to_have_count(len(shown), timeout=STEP)
    expect(page.locator(".earlier-error")).to_have_count(0)


def test_a_turn_with_a_long_answer_is_not_shown_as_stopped_after_a_reload(tmp_path, open_page):
    served = ThreadServer(tmp_path / "ws")
    try:
        answer = "A long explanation. " * 100  # longer than the log keeps a result's text
        served.emit(
            {"type": "user_message", "content": "explain the tides"},
            {"type": "assistant", "message": {"id": "msg_long", "role": "assistant",
                                              "content": [{"type": "text", "text": answer}]}},
            {"type": "result", "data": {"subtype": "error_during_execution", "is_error": True,
                                        "num_turns": 1, "result": answer}},
        )
        stored = [m for m in logged(served.server.workspace) if m["type"] == "result"][-1]
        assert "result" not in stored["data"] and stored["data"]["result_length"] == len(answer)
        page = open_page(served)
        expect(page.locator(".result-label")).to_have_text("Ended with an error", timeout=STEP)
    finally:
        served.close()


def test_full_history_reads_every_page(long_chat):
    async def read() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        tab = await long_chat.server.tab()
        long_chat.server.agent.emit({"type": "system_note", "text": "live, meanwhile"})
        messages = await tab.full_history()
        # What arrived meanwhile is still there to be read.
        live = await tab.wait_for("system_note")
        await tab.close()
        return messages, live

    messages, live = long_chat.call(read())
    assert live["text"] == "live, meanwhile"
    assert messages == logged(long_chat.server.workspace)
    assert [m["content"] for m in messages if m["type"] == "user_message"] == [
        question(i) for i in range(1, TURNS + 1)]
    assert messages[-1] == live
    assert len({json.dumps(m, sort_keys=True) for m in messages}) == len(messages)
