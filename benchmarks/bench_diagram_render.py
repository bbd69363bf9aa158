"""validate_diagram and render_diagram, cold and warm, beside a bare Chromium start (issue 25, item 22).

    .venv/bin/python benchmarks/bench_diagram_render.py [--cold-runs 3] [--warm-calls 25]

Measured in this one run, on the diagram mode's own seed workspace
(``init_workspace``):

- **bare Chromium start**: ``chromium --headless --dump-dom`` of a one-line
  page with the host's ``CHROMIUM`` and ``CHROMIUM_ARGS``, the floor of any
  call that starts a browser;
- **before item 22**: what every call did until then, reproduced here
  (Playwright started, Chromium launched, the page with the 5 MB mermaid
  bundle loaded, every seed parsed, the browser closed): the first such call
  of a fresh process (**cold**) and a later one;
- **now, cold**: the first ``validate_diagram`` of a fresh Python process,
  called as the agent calls it (``call_tool``: schemas, sandbox, the file
  read); goal: no slower than the cold call before;
- **now, warm**: the median of ``--warm-calls`` further ``validate_diagram``
  and ``render_diagram`` (SVG of the seed ``architecture.mmd``) calls in one
  process; goal at most 100 ms a call;
- **mermaid alone**: ``mermaid.parse`` and ``mermaid.render`` of the same
  seeds timed inside the warm page, the floor no tool call can go under
  (rendering lays the diagram out, which is most of a warm render's time).

Cold runs alternate before/now, so a load change moves both. Everything
stays on this machine; no network.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import PYTHON, finish, median, row, temp_dir  # noqa: E402

from pneuma.api import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

WARM_GOAL_S = 0.100
ONE_LINE_PAGE = "<!doctype html><meta charset=utf-8><p>Pneuma diagram floor</p>"

# One process: the first call timed alone (after the imports), then a second one.
NOW = """
import json, sys, time
from pathlib import Path
from pneuma.testing import call_tool
workspace = Path(sys.argv[1])
t0 = time.perf_counter()
answer = call_tool("diagram", workspace, "validate_diagram", {})
took = time.perf_counter() - t0
assert answer.get("valid") is True, answer
print(json.dumps({"first_s": took}))
"""

# What a validate_diagram call did before item 22: its own Playwright and
# Chromium, the mermaid page loaded, every source parsed, all closed again.
BEFORE = """
import asyncio, json, sys, tempfile, time
from pathlib import Path
from pneuma.api import CHROMIUM, CHROMIUM_ARGS

async def one_call(workspace):
    from playwright.async_api import async_playwright
    from pneuma_diagram.render import MERMAID_BUNDLE, _ONE_PAGE, _RENDER_ONE
    sources = [p.read_text(encoding="utf-8") for p in sorted(workspace.glob("*.mmd"))]
    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / "render.html"
        page_file.write_text(_ONE_PAGE.format(bundle=MERMAID_BUNDLE.as_uri(), render_one=_RENDER_ONE))
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = await browser.new_page()
            await page.goto(page_file.as_uri(), wait_until="load")
            assert await page.evaluate("() => pneumaStart('default')") is True
            for i, text in enumerate(sources):
                out = await page.evaluate("([t, i]) => pneumaRenderOne(t, i, false)", [text, i])
                assert out["ok"], out
            await browser.close()

workspace = Path(sys.argv[1])
times = []
for _ in range(2):
    t0 = time.perf_counter()
    asyncio.run(one_call(workspace))
    times.append(time.perf_counter() - t0)
print(json.dumps({"first_s": times[0], "later_s": times[1]}))
"""

MERMAID_ALONE = """async ([sources, render]) => {
  const m = PneumaMermaid.mermaid;
  const t0 = performance.now();
  for (let i = 0; i < sources.length; i++) {
    if (render) await m.render("pneuma-bench-" + i, sources[i]); else await m.parse(sources[i]);
  }
  return (performance.now() - t0) / 1000;
}"""


def seed_workspace() -> Path:
    from pneuma.testing import make_workspace

    return make_workspace("diagram", temp_dir("pneuma-bench-diagram-") / "ws")


def bare_chromium_s(workdir: Path) -> float:
    page = workdir / "floor.html"
    page.write_text(ONE_LINE_PAGE, encoding="utf-8")
    t0 = time.perf_counter()
    subprocess.run([CHROMIUM, "--headless", *CHROMIUM_ARGS, f"--user-data-dir={workdir / 'profile'}",
                    "--dump-dom", page.as_uri()], capture_output=True, check=True, timeout=60)
    return time.perf_counter() - t0


def in_fresh_process(script: str, workspace: Path) -> dict[str, float]:
    done = subprocess.run([PYTHON, "-c", script, str(workspace)], capture_output=True, text=True,
                          check=True, timeout=120)
    return {k: float(v) for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}


def warm_calls_s(workspace: Path, calls: int) -> tuple[float, float]:
    from pneuma.testing import call_tool

    assert call_tool("diagram", workspace, "validate_diagram", {})["valid"] is True  # warms it
    validate, render = [], []
    for _ in range(calls):
        t0 = time.perf_counter()
        assert call_tool("diagram", workspace, "validate_diagram", {})["valid"] is True
        validate.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        assert call_tool("diagram", workspace, "render_diagram", {"file": "architecture.mmd"})["bytes"] > 0
        render.append(time.perf_counter() - t0)
    return median(validate), median(render)


def mermaid_alone_s(workspace: Path, calls: int) -> tuple[float, float]:
    """mermaid's own parse of every seed and render of architecture.mmd, in the warm page."""
    from typing import Any

    from pneuma_diagram.warm import RENDERER

    sources = [p.read_text(encoding="utf-8") for p in sorted(workspace.glob("*.mmd"))]
    drawn = [(workspace / "architecture.mmd").read_text(encoding="utf-8")]

    async def timed(renderer: Any) -> tuple[float, float]:
        page = (await renderer.page(CHROMIUM, "mermaid")).page
        parse = [await page.evaluate(MERMAID_ALONE, [sources, False]) for _ in range(calls)]
        render = [await page.evaluate(MERMAID_ALONE, [drawn, True]) for _ in range(calls)]
        return median(parse), median(render)

    return RENDERER.call(timed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--warm-calls", type=int, default=25)
    args = parser.parse_args()
    workspace = seed_workspace()
    floors, before, now = [], [], []
    for _ in range(args.cold_runs):
        floors.append(bare_chromium_s(temp_dir("pneuma-bench-chromium-")))
        before.append(in_fresh_process(BEFORE, workspace))
        now.append(in_fresh_process(NOW, workspace))
    warm_validate, warm_render = warm_calls_s(workspace, max(20, args.warm_calls))
    parse_alone, render_alone = mermaid_alone_s(workspace, max(20, args.warm_calls))
    before_cold = median([b["first_s"] for b in before])
    before_later = median([b["later_s"] for b in before])
    rows = [
        row("bare Chromium start (--dump-dom, one-line page)", median(floors), None, "s", "lower", info=True),
        row("before item 22: cold call (own Chromium)", before_cold, None, "s", "lower", info=True),
        row("before item 22: later call (own Chromium)", before_later, None, "s", "lower", info=True),
        row("validate_diagram, cold (first call of a process)", median([n["first_s"] for n in now]),
            before_cold, "s", "lower", baseline=before_cold, baseline_label="cold call before"),
        row("validate_diagram, warm (median)", warm_validate, WARM_GOAL_S, "s", "lower",
            baseline=before_later, baseline_label="later call before"),
        row("render_diagram svg, warm (median)", warm_render, WARM_GOAL_S, "s", "lower",
            baseline=before_later, baseline_label="later call before"),
        row("render_diagram warm, beyond mermaid.render alone", warm_render - render_alone, WARM_GOAL_S, "s",
            "lower"),
        row("mermaid.parse alone, both seeds (in the page)", parse_alone, None, "s", "lower", info=True),
        row("mermaid.render alone, architecture.mmd (in the page)", render_alone, None, "s", "lower",
            info=True),
    ]
    return finish(rows, f"warm goal: at most {WARM_GOAL_S * 1000:.0f} ms a call; cold goal: no slower than "
                        f"the cold call before ({before_cold:.2f} s here); a warm render cannot go under "
                        "mermaid's own render of the same diagram")


if __name__ == "__main__":
    sys.exit(main())
