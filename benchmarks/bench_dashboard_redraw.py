"""The dashboard's redraw after a data change: a CSV written on disk → its
chart redrawn in the person's page, beside vega drawing the same chart on a
bare page, in the same run and the same browser.

    python benchmarks/bench_dashboard_redraw.py [--samples 10] [--quick]

``pneuma run --mode dashboard --backend none`` serves the seed board (six
tiles over data/sales.csv, 288 rows) to a real Chromium page (Playwright).
Measured:

- **redraw**: data/sales.csv rewritten with new figures (every row's
  revenue scaled, so the bars change height), until the SVG of the
  "Revenue by product" tile differs from before (polled each frame): the
  watcher, the ``content_update``, the viewer's re-read of the rows and
  the redraw of every tile over that file (four of six);
- **baseline, vega alone**: ``vegaEmbed`` of the same spec with the same
  rows (parsed from the same CSV text by ``vega.read``, as the viewer
  does) into a bare element of a blank page of the same browser, timed in
  the page: the floor of any redraw of that chart;
- **first draw** (info): the page opened until every tile has drawn.

The figure is the redraw's median, with a target of 500 ms; exit 0 whatever
the figures. Everything stays on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PNEUMA_BIN, finish, median, row, stop_process, temp_dir  # noqa: E402

from pneuma.api import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

TARGET_REDRAW_MS = 500.0
TILE = "revenue-by-product"
DATA = "data/sales.csv"
READY = "[pneuma] ready "

ALL_DRAWN = """() => {
  const tiles = document.querySelectorAll('section.db-tile');
  return tiles.length > 0 && [...tiles].every((t) => t.dataset.state === 'rendered' || t.dataset.state === 'error');
}"""
TILE_SVG = f"() => document.querySelector('section.db-tile[data-tile=\"{TILE}\"] svg')?.outerHTML ?? ''"
CHANGED = f"""(before) => {{
  const svg = document.querySelector('section.db-tile[data-tile="{TILE}"] svg');
  return Boolean(svg) && svg.outerHTML !== before;
}}"""

# vega alone: the bundle the viewer loads, the tile's spec, the rows of the same text.
VEGA_ALONE = """async ([spec, csv, runs]) => {
  const V = window.PneumaVega;
  const times = [];
  for (let i = 0; i < runs; i++) {
    const holder = document.createElement('div');
    holder.style.cssText = 'width: 400px; height: 300px';
    document.body.replaceChildren(holder);
    const t0 = performance.now();
    const rows = V.vega.read(csv, {type: 'csv', parse: 'auto'});
    const result = await V.vegaEmbed(holder, {...spec, data: {values: rows}, width: 'container', height: 'container',
      autosize: {type: 'fit', contains: 'padding'}},
      {renderer: 'svg', actions: false, ast: true, expr: V.expressionInterpreter});
    times.push(performance.now() - t0);
    result.finalize();
  }
  return times;
}"""


def scaled_csv(text: str, factor: float) -> str:
    """The same table with every revenue multiplied by ``factor`` (the last column)."""
    lines = text.splitlines()
    out = [lines[0]]
    for line in lines[1:]:
        head, _, revenue = line.rpartition(",")
        out.append(f"{head},{float(revenue) * factor:.2f}")
    return "\n".join(out) + "\n"


async def start_server(workspace: Path) -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        str(PNEUMA_BIN), "run", "--mode", "dashboard", "--no-open", "--backend", "none", "--no-prompt",
        "--port", "0", "--workspace", str(workspace),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
    if not line.startswith(READY):
        await stop_process(proc)
        raise RuntimeError(f"pneuma did not start: {line!r}")
    return proc, line[len(READY):]


async def measure(workspace: Path, samples: int) -> dict[str, list[float]]:
    import json

    from playwright.async_api import async_playwright

    board = json.loads((workspace / "dashboard.json").read_text(encoding="utf-8"))
    spec = next(t["spec"] for t in board["tiles"] if t["id"] == TILE)
    original = (workspace / DATA).read_text(encoding="utf-8")
    proc, url = await start_server(workspace)
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 1000})
                t0 = time.perf_counter()
                await page.goto(url, wait_until="domcontentloaded")
                await page.wait_for_function(ALL_DRAWN, polling="raf", timeout=60_000)
                first = [(time.perf_counter() - t0) * 1000]
                redraws = []
                for n in range(samples):
                    before = await page.evaluate(TILE_SVG)
                    text = scaled_csv(original, 1.0 + 0.25 * ((n % 4) + 1))
                    t0 = time.perf_counter()
                    (workspace / DATA).write_text(text, encoding="utf-8")
                    await page.wait_for_function(CHANGED, arg=before, polling="raf", timeout=30_000)
                    redraws.append((time.perf_counter() - t0) * 1000)
                    await page.wait_for_function(ALL_DRAWN, polling="raf", timeout=30_000)
                    print(f"redraw {n + 1}: {redraws[-1]:.0f} ms", flush=True)
                bare = await browser.new_page()
                await bare.goto("about:blank")
                await bare.add_script_tag(path=str(vendor_bundle()))
                alone = await bare.evaluate(VEGA_ALONE, [spec, original, samples])
            finally:
                await browser.close()
    finally:
        (workspace / DATA).write_text(original, encoding="utf-8")
        await stop_process(proc)
    return {"first": first, "redraw": redraws, "alone": [float(t) for t in alone]}


def vendor_bundle() -> Path:
    import pneuma_dashboard

    return Path(pneuma_dashboard.__file__).resolve().parent / "static" / "vendor" / "vega.iife.js"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="3 samples")
    args = parser.parse_args()
    samples = 3 if args.quick else max(1, args.samples)
    from pneuma.testing import make_workspace

    folder = temp_dir("pneuma-bench-dashboard-")
    try:
        got = asyncio.run(measure(make_workspace("dashboard", folder / "ws"), samples))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows = [
        row("dashboard: CSV written → its chart redrawn in the page", median(got["redraw"]), TARGET_REDRAW_MS,
            "ms", "lower", median(got["alone"]), "vegaEmbed of the same chart on a bare page"),
        row("dashboard: page opened → every tile drawn", got["first"][0], None, "ms", "lower", info=True),
    ]
    return finish(rows, f"{samples} redraw(s); medians")


if __name__ == "__main__":
    raise SystemExit(main())
