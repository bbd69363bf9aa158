"""Browser stand-in for the benchmarks: K WebSocket clients in one process.

Connects ``--sockets`` sockets to ``--url`` (with ``--subscribe``, speaks
pneuma's handshake: waits for ``session_init``, sends
``session_subscribe {last_seq}`` and waits for the ``status_change``
snapshot), prints ``READY``, then counts every message carrying a
benchmark delta (``"text":"@<19-digit monotonic ns>|``) until each socket
has ``--expect`` of them. Frames may hold one message or many separated by
newlines (pneuma coalesces). Latency of a message = receive time of its
frame minus the timestamp in its text. Prints one JSON line with the
results.

The client is the instrument, and on a 2-CPU machine it shares the CPUs
with the server and the fake CLI: whatever it spends per message while the
deltas arrive is CPU the server does not get, and with ten sockets in one
process it was the slowest part of the pipeline (its queue, not the
server's, was most of the latency measured). So while measuring it does
the least per frame: one receive, one clock read, one count of the deltas
(no JSON, no per-message Python), keeping the frame's text; the latencies
are worked out from the kept frames after the run. The garbage collector
is off meanwhile, as its pauses would show up as server latency.

``--deflate`` offers permessage-deflate in the handshake, as every browser
does (the server decides whether to use it); also set by the environment
variable ``PNEUMA_BENCH_DEFLATE=1``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import time

import aiohttp

MARK = '"text":"@'
MARK_LEN = len(MARK)
STAMP_LEN = 19


def pct(ordered: list[int], q: float) -> float:
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, int(round(q / 100.0 * len(ordered) + 0.5)) - 1))
    return ordered[rank]


def stamped(received: list[tuple[int, str]]) -> list[tuple[int, int]]:
    """(stamp, latency) of every delta of the kept frames: receive time of
    its frame minus the stamp in its text."""
    out: list[tuple[int, int]] = []
    add = out.append
    for now, data in received:
        idx = data.find(MARK)
        while idx >= 0:
            start = idx + MARK_LEN
            stamp = int(data[start:start + STAMP_LEN])
            add((stamp, now - stamp))
            idx = data.find(MARK, start + STAMP_LEN)
    return out


def tenth_medians(pairs: list[tuple[int, int]]) -> tuple[float, float]:
    """Median latency (µs) of the first and of the last tenth of the deltas
    in the order they were made: about equal when the consumers keep up,
    the last far above the first when the flood queued up somewhere."""
    if not pairs:
        return float("nan"), float("nan")
    ordered = sorted(pairs)
    tenth = max(1, len(ordered) // 10)
    first = sorted(lat for _, lat in ordered[:tenth])
    last = sorted(lat for _, lat in ordered[-tenth:])
    return pct(first, 50) / 1000, pct(last, 50) / 1000


async def run(args: argparse.Namespace) -> dict:
    clock = time.monotonic_ns
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
    compress = 15 if args.deflate else 0
    async with aiohttp.ClientSession(timeout=timeout) as http:
        sockets = []
        for _ in range(args.sockets):
            ws = await http.ws_connect(args.url, max_msg_size=0, autoping=True, compress=compress)
            if args.subscribe:
                last_seq = 0
                while True:
                    msg = await ws.receive(timeout=10)
                    data = json.loads(msg.data.split("\n", 1)[0])
                    if data.get("type") == "session_init":
                        last_seq = data["session"]["last_seq"]
                        break
                await ws.send_str(json.dumps({"type": "session_subscribe", "last_seq": last_seq}))
                while True:
                    msg = await ws.receive(timeout=10)
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        raise RuntimeError(f"socket closed during subscribe: {msg!r}")
                    if '"type":"status_change"' in msg.data and '"seq"' not in msg.data:
                        break
            sockets.append(ws)

        # (receive time, text) of every frame holding deltas, all sockets.
        received: list[tuple[int, str]] = []
        counts = [0] * len(sockets)
        frames = [0] * len(sockets)
        first = [0] * len(sockets)
        last = [0] * len(sockets)
        expect = args.expect

        async def reader(i: int, ws: aiohttp.ClientWebSocketResponse) -> None:
            keep = received.append
            n = 0
            f = 0
            receive = ws.receive
            TEXT = aiohttp.WSMsgType.TEXT
            while n < expect:
                msg = await receive()
                now = clock()
                if msg.type is not TEXT:
                    break
                data = msg.data
                f += 1
                got = data.count(MARK)
                if not got:
                    continue
                if first[i] == 0:
                    first[i] = now
                keep((now, data))
                n += got
                last[i] = now
            counts[i] = n
            frames[i] = f

        gc.collect()
        gc.disable()
        cpu0 = time.process_time()
        print("READY", flush=True)
        tasks = [asyncio.create_task(reader(i, ws)) for i, ws in enumerate(sockets)]
        done, pending = await asyncio.wait(tasks, timeout=args.timeout)
        for task in pending:
            task.cancel()
        cpu = time.process_time() - cpu0
        gc.enable()
        for ws in sockets:
            await ws.close()
    pairs = stamped(received)
    latencies = sorted(lat for _, lat in pairs)
    first_tenth, last_tenth = tenth_medians(pairs)
    return {
        "counts": counts,
        "frames": frames,
        "timed_out": bool(pending),
        "first_recv_ns": min((x for x in first if x), default=0),
        "last_recv_ns": max(last),
        "lat_p50_us": pct(latencies, 50) / 1000,
        "lat_p99_us": pct(latencies, 99) / 1000,
        "lat_max_us": (latencies[-1] / 1000) if latencies else float("nan"),
        "lat_mean_us": (sum(latencies) / len(latencies) / 1000) if latencies else float("nan"),
        "lat_p50_first_tenth_us": first_tenth,
        "lat_p50_last_tenth_us": last_tenth,
        "client_cpu_s": cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--sockets", type=int, default=1)
    parser.add_argument("--expect", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--subscribe", action="store_true")
    parser.add_argument("--deflate", action="store_true",
                        default=os.environ.get("PNEUMA_BENCH_DEFLATE") == "1",
                        help="offer permessage-deflate, as browsers do")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
