"""Streamed answers at the end of a long chat, in Chromium (issue 25,
item 23): deltas one at a time and in bursts, answers one after another.
During every run of deltas no earlier row is drawn again or touched (at
most one row drawn a delta); each answer ends with its whole text, once.
No timing is asserted: benchmarks/bench_stream_paint.py measures the cost."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.browser_helpers import CHROMIUM, browser_problems
from tests.browser.test_history_paging import ThreadServer, turn
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

TURNS = 100
ANSWERS = 4
TIME_CAP = 30.0  # seconds for the streaming part

WATCH = """() => {
  const rows = [...document.querySelectorAll('.messages .msg, .messages .result-line')]
    .filter((row) => !row.querySelector('.md.streaming, .typing'));
  const watch = window.__earlier = { rows, mutations: 0, renders: window.pneuma.ui.chatRenders || 0,
                                     shared: window.pneuma.ui.chatShared };
  watch.observer = new MutationObserver((records) => { watch.mutations += records.length; });
  for (const row of rows) watch.observer.observe(row, { subtree: true, childList: true, characterData: true, attributes: true });
  return rows.length;
}"""
SEEN = """() => { const w = window.__earlier; w.observer.disconnect();
  return { mutations: w.mutations, renders: (window.pneuma.ui.chatRenders || 0) - w.renders,
           connected: w.rows.every((row) => row.isConnected),
           rows: document.querySelectorAll('.messages .msg, .messages .result-line').length,
           shared: w.shared !== window.pneuma.ui.chatShared }; }"""


@pytest.fixture
def chat_of_100_turns(tmp_path: Path) -> Iterator[ThreadServer]:
    served = ThreadServer(tmp_path / "ws")
    for i in range(1, TURNS + 1):
        served.emit(*turn(i))
    yield served
    served.close()


def stream_event(event: dict[str, Any]) -> dict[str, Any]:
    return {"type": "stream_event", "parent_tool_use_id": None, "event": event}


def test_answers_stream_into_a_long_chat_without_touching_it(chat_of_100_turns: ThreadServer) -> None:
    problems = browser_problems()
    if problems:
        pytest.skip("; ".join(problems))
    from playwright.sync_api import expect, sync_playwright

    from pneuma.tools.chromium import CHROMIUM_ARGS

    served = chat_of_100_turns
    rng = random.Random(23)
    deltas_sent = bursts = answers = rows_watched = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(served.url)
            page.wait_for_selector('.pill[data-state="open"]', timeout=20_000)
            expect(page.locator(".msg.user .bubble").last).to_have_text(f"Question {TURNS:03}", timeout=20_000)
            # A new tab draws the newest part of a long chat: scroll up until
            # every turn is drawn, so that every earlier row is watched.
            page.wait_for_function(
                f"""() => {{
                  const list = document.querySelector('.messages');
                  if (document.querySelectorAll('.result-line').length >= {TURNS}) {{
                    list.scrollTop = list.scrollHeight;
                    return true;
                  }}
                  list.scrollTop = 0;
                  return false;
                }}""", timeout=60_000, polling=200)
            started = time.monotonic()
            for answer in range(ANSWERS):
                if time.monotonic() - started > TIME_CAP:
                    break
                served.emit({"type": "user_message", "content": f"Follow-up {answer}",
                             "timestamp": 1_800_000_000 + answer},
                            {"type": "status_change", "status": "running"},
                            stream_event({"type": "message_start", "message": {"id": f"msg_live_{answer}", "content": []}}),
                            stream_event({"type": "content_block_start", "index": 0,
                                          "content_block": {"type": "text", "text": ""}}))
                # The answer's row, its typing dots until the first delta: not watched.
                expect(page.locator(".msg.assistant .typing")).to_have_count(1, timeout=10_000)
                rows_watched = page.evaluate(WATCH)
                text = ""
                sent_here = 0
                for burst in range(rng.randint(8, 16)):
                    words = [f"w{answer}.{burst}.{k}" + rng.choice(["", " **bold**", "\n\n```js\nx()\n```\n\n"])
                             for k in range(rng.randint(1, 6))]
                    served.emit(*(stream_event({"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": f"{word} "}})
                                  for word in words))
                    text += "".join(f"{word} " for word in words)
                    sent_here += len(words)
                    bursts += 1
                    last = words[-1].split()[0].split("\n")[0]
                    expect(page.locator(".md.streaming")).to_contain_text(last, timeout=10_000)
                seen = page.evaluate(SEEN)
                assert seen["connected"], f"answer {answer}: an earlier row was replaced"
                assert seen["mutations"] == 0, f"answer {answer}: earlier rows changed {seen['mutations']} times"
                # Deltas draw only their own row. Something every row may show
                # (the connection, the status, any other socket message) may
                # change meanwhile on a loaded machine, and then every row draws
                # once more, as it should.
                bound = sent_here + (seen["rows"] if seen["shared"] else 0)
                assert 0 < seen["renders"] <= bound, (answer, seen, sent_here)
                deltas_sent += sent_here
                served.emit({"type": "assistant", "message": {"id": f"msg_live_{answer}", "role": "assistant",
                                                              "content": [{"type": "text", "text": text}]}},
                            stream_event({"type": "message_stop"}),
                            {"type": "result", "data": {"subtype": "success", "is_error": False, "num_turns": 1}})
                expect(page.locator(".md.streaming")).to_have_count(0, timeout=10_000)
                answers += 1
            # Every answer once, whole.
            for answer in range(answers):
                expect(page.locator(".msg.assistant", has_text=f"w{answer}.0.0")).to_have_count(1)
            expect(page.locator(".result-line")).to_have_count(TURNS + answers)
        finally:
            browser.close()
    assert answers >= 2
    record("25.23 streaming into a long chat",
           f"{answers} answers streamed after {TURNS} turns, {count(deltas_sent)} deltas in {count(bursts)} "
           f"bursts; {count(rows_watched)} earlier rows watched each time: 0 touched, 0 replaced, "
           "at most one row drawn a delta")
