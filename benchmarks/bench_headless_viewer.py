"""The headless viewer, cold and warm, beside bare Playwright opening the same page (issue 26, item 3).

    .venv/bin/python benchmarks/bench_headless_viewer.py [--cold-runs 3] [--warm-calls 20]

Measured in this one run, each against a fresh `pneuma run --mode slide`
(no agent, no tab) on the mode's seed deck:

- **bare Playwright**: the floor of a cold answer. This process starts
  Playwright, launches the host's Chromium with its flags, opens the shell's
  URL and waits until the slide viewer is mounted (``ui.viewerReady``), then
  times ``describe-view`` run in that page directly (``runAction``, no HTTP,
  no socket): the floor of a warm answer;
- **headless viewer, cold**: the agent's first ``POST /api/viewer/action``
  ``describe-view`` with every tab closed: the server starts Chromium,
  opens its page, the viewer mounts and answers over the page's socket;
- **headless viewer, warm**: the median of ``--warm-calls`` further
  ``describe-view`` and ``capture-screenshot`` calls (the PNG written to
  ``.pneuma/captures/``);
- **memory**: the proportional set size of the headless Chromium's process
  tree after the warm calls (``GET /api/headless-viewer``), beside the same
  figure for the bare Playwright Chromium with the same page.

Cold runs alternate bare/headless, so a load change moves both. Everything
stays on this machine; no network.
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

COLD_GOAL_S = 5.0  # the agent's first look at a closed workspace, Chromium start included
WARM_GOAL_S = 0.25  # a later describe-view, socket round trip included
VIEWER_READY = "() => window.pneuma && window.pneuma.ui.viewerReady === true"


async def action(http: Any, base: str, token: str, action_id: str) -> dict[str, Any]:
    async with http.post(f"{base}/api/viewer/action", json={"actionId": action_id, "params": {}},
                         headers={"Authorization": f"Bearer {token}"}) as response:
        answer: dict[str, Any] = await response.json()
    assert answer.get("success") is True and answer.get("viewer") == "headless", answer
    return answer


def server_parts(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return f"http://{parts.netloc}", parse_qs(parts.query)["token"][0]


async def headless_run(workspace: Path, warm_calls: int) -> dict[str, float]:
    import aiohttp

    async with pneuma_run(workspace) as (_proc, url), aiohttp.ClientSession() as http:
        base, token = server_parts(url)
        t0 = time.perf_counter()
        await action(http, base, token, "describe-view")
        cold = time.perf_counter() - t0
        describe, capture = [], []
        for _ in range(warm_calls):
            t0 = time.perf_counter()
            await action(http, base, token, "describe-view")
            describe.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await action(http, base, token, "capture-screenshot")
            capture.append(time.perf_counter() - t0)
        await asyncio.sleep(0.5)  # the memory check runs after each answer
        async with http.get(f"{base}/api/headless-viewer", headers={"Authorization": f"Bearer {token}"}) as r:
            state = await r.json()
    return {"cold": cold, "describe": median(describe), "capture": median(capture),
            "pss": state["rssBytes"] / 2**20}


async def bare_run(workspace: Path, warm_calls: int) -> dict[str, float]:
    from playwright.async_api import async_playwright

    from pneuma.headless_viewer import processes

    marker = "--pneuma-bench-bare=1"
    async with pneuma_run(workspace) as (_proc, url):
        t0 = time.perf_counter()
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, marker])
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await page.goto(url, wait_until="commit")
            await page.wait_for_function(VIEWER_READY, timeout=30_000)
            cold = time.perf_counter() - t0
            warm = []
            for _ in range(warm_calls):
                t0 = time.perf_counter()
                await page.evaluate("() => window.pneuma.ui.host.runAction('describe-view', {})")
                warm.append(time.perf_counter() - t0)
            pid = processes.browser_pid(marker)
            pss = processes.resident_bytes(processes.process_tree(pid)) / 2**20 if pid else float("nan")
            await browser.close()
    return {"cold": cold, "describe": median(warm), "pss": pss}


async def measure(cold_runs: int, warm_calls: int) -> list[dict[str, Any]]:
    from pneuma.testing import make_workspace

    bare, headless = [], []
    for run in range(cold_runs):
        root = temp_dir("pneuma-bench-headless-")
        bare.append(await bare_run(make_workspace("slide", root / f"bare-{run}"), warm_calls if run == 0 else 3))
        headless.append(await headless_run(make_workspace("slide", root / f"headless-{run}"),
                                           warm_calls if run == 0 else 3))
    bare_cold = median([b["cold"] for b in bare])
    return [
        row("bare Playwright: launch, open the shell, viewer mounted", bare_cold, None, "s", "lower", info=True),
        row("bare Playwright: describe-view in the page (median)", bare[0]["describe"], None, "s", "lower",
            info=True),
        row("headless viewer: first describe-view (cold)", median([h["cold"] for h in headless]), COLD_GOAL_S,
            "s", "lower", baseline=bare_cold, baseline_label="bare Playwright open"),
        row("headless viewer: describe-view, warm (median)", headless[0]["describe"], WARM_GOAL_S, "s",
            "lower", baseline=bare[0]["describe"], baseline_label="in the page"),
        row("headless viewer: capture-screenshot, warm (median)", headless[0]["capture"], None, "s", "lower",
            info=True),
        row("headless viewer: Chromium tree PSS after the warm calls", headless[0]["pss"], None, "MiB",
            "lower", baseline=bare[0]["pss"], baseline_label="bare Playwright, same page", info=True),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--warm-calls", type=int, default=20)
    args = parser.parse_args()
    rows = asyncio.run(measure(args.cold_runs, args.warm_calls))
    return finish(rows, f"cold goal: at most {COLD_GOAL_S:g} s for the agent's first look (Chromium "
                        f"started); warm goal: at most {WARM_GOAL_S * 1000:.0f} ms a describe-view")


if __name__ == "__main__":
    sys.exit(main())
