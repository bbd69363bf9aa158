"""File written → ``content_update`` received by the browser.

The agent's edits reach the viewer through pneuma's file watcher: a file
is written, watchfiles reports it, the server reads it and broadcasts a
``content_update`` with the new content. This measures that whole path
against a real ``pneuma run --mode slide --backend none`` subprocess with
a WebSocket client in this process: write ``slides/99-bench.html`` (new
content each time), time until a ``content_update`` carrying exactly that
content arrives. 50 samples, 80-150 ms apart (random, so the watcher's
10 ms polling step is not sampled at one phase).

Baseline, same run, same directory, before pneuma starts: a bare
``watchfiles.awatch`` with pneuma's parameters (debounce 20 ms, step
10 ms), timing write → change yielded. The difference is what pneuma adds
(globbing, reading the file, JSON, the socket).

    python benchmarks/bench_file_update.py [--samples 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp  # noqa: E402
from _common import (  # noqa: E402
    browser_tab,
    finish,
    machine_note,
    percentile,
    pneuma_run,
    row,
    temp_dir,
)

TARGET_P50_MS = 100.0
TARGET_P95_MS = 150.0
DEBOUNCE_MS = 20  # pneuma's ServerConfig.watch_debounce_ms
STEP_MS = 10  # pneuma's watcher step
REL = "slides/99-bench.html"


def content_for(i: int) -> str:
    return (f'<section class="slide" data-bench="{i}">\n  <h1>Sample {i}</h1>\n'
            f"  <p>written at {time.monotonic_ns()}</p>\n</section>\n")


async def baseline(workspace: Path, samples: int) -> list[float]:
    from watchfiles import awatch

    target = str((workspace / REL).resolve())
    stop = asyncio.Event()
    changes: asyncio.Queue[float] = asyncio.Queue()

    async def watch() -> None:
        async for batch in awatch(workspace, debounce=DEBOUNCE_MS, step=STEP_MS, stop_event=stop,
                                  rust_timeout=500, yield_on_timeout=False, recursive=True):
            now = time.monotonic_ns()
            if any(path == target for _, path in batch):
                changes.put_nowait(now)

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.3)  # watches registered
    out = []
    for i in range(samples):
        while not changes.empty():
            changes.get_nowait()
        text = content_for(i)
        t0 = time.monotonic_ns()
        (workspace / REL).write_text(text, encoding="utf-8")
        t1 = await asyncio.wait_for(changes.get(), 5)
        out.append((t1 - t0) / 1e6)
        await asyncio.sleep(random.uniform(0.08, 0.15))
    stop.set()
    await asyncio.wait_for(task, 3)
    return out


async def measure_pneuma(workspace: Path, url: str, samples: int) -> list[float]:
    out = []
    async with browser_tab(url) as ws:
        await asyncio.sleep(0.3)  # subscribed, watcher settled
        while True:  # drain what subscribing sent
            try:
                await ws.receive(timeout=0.05)
            except asyncio.TimeoutError:
                break
        for i in range(samples):
            text = content_for(i)
            t0 = time.monotonic_ns()
            (workspace / REL).write_text(text, encoding="utf-8")
            t1 = None
            while t1 is None:
                msg = await ws.receive(timeout=5)
                now = time.monotonic_ns()
                if msg.type != aiohttp.WSMsgType.TEXT:
                    raise RuntimeError(f"socket closed: {msg!r}")
                for line in msg.data.split("\n"):
                    data = json.loads(line)
                    if data.get("type") != "content_update":
                        continue
                    for f in data.get("files", []):
                        if f.get("path") == REL and f.get("content") == text:
                            t1 = now
            out.append((t1 - t0) / 1e6)
            await asyncio.sleep(random.uniform(0.08, 0.15))
    return out


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()
    print(machine_note())
    random.seed(7)

    from pneuma.host.registry import get_mode
    from pneuma.workspace.params import init_workspace
    from pneuma.workspace.skill import install_skill

    tmp = temp_dir("pneuma-bench-files-")
    workspace = tmp / "ws"
    workspace.mkdir()
    mode = get_mode("slide")
    install_skill(mode, workspace, init_workspace(mode, workspace, {}, prompt=None).params)
    (workspace / REL).write_text(content_for(-1), encoding="utf-8")

    try:
        base = await baseline(workspace, args.samples)
        async with pneuma_run(workspace) as (_, url):
            mine = await measure_pneuma(workspace, url, args.samples)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    for name, values in (("watchfiles awatch (baseline)", base), ("pneuma content_update", mine)):
        print(f"{name:30} n={len(values)} p50 {percentile(values, 50):6.1f} ms  "
              f"p95 {percentile(values, 95):6.1f} ms  max {max(values):6.1f} ms  "
              f"min {min(values):6.1f} ms")
    rows = [
        row("file write → content_update p50", percentile(mine, 50), TARGET_P50_MS, "ms", "lower",
            percentile(base, 50), "awatch"),
        row("file write → content_update p95", percentile(mine, 95), TARGET_P95_MS, "ms", "lower",
            percentile(base, 95), "awatch"),
    ]
    return finish(rows)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(asyncio.run(main()))
