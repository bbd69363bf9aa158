"""Paced stream: 1,000 deltas/s for ~5 s to one browser socket; worst latency.

A streaming reply is not a flood: tokens arrive a few hundred per second,
and what the person feels is how long each one waits in the server. Same
two paths as bench_fanout.py:

* ``e2e``    - the fake CLI (``_stream_cli.py``, started by pneuma's
               ``ClaudeCodeBackend``) writes and flushes one ``stream_event``
               line every millisecond on an absolute schedule, stamping each
               with ``time.monotonic_ns()`` as it writes it;
* ``inject`` - a task in the server process calls ``Session.emit`` every
               millisecond (stamped at the call).

Baseline, same run: the bare aiohttp server (``_bare.py``) fed the same
way. The browser is ``_ws_client.py`` in a separate process (GC off there,
so its pauses do not count against the server). Latency = receive time -
stamp; the target is on the worst single message.

    python benchmarks/bench_paced.py [--rate 1000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bare import BareServer  # noqa: E402
from _common import (  # noqa: E402
    ClientProcess,
    burst_prompt,
    emit_results,
    machine_note,
    make_claude_wrapper,
    pneuma_ws_url,
    row,
    start_pneuma_app,
    temp_dir,
)

FILLER = "x" * 43
WORST_TARGET_MS = 2.0


def delta() -> dict[str, Any]:
    return {"type": "stream_event",
            "event": {"type": "content_block_delta", "index": 0,
                      "delta": {"type": "text_delta",
                                "text": "@%019d|%s" % (time.monotonic_ns(), FILLER)}},
            "parent_tool_use_id": None}


async def paced(send, n: int, rate: float) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.005
    for i in range(n):
        delay = start + i / rate - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        result = send(delta())
        if result is not None:
            await result


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="deltas per second")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    n = int(args.rate * args.seconds)
    print(machine_note())

    tmp = temp_dir("pneuma-bench-paced-")
    wrapper = make_claude_wrapper(tmp / "bin")
    inject_app = await start_pneuma_app(tmp / "ws-inject", backend="none")
    e2e_app = await start_pneuma_app(tmp / "ws-e2e", backend="claude-code", claude_bin=str(wrapper))
    bare = BareServer()
    await bare.start()
    await bare.start_cli(str(tmp))
    for _ in range(200):  # the slide greeting starts the fake CLI
        if e2e_app[2].status == "idle" and e2e_app[2].agent_connected:
            break
        await asyncio.sleep(0.01)

    results: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        print(f"paced: {n:,} deltas at {args.rate:,.0f}/s to 1 socket")
        print(f"{'run':20} {'p50 ms':>8} {'p99 ms':>8} {'worst ms':>9} {'achieved/s':>11}")
        for path in ("e2e", "inject"):
            for impl in ("pneuma", "bare"):
                app = e2e_app if path == "e2e" else inject_app
                if impl == "pneuma":
                    url = pneuma_ws_url(app[1], app[2].id, app[3])
                else:
                    url = bare.url
                client = await ClientProcess.start(url, 1, n, subscribe=impl == "pneuma",
                                                   timeout=args.seconds + 20)
                try:
                    if impl == "bare":
                        await bare.wait_for_sockets(1)
                    gc.collect()
                    t0 = time.monotonic_ns()
                    if path == "e2e":
                        if impl == "pneuma":
                            await app[2].backend.send_user_message(burst_prompt(n, args.rate), [])
                        else:
                            await bare.trigger(n, args.rate)
                    else:
                        await paced(app[2].emit if impl == "pneuma" else bare.broadcast, n, args.rate)
                    res = await client.result(timeout=args.seconds + 30)
                finally:
                    client.kill()
                if res["timed_out"] or res["counts"][0] != n:
                    raise RuntimeError(f"{impl}/{path}: got {res['counts']} of {n}")
                res["rate"] = n / ((res["last_recv_ns"] - t0) / 1e9)
                results[(path, impl)] = res
                print(f"{path + ' ' + impl:20} {res['lat_p50_us'] / 1000:>8.3f} "
                      f"{res['lat_p99_us'] / 1000:>8.3f} {res['lat_max_us'] / 1000:>9.3f} "
                      f"{res['rate']:>11,.0f}", flush=True)
    finally:
        await bare.stop()
        for runner, *_ in (e2e_app, inject_app):
            await runner.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)

    rows = []
    for path in ("e2e", "inject"):
        p, b = results[(path, "pneuma")], results[(path, "bare")]
        rows.append(row(f"paced {path} worst latency", p["lat_max_us"] / 1000, WORST_TARGET_MS, "ms",
                        "lower", b["lat_max_us"] / 1000, "bare aiohttp"))
        rows.append(row(f"paced {path} p99 latency", p["lat_p99_us"] / 1000, None, "ms", "lower",
                        b["lat_p99_us"] / 1000, "bare aiohttp"))
        rows.append(row(f"paced {path} p50 latency", p["lat_p50_us"] / 1000, None, "ms", "lower",
                        b["lat_p50_us"] / 1000, "bare aiohttp"))
    emit_results(rows)
    print(machine_note())
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
