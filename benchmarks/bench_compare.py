"""The compare view's time to both renders, beside the live viewer drawing the same deck (issue 28, item 3).

    .venv/bin/python benchmarks/bench_compare.py [--slides 24] [--runs 7] [--quick]

One `pneuma run --mode slide` (no agent) on a deck of ``--slides`` slides
with one checkpoint kept: a turn that rewrote slide 3 and retitled slide 2,
recorded through the store as the turn listener records it. In one Chromium
page of the shell, alternating, ``--runs`` times each:

- **live viewer** (the baseline): a fresh mount of the mode's viewer over
  the workspace as it is (``ViewerHost.start()``: ``GET /api/files``, mount,
  every slide frame loaded), in a box the size of one compare side;
- **compare**: the ``pneuma:compare`` event to both sides drawn
  (``.compare-panel[data-ready]``: two ``GET .../state/{before,after}/files``
  from the checkpoint store, two mounts, both on the changed slide, every
  frame of both loaded).

And over HTTP, ``--runs`` times each: one side's file list from the store
(``GET /api/checkpoints/1/state/after/files``) beside the live list
(``GET /api/files``). Everything stays on this machine; no network.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import finish, median, pneuma_run, row, temp_dir  # noqa: E402

from pneuma.api import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

COMPARE_GOAL_S = 1.5  # "Compare" pressed to both sides drawn, on a 24-slide deck
RATIO_GOAL = 3.0  # two snapshot mounts against one live mount
VIEWER_READY = "() => window.pneuma && window.pneuma.ui.viewerReady === true"
WATCH = ["manifest.json", "theme.css", "slides/**/*.html", "assets/**/*"]

# In the page: one fresh live mount in a box the size of a compare side,
# until every frame of it has loaded; its time in ms.
LIVE_MOUNT = """async () => {
  const { ViewerHost } = await import('/static/lib/viewer-host.js');
  const panel = document.querySelector('.viewer-panel');
  const box = document.createElement('div');
  box.style.cssText = `position:fixed;left:0;top:0;width:${panel.clientWidth / 2}px;`
    + `height:${panel.clientHeight}px;display:flex;flex-direction:column;z-index:-1`;
  document.body.append(box);
  const keep = JSON.stringify(sessionStorage);
  const t0 = performance.now();
  const host = new ViewerHost({ config: window.pneuma.ui.config, element: box,
    shell: { setSelection() {}, setActiveFile() {}, confirm: async () => false, sendMessage() {} } });
  await host.start();
  const drawn = (frame) => {
    try { const d = frame.contentDocument; return d && d.readyState === 'complete' && d.URL !== 'about:blank'; }
    catch { return true; }
  };
  let frames = 0;
  await new Promise((resolve) => {
    const tick = () => {
      frames += 1;
      if (frames > 2 && [...box.querySelectorAll('iframe')].every(drawn)) return resolve();
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  const took = performance.now() - t0;
  host.destroy();
  box.remove();
  const saved = JSON.parse(keep);
  sessionStorage.clear();
  for (const [k, v] of Object.entries(saved)) sessionStorage.setItem(k, v);
  return took;
}"""

# In the page: "Compare" on checkpoint 1 until both sides are drawn; ms.
COMPARE = """async () => {
  const t0 = performance.now();
  window.dispatchEvent(new CustomEvent('pneuma:compare', { detail: { ref: '1' } }));
  await new Promise((resolve) => {
    const tick = () => {
      if (document.querySelector('.compare-panel[data-ready="true"]')) return resolve();
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  const took = performance.now() - t0;
  const { closeCompare } = await import('/static/lib/compare.js');
  closeCompare();
  return took;
}"""


def make_deck(root: Path, slides: int) -> Path:
    """The seed deck grown to ``slides`` slides, and one turn kept: slide 3
    rewritten and slide 2 retitled."""
    import json

    from pneuma.checkpoints import Checkpoints
    from pneuma.testing import make_workspace

    workspace = make_workspace("slide", root / "deck")
    manifest_path = workspace / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    seeds = [s["file"] for s in manifest["slides"]]
    for n in range(len(manifest["slides"]) + 1, slides + 1):
        source = (workspace / seeds[n % len(seeds)]).read_text()
        name = f"slides/{n:02d}-more.html"
        (workspace / name).write_text(source.replace("</section>", f"<p>Slide {n}</p></section>", 1))
        manifest["slides"].append({"file": name, "title": f"More, part {n}"})
    manifest_path.write_text(json.dumps(manifest, indent=2))

    store = Checkpoints(workspace, WATCH)
    store.record("make slide 3 louder and retitle slide 2")
    third = workspace / manifest["slides"][2]["file"]
    third.write_text('<section class="slide" style="background:#c0262d;color:#fff">'
                     "<h2>A louder point</h2><p>Rewritten by the agent.</p></section>\n")
    manifest["slides"][1]["title"] = "The chat hides the work"
    manifest_path.write_text(json.dumps(manifest, indent=2))
    store.turn_ended()
    return workspace


async def list_times(base: str, token: str, runs: int) -> tuple[list[float], list[float]]:
    import aiohttp

    headers = {"Authorization": f"Bearer {token}"}
    snapshot, live = [], []
    async with aiohttp.ClientSession(headers=headers) as http:
        for _ in range(runs):
            for url, times in ((f"{base}/api/checkpoints/1/state/after/files", snapshot),
                               (f"{base}/api/files", live)):
                t0 = time.perf_counter()
                async with http.get(url) as response:
                    assert response.status == 200, await response.text()
                    await response.read()
                times.append(time.perf_counter() - t0)
    return snapshot, live


async def measure(slides: int, runs: int) -> list[dict[str, Any]]:
    from playwright.async_api import async_playwright

    workspace = make_deck(temp_dir("pneuma-bench-compare-"), slides)
    async with pneuma_run(workspace) as (_proc, url):
        parts = urlsplit(url)
        base, token = f"http://{parts.netloc}", parse_qs(parts.query)["token"][0]
        snapshot_list, live_list = await list_times(base, token, runs)
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
            try:
                page = await browser.new_page(viewport={"width": 1360, "height": 820})
                await page.goto(url)
                await page.wait_for_function(VIEWER_READY, timeout=30_000)
                await page.evaluate(LIVE_MOUNT)  # warm: modules and fonts cached for both
                await page.evaluate(COMPARE)
                live, compare = [], []
                for _ in range(runs):
                    live.append(await page.evaluate(LIVE_MOUNT) / 1000)
                    compare.append(await page.evaluate(COMPARE) / 1000)
            finally:
                await browser.close()
    live_s, compare_s = median(live), median(compare)
    return [
        row(f"live viewer: one mount of a {slides}-slide deck, every frame loaded (median)", live_s, None,
            "s", "lower", info=True),
        row("compare: pressed to both sides drawn (median)", compare_s, COMPARE_GOAL_S, "s", "lower",
            baseline=live_s, baseline_label="one live mount"),
        row("compare against one live mount", compare_s / live_s, RATIO_GOAL, "x", "lower"),
        row("one side's file list from the store (median)", median(snapshot_list), None, "s", "lower",
            baseline=median(live_list), baseline_label="GET /api/files", info=True),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slides", type=int, default=24)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="8 slides, 3 runs")
    args = parser.parse_args()
    slides, runs = (8, 3) if args.quick else (max(8, args.slides), max(1, args.runs))
    rows = asyncio.run(measure(slides, runs))
    return finish(rows, f"goal: both sides drawn within {COMPARE_GOAL_S:g} s, and at most "
                        f"{RATIO_GOAL:g}x one live mount of the same deck (two mounts, two state reads)")


if __name__ == "__main__":
    sys.exit(main())
