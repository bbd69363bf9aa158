"""Streaming paint cost against the length of the chat (issue 25, item 23).

    .venv/bin/python benchmarks/bench_stream_paint.py [--deltas 60] [--turns 100]

The real page in Chromium (Playwright, Debian's /usr/bin/chromium) on the
real pneuma app in this process (`--backend none`, the slide mode). Two
chats, measured in the same run and the same browser:

- **turn 1**: a fresh conversation, one turn before the streamed answer;
- **turn N**: ``--turns`` turns before it (each: the person's message, an
  answer with two fenced code blocks and a list, a result line), all shown.

Then an assistant answer streams in: ``--deltas`` text deltas are
broadcast through ``Session.emit`` as a backend does, one at a time, each
carrying a marker word. For each, the page records the time from the start
of the animation frame that applies it (the store renders once a frame,
lib/store.js) until the marker is in the streaming message's DOM and that
DOM is laid out (a forced layout right after the render): the work one
delta costs the page. The figure is the median; the goal is turn N within
1.2 × turn 1. Also printed, for reading the figures: the median of the
whole socket-message → laid-out time (it includes waiting for the next
frame, up to 16.7 ms), and how many earlier chat rows were re-rendered per
delta (``ui.chatRenders``, lib/chat.js).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import finish, machine_note, median, row, start_pneuma_app, temp_dir  # noqa: E402

from pneuma.api import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

# Installed before the page's own scripts: when a socket message carrying a
# marker arrives, when each animation frame starts, and, once the marker is
# in the streaming message, the time after a forced layout.
PROBE = r"""
(() => {
  const probe = window.__paint = { arrived: new Map(), done: [], frameStart: 0, want: null };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        const now = performance.now();
        for (const m of String(event.data).matchAll(/mk(\d+)q/g)) probe.arrived.set(Number(m[1]), now);
      });
    }
  };
  const nativeFrame = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) => nativeFrame((ts) => {
    probe.frameStart = performance.now();
    callback(ts);
  });
  const observer = new MutationObserver(() => {
    if (probe.want == null) return;
    const streaming = document.querySelector('.md.streaming');
    if (!streaming || !streaming.textContent.includes(`mk${probe.want}q`)) return;
    const list = document.querySelector('.messages');
    void list.scrollHeight; // style and layout, as the frame's paint needs them
    streaming.getBoundingClientRect();
    const now = performance.now();
    probe.done.push({ n: probe.want, work: now - probe.frameStart, total: now - probe.arrived.get(probe.want) });
    probe.want = null;
  });
  document.addEventListener('DOMContentLoaded', () => {
    observer.observe(document.body, { childList: true, subtree: true, characterData: true });
  });
})();
"""

ANSWER = """Here is the change, in two parts.

1. The **title** slide gets the new heading:

```html
<section class="title">
  <h1>Tides and the moon</h1>
  <p class="subtitle">Why the sea rises twice a day</p>
</section>
```

2. The theme gets a darker accent:

```css
:root { --accent: #3b4cca; --accent-soft: #e8ebff; }
h1 { letter-spacing: -0.02em; }
```

- kept the footer as it was
- checked that nothing overflows

Turn {n} done: `slides/01-title.html` and `theme.css` changed."""


def history_turn(session: Any, n: int) -> None:
    """One finished turn, broadcast (and logged) as a backend and the session do."""
    session.emit({"type": "user_message", "content": f"Turn {n}: make the title slide about tides, "
                  "with a darker accent", "timestamp": 1_700_000_000.0 + n})
    session.emit({"type": "assistant", "message": {
        "id": f"msg_hist_{n}", "role": "assistant",
        "content": [{"type": "text", "text": ANSWER.replace("{n}", str(n))}]}})
    session.emit({"type": "result", "data": {"subtype": "success", "is_error": False,
                                             "num_turns": 2, "duration_ms": 1200,
                                             "total_cost_usd": 0.01}})


async def measure(browser: Any, turns: int, deltas: int) -> dict[str, float]:
    workspace = temp_dir("pneuma-bench-paint-") / "ws"
    runner, base, session, token = await start_pneuma_app(workspace, backend="none")
    try:
        for n in range(1, turns + 1):
            history_turn(session, n)
        session.flush()
        context = await browser.new_context(viewport={"width": 1360, "height": 900})
        page = await context.new_page()
        await page.add_init_script(PROBE)
        await page.goto(f"{base}/?session={session.id}&token={token}")
        await page.wait_for_selector('.pill[data-state="open"]', timeout=20_000)
        # A new tab draws the newest part of the chat (and gets the newest
        # page of it): the person scrolls up until every turn is drawn.
        await page.wait_for_function(
            f"""() => {{
              const list = document.querySelector('.messages');
              if (document.querySelectorAll('.result-line').length >= {turns}) {{
                list.scrollTop = list.scrollHeight;  // back to the newest, as before
                return true;
              }}
              list.scrollTop = 0;
              return false;
            }}""", timeout=60_000, polling=200)
        session.emit({"type": "user_message", "content": "Now the next slide, please.",
                      "timestamp": 1_800_000_000.0})
        session.emit({"type": "status_change", "status": "running"})
        session.emit({"type": "stream_event", "parent_tool_use_id": None, "event": {
            "type": "message_start", "message": {"id": "msg_streamed", "content": []}}})
        session.emit({"type": "stream_event", "parent_tool_use_id": None, "event": {
            "type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}})
        cdp = await context.new_cdp_session(page)
        await cdp.send("Performance.enable")
        renders_before = None
        metrics_before: dict[str, float] = {}
        for k in range(deltas):
            await page.evaluate(f"() => {{ window.__paint.want = {k}; }}")
            session.emit({"type": "stream_event", "parent_tool_use_id": None, "event": {
                "type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": f"word{k} mk{k}q, and **more** text "}}})
            session.flush()
            await page.wait_for_function(f"() => window.__paint.done.some((d) => d.n === {k})",
                                         timeout=10_000)
            if k == 4:  # the first frames warm up; renders counted from here
                renders_before = await page.evaluate("() => window.pneuma.ui.chatRenders || 0")
                metrics_before = await browser_metrics(cdp)
        metrics_after = await browser_metrics(cdp)
        renders_after = await page.evaluate("() => window.pneuma.ui.chatRenders || 0")
        done = await page.evaluate("() => window.__paint.done")
        await context.close()
    finally:
        await runner.cleanup()
        shutil.rmtree(workspace.parent, ignore_errors=True)
    timed = [d for d in done if d["n"] >= 5]
    per_delta = {name: (metrics_after[name] - metrics_before.get(name, 0.0)) * 1000 / max(1, len(timed))
                 for name in METRICS}
    return {"work": median([d["work"] for d in timed]), "total": median([d["total"] for d in timed]),
            "renders": (renders_after - (renders_before or 0)) / max(1, len(timed)), **per_delta}


# Chromium's own counters (DevTools Performance domain), seconds of main-thread time.
METRICS = ("ScriptDuration", "RecalcStyleDuration", "LayoutDuration", "TaskDuration")


async def browser_metrics(cdp: Any) -> dict[str, float]:
    answer = await cdp.send("Performance.getMetrics")
    return {m["name"]: m["value"] for m in answer["metrics"] if m["name"] in METRICS}


async def run(deltas: int, turns: int) -> list[dict[str, Any]]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            first = await measure(browser, 1, deltas)
            long = await measure(browser, turns, deltas)
        finally:
            await browser.close()
    print(f"turn 1:   delta -> laid out {first['work']:.2f} ms of frame work (median), "
          f"{first['total']:.2f} ms from the socket; {first['renders']:.1f} chat rows rendered a delta")
    print(f"turn {turns}: delta -> laid out {long['work']:.2f} ms of frame work (median), "
          f"{long['total']:.2f} ms from the socket; {long['renders']:.1f} chat rows rendered a delta")
    for name, figures in (("turn 1", first), (f"turn {turns}", long)):
        print(f"{name}: Chromium's main thread a delta: " + ", ".join(
            f"{metric.replace('Duration', '')} {figures[metric]:.2f} ms" for metric in METRICS))
    ratio = long["work"] / first["work"] if first["work"] else float("nan")
    print(f"ratio turn {turns} / turn 1: {ratio:.2f} (goal <= 1.2)")
    return [
        row(f"stream delta -> laid out, turn {turns} (median)", long["work"], None, "ms", "lower",
            first["work"], "turn 1, same run", info=True),
        row(f"stream paint cost, turn {turns} / turn 1", ratio, 1.2, "x", "lower"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deltas", type=int, default=60)
    parser.add_argument("--turns", type=int, default=100)
    args = parser.parse_args()
    print(machine_note())
    rows = asyncio.run(run(args.deltas, args.turns))
    return finish(rows)


if __name__ == "__main__":
    sys.exit(main())
