"""Browser stand-in for the benchmarks: K WebSocket clients in one process.

Connects ``--sockets`` sockets to ``--url`` (with ``--subscribe``, speaks
pneuma's handshake: waits for ``session_init``, sends
``session_subscribe {last_seq}`` and waits for the ``status_change``
snapshot), prints ``READY``, then counts every message carrying a
benchmark delta (``"text":"@<19-digit monotonic ns>|``) until each socket
has ``--expect`` of them. Frames may hold one message or many separated by
newlines (pneuma coalesces); both are handled without parsing JSON, so the
client stays cheap. Latency of a message = receive time of its frame minus
the timestamp in its text. Prints one JSON line with the results.

The garbage collector is off while measuring: the client is the
instrument, and its pauses would show up as server latency.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time

import aiohttp

MARK = '"text":"@'
MARK_LEN = len(MARK)


def pct(ordered: list[int], q: float) -> float:
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, int(round(q / 100.0 * len(ordered) + 0.5)) - 1))
    return ordered[rank]


async def run(args: argparse.Namespace) -> dict:
    clock = time.monotonic_ns
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        sockets = []
        for _ in range(args.sockets):
            ws = await http.ws_connect(args.url, max_msg_size=0, autoping=True)
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

        latencies: list[int] = []
        counts = [0] * len(sockets)
        frames = [0] * len(sockets)
        first = [0] * len(sockets)
        last = [0] * len(sockets)
        expect = args.expect

        async def reader(i: int, ws: aiohttp.ClientWebSocketResponse) -> None:
            add = latencies.append
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
                idx = data.find(MARK)
                if idx < 0:
                    continue
                if first[i] == 0:
                    first[i] = now
                while idx >= 0:
                    start = idx + MARK_LEN
                    add(now - int(data[start:start + 19]))
                    n += 1
                    idx = data.find(MARK, start + 60)
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
    latencies.sort()
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
        "client_cpu_s": cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--sockets", type=int, default=1)
    parser.add_argument("--expect", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--subscribe", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
