"""While an answer streams, only the streaming message is drawn again:
earlier messages are neither re-rendered nor touched, however long the chat
(issue 25, item 23; benchmarks/bench_stream_paint.py measures the cost).
Chromium against `pneuma run` with the fake CLI; no timing is asserted."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.browser_helpers import send
from tests.browser.test_shell import TURN, chat  # noqa: F401  (the fixture)

# Watches every row already in the chat (subtree, text, attributes) and the
# list's own children; `window.__earlier` counts what changed.
WATCH_EARLIER = """() => {
  const rows = [...document.querySelectorAll('.messages .msg, .messages .result-line')]
    .filter((row) => !row.querySelector('.md.streaming'));
  const watch = window.__earlier = { rows, mutations: 0 };
  const observer = new MutationObserver((records) => { watch.mutations += records.length; });
  for (const row of rows) observer.observe(row, { subtree: true, childList: true, characterData: true, attributes: true });
  watch.renders = window.pneuma.ui.chatRenders;
  // Read in the same task as the render count: a frame drawn between two
  // evaluate() calls would count a render without its words.
  return { rows: rows.length, words: (document.querySelector('.md.streaming')?.textContent.match(/word\\d+/g) || []).length };
}"""


def test_a_streamed_answer_redraws_only_itself(chat, shot):
    page = chat()
    for n in range(3):
        send(page, f"hello number {n}")
        expect(page.locator(".result-line")).to_have_count(n + 2, timeout=TURN)
    send(page, "slow please")
    streaming = page.locator(".md.streaming")
    expect(streaming).to_contain_text("word2", timeout=TURN)
    earlier = page.evaluate(WATCH_EARLIER)
    assert earlier["rows"] >= 8  # four turns' messages and results, and this one's question
    expect(streaming).to_contain_text("word30", timeout=TURN)
    watch = page.evaluate("() => ({ mutations: window.__earlier.mutations, renders: window.pneuma.ui.chatRenders - window.__earlier.renders,"
                          " connected: window.__earlier.rows.every((row) => row.isConnected),"
                          " words: (document.querySelector('.md.streaming')?.textContent.match(/word\\d+/g) || []).length })")
    deltas = watch["words"] - earlier["words"]
    shot(page, "stream-render-scope")
    # Earlier rows: the same elements, untouched.
    assert watch["connected"], "an earlier message was replaced while the answer streamed"
    assert watch["mutations"] == 0, f"earlier messages changed {watch['mutations']} times while the answer streamed"
    # Rows drawn: at most one a delta (the streaming message; frames join deltas),
    # where drawing every row would be {earlier} a delta.
    assert 0 < watch["renders"] <= deltas, (watch, deltas)
    page.keyboard.press("Escape")
    expect(page.locator(".result-line").last).to_contain_text("Stopped", timeout=TURN)
    assert page.console_errors == []
