"""Replay's first frame, beside the live viewer's first render of the same deck (issue 29, item 3).

    .venv/bin/python benchmarks/bench_replay_view.py [--slides 24] [--turns 5] [--runs 7] [--quick]

One `pneuma run --mode slide` (no agent) on a deck of ``--slides`` slides
whose conversation has ``--turns`` turns, each with its checkpoint kept (a
turn that rewrote one slide), recorded through the store and the
conversation log as a served turn records them. In one Chromium page of the
shell, alternating, ``--runs`` times each:

- **live viewer** (the baseline): a fresh mount of the mode's viewer over
  the workspace as it is, every slide frame loaded (bench_compare.py's
  ``LIVE_MOUNT``, in a box the size of half the viewer);
- **replay**: "Replay" pressed to its first turn drawn
  (``.replay-frame[data-ready]``: ``GET /api/replay``, the turn's
  ``GET .../state/after/files`` from the checkpoint store, one mount of the
  viewer, every frame loaded), then closed.

Everything stays on this machine; no network.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import finish, median, pneuma_run, row, temp_dir  # noqa: E402
from bench_compare import LIVE_MOUNT, VIEWER_READY, WATCH, make_deck  # noqa: E402

from pneuma.api import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

FIRST_FRAME_GOAL_S = 1.5  # "Replay" pressed to its first turn drawn
RATIO_GOAL = 2.0  # one snapshot mount (and two reads) against one live mount

# In the page: "Replay" pressed until its first turn is drawn; ms. Closed after.
REPLAY = """async () => {
  const t0 = performance.now();
  document.querySelector('.replay-open').click();
  await new Promise((resolve) => {
    const tick = () => {
      if (document.querySelector('.replay-frame[data-ready="true"]')) return resolve();
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  const took = performance.now() - t0;
  const { closeReplay } = await import('/static/lib/replay.js');
  closeReplay();
  return took;
}"""


def make_conversation(root: Path, slides: int, turns: int) -> Path:
    """bench_compare's deck (its first turn kept), ``turns - 1`` more turns
    through the store, and the conversation of those turns in the log: each
    person's message, its ``turn_checkpoint`` and an answer."""
    from pneuma.checkpoints import Checkpoints
    from pneuma.server.conversation_log import ConversationLog
    from pneuma.server.persistence import save_session

    workspace = make_deck(root, slides)
    manifest = json.loads((workspace / "manifest.json").read_text())
    store = Checkpoints(workspace, WATCH)
    for n in range(2, turns + 1):
        store.record(f"rewrite slide {n + 3}")
        target = workspace / manifest["slides"][(n + 2) % len(manifest["slides"])]["file"]
        target.write_text(f'<section class="slide"><h2>Turn {n}</h2><p>Rewritten.</p></section>\n')
        store.turn_ended()
    refs = [c.ref for c, _ in store.history()]
    conversation = str(uuid.uuid4())
    rows: list[tuple[int, str | None, str, str]] = []
    now = time.time() - turns * 60
    for n, ref in enumerate(refs, start=1):
        stamp, key = now + n * 60, f"bench-{n}"
        for kind, body in (
                ("user_message", {"type": "user_message", "content": f"turn {n}: rewrite a slide",
                                  "client_msg_id": key, "timestamp": stamp}),
                ("turn_checkpoint", {"type": "turn_checkpoint", "ref": ref, "client_msg_id": key,
                                     "user_timestamp": stamp}),
                ("assistant", {"type": "assistant", "message": {
                    "id": f"m{n}", "role": "assistant",
                    "content": [{"type": "text", "text": f"Rewrote the slide of turn {n}."}]}})):
            seq = len(rows) + 1
            rows.append((seq, body.get("message", {}).get("id"), kind, json.dumps({**body, "seq": seq})))
    log = ConversationLog.open(workspace / ".pneuma")
    try:
        log.import_messages(conversation, rows)
        log.ensure_conversation(conversation)
        log.checkpoint()
    finally:
        log.close()
    save_session(workspace, session_id=conversation, mode="slide", backend="none",
                 agent_session_id=None, last_seq=len(rows))
    return workspace


async def measure(slides: int, turns: int, runs: int) -> list[dict[str, Any]]:
    from playwright.async_api import async_playwright

    workspace = make_conversation(temp_dir("pneuma-bench-replay-view-"), slides, turns)
    async with pneuma_run(workspace) as (_proc, url):
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
            try:
                page = await browser.new_page(viewport={"width": 1360, "height": 820})
                await page.goto(url)
                await page.wait_for_function(VIEWER_READY, timeout=30_000)
                await page.evaluate(LIVE_MOUNT)  # warm: modules and fonts cached for both
                await page.evaluate(REPLAY)
                live, replay = [], []
                for _ in range(runs):
                    live.append(await page.evaluate(LIVE_MOUNT) / 1000)
                    replay.append(await page.evaluate(REPLAY) / 1000)
            finally:
                await browser.close()
    live_s, replay_s = median(live), median(replay)
    return [
        row(f"live viewer: one mount of a {slides}-slide deck, every frame loaded (median)", live_s,
            None, "s", "lower", info=True),
        row(f"replay: pressed to its first turn drawn, {turns} turns (median)", replay_s,
            FIRST_FRAME_GOAL_S, "s", "lower", baseline=live_s, baseline_label="one live mount"),
        row("replay's first frame against one live mount", replay_s / live_s, RATIO_GOAL, "x",
            "lower"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slides", type=int, default=24)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="8 slides, 3 turns, 3 runs")
    args = parser.parse_args()
    if args.quick:
        slides, turns, runs = 8, 3, 3
    else:
        slides, turns, runs = max(8, args.slides), max(1, args.turns), max(1, args.runs)
    rows = asyncio.run(measure(slides, turns, runs))
    return finish(rows, f"goal: the first turn drawn within {FIRST_FRAME_GOAL_S:g} s, and at most "
                        f"{RATIO_GOAL:g}x one live mount of the same deck")


if __name__ == "__main__":
    sys.exit(main())
