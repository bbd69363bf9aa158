"""Fan-out: 20,000 stream deltas to 1 and 10 browser sockets.

Two paths into pneuma's real aiohttp app (running in this process):

* ``e2e``    - pneuma's ``ClaudeCodeBackend`` starts ``_stream_cli.py`` as its
               ``claude`` binary; the fake CLI writes 20,000 ``stream_event``
               NDJSON lines (64-byte text deltas) to stdout as fast as the pipe
               takes them; the backend parses them and the session broadcasts.
               This is the honest figure.
* ``inject`` - the same messages handed straight to ``Session.emit`` (256 per
               event-loop turn, about what one pipe read yields), to isolate
               the session + socket cost from stdout parsing.

Baseline, same run, same paths: a bare aiohttp WebSocket server (``_bare.py``)
that serialises each message once and calls ``send_str`` per message per
socket, fed by the same fake CLI or the same generator.

The browsers are ``_ws_client.py`` in a separate process, so this process's
CPU time (``time.process_time()``) is the server's. Latency = client receive
time minus the ``time.monotonic_ns()`` stamped into the delta text when the
delta was made (by the fake CLI for e2e, by the generator for inject).

In a flood the producer can outrun the slowest part of the pipeline, and
then each delta waits behind the ones before it: latency grows through the
run and its p50 is about half the final backlog. The ``1st 10%`` and ``last
10%`` columns (median latency of the first and of the last tenth of the
deltas, in the order they were made) show it: about equal when everything
keeps up. ``load`` is the 1-minute load average when the run started: the
client, the server and the fake CLI share the machine's CPUs, so other work
moves the latencies most.

    python benchmarks/bench_fanout.py [--n 20000] [--rounds 3] [--deflate]

``--deflate``: the clients offer permessage-deflate in the handshake, as
browsers do (each server decides whether to compress).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bare import BareServer  # noqa: E402
from _common import (  # noqa: E402
    ClientProcess,
    burst_prompt,
    delta,
    finish,
    fmt,
    machine_note,
    make_claude_wrapper,
    median,
    pneuma_ws_url,
    start_pneuma_app,
    temp_dir,
    vs_bare,
)

BATCH = 256

# Upstream (TypeScript on Bun), same machine class.
TARGETS = {1: (233_000, 4.25), 10: (773_000, 0.70)}
# Issue 15: p50 latency to 10 tabs (upstream 22 ms), on the honest path.
LATENCY_P50_TARGET_MS = {("e2e", 10): 20.0}


def load_1min() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


class Bench:
    def __init__(self, n: int) -> None:
        self.n = n
        self.tmp = temp_dir("pneuma-bench-fanout-")
        self.wrapper = make_claude_wrapper(self.tmp / "bin")

    async def setup(self) -> None:
        self.inject_app = await start_pneuma_app(self.tmp / "ws-inject", backend="none")
        self.e2e_app = await start_pneuma_app(self.tmp / "ws-e2e", backend="claude-code",
                                              claude_bin=str(self.wrapper))
        self.bare = BareServer()
        await self.bare.start()
        await self.bare.start_cli(str(self.tmp))
        # The slide mode's greeting starts the fake CLI; let it settle.
        session = self.e2e_app[2]
        for _ in range(200):
            if session.status == "idle" and session.agent_connected:
                break
            await asyncio.sleep(0.01)

    async def teardown(self) -> None:
        await self.bare.stop()
        for runner, *_ in (self.e2e_app, self.inject_app):
            await runner.cleanup()
        shutil.rmtree(self.tmp, ignore_errors=True)

    async def _wait_sockets(self, impl: str, app: Any, k: int) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while True:
            if impl == "bare":
                have = len(self.bare.sockets)
            else:
                have = sum(1 for c in app[2].connections if c.subscribed and not c.closed)
            if have == k:
                return
            if loop.time() > deadline:
                raise RuntimeError(f"{impl}: {have} sockets instead of {k}")
            await asyncio.sleep(0.005)

    async def run_once(self, impl: str, path: str, k: int, n: int) -> dict[str, Any]:
        app = self.e2e_app if path == "e2e" else self.inject_app
        if impl == "pneuma":
            runner, base, session, token = app
            url = pneuma_ws_url(base, session.id, token)
        else:
            url = self.bare.url
        load = load_1min()
        client = await ClientProcess.start(url, k, n, subscribe=impl == "pneuma")
        try:
            await self._wait_sockets(impl, app, k)
            gc.collect()
            cpu0 = time.process_time()
            t0 = time.monotonic_ns()
            if path == "e2e":
                if impl == "pneuma":
                    await app[2].backend.send_user_message(burst_prompt(n), [])
                else:
                    await self.bare.trigger(n)
            else:
                if impl == "pneuma":
                    emit = app[2].emit
                    for i in range(n):
                        emit(delta())
                        if i % BATCH == BATCH - 1:
                            await asyncio.sleep(0)
                else:
                    broadcast = self.bare.broadcast
                    for i in range(n):
                        await broadcast(delta())
                        if i % BATCH == BATCH - 1:
                            await asyncio.sleep(0)
            res = await client.result()
            cpu = time.process_time() - cpu0
        finally:
            client.kill()
        delivered = sum(res["counts"])
        if res["timed_out"] or delivered != n * k:
            raise RuntimeError(f"{impl}/{path}/{k}: delivered {res['counts']} of {n} each")
        wall = (res["last_recv_ns"] - t0) / 1e9
        return {
            "msgs_per_s": delivered / wall,
            "cpu_us_per_msg": cpu * 1e6 / delivered,
            "p50_us": res["lat_p50_us"],
            "p99_us": res["lat_p99_us"],
            "max_us": res["lat_max_us"],
            "first_tenth_us": res["lat_p50_first_tenth_us"],
            "last_tenth_us": res["lat_p50_last_tenth_us"],
            "load": load,
            "frames": sum(res["frames"]),
            "client_cpu_s": res["client_cpu_s"],
            "wall_s": wall,
        }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="deltas per run")
    parser.add_argument("--rounds", type=int, default=3, help="repetitions (medians reported)")
    parser.add_argument("--deflate", action="store_true",
                        help="clients offer permessage-deflate, as browsers do")
    args = parser.parse_args()
    if args.deflate:
        os.environ["PNEUMA_BENCH_DEFLATE"] = "1"  # read by _ws_client.py

    print(machine_note())
    bench = Bench(args.n)
    await bench.setup()
    results: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
    try:
        # Warm-up: imports, first-frame paths, JIT-free but cache-warm.
        for impl in ("pneuma", "bare"):
            for path in ("e2e", "inject"):
                await bench.run_once(impl, path, 1, 2000)
        print(f"fan-out of {args.n:,} deltas; {args.rounds} rounds; medians reported"
              + ("; clients offer permessage-deflate" if args.deflate else ""))
        print(f"{'run':28} {'msg/s':>10} {'cpu µs/msg':>11} {'p50 ms':>8} {'p99 ms':>8} "
              f"{'max ms':>8} {'1st 10%':>8} {'last 10%':>8} {'frames':>8} "
              f"{'client cpu s':>12} {'load':>5}")
        for r in range(args.rounds):
            for path in ("e2e", "inject"):
                for k in (1, 10):
                    for impl in ("pneuma", "bare"):
                        res = await bench.run_once(impl, path, k, args.n)
                        results[(path, k, impl)].append(res)
                        label = f"[{r + 1}] {path:6} {k:2} sock {impl}"
                        print(f"{label:28} {res['msgs_per_s']:>10,.0f} {res['cpu_us_per_msg']:>11.2f} "
                              f"{res['p50_us'] / 1000:>8.2f} {res['p99_us'] / 1000:>8.2f} "
                              f"{res['max_us'] / 1000:>8.2f} {res['first_tenth_us'] / 1000:>8.2f} "
                              f"{res['last_tenth_us'] / 1000:>8.2f} {res['frames']:>8} "
                              f"{res['client_cpu_s']:>12.2f} {res['load']:>5.2f}", flush=True)
    finally:
        await bench.teardown()

    def med(path: str, k: int, impl: str, key: str) -> float:
        return median([x[key] for x in results[(path, k, impl)]])

    rows = []
    for path in ("e2e", "inject"):
        for k in (1, 10):
            rate_t, cpu_t = TARGETS[k]
            # (figure, result key, divisor to the unit, target, unit, better)
            for figure, key, per_unit, target, unit, better in (
                    ("msg/s", "msgs_per_s", 1, rate_t, "msg/s", "higher"),
                    ("server CPU/msg", "cpu_us_per_msg", 1, cpu_t, "µs", "lower"),
                    ("latency p50", "p50_us", 1000, LATENCY_P50_TARGET_MS.get((path, k)), "ms",
                     "lower"),
                    ("latency p99", "p99_us", 1000, None, "ms", "lower")):
                rows.append(vs_bare(f"fanout {path} {k} sock {figure}",
                                    lambda impl, path=path, k=k, key=key, per_unit=per_unit:
                                    med(path, k, impl, key) / per_unit,
                                    target, unit, better))
    return finish(rows, f"(e2e = fake CLI stdout → ClaudeCodeBackend → Session → sockets; "
                        f"inject = Session.emit → sockets; targets are upstream Bun figures; "
                        f"n={fmt(args.n)})")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
