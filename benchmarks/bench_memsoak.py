"""Memory over a long working session: 30 bursts of 20,000 deltas.

One real ``pneuma run --mode slide --backend claude-code`` whose
``--claude-bin`` is ``_soak_cli.py``: each burst is a ``user_message`` from
one subscribed browser socket (which reads everything), answered by 20,000
``content_block_delta`` stream events of 64 bytes of text, then the whole
text again in the ``assistant`` message and in ``result.result``, as Claude
Code sends a reply. After each burst (once its ``result`` has reached the
socket, plus a short settle) the server's RSS (``VmRSS`` of
/proc/<pid>/status).

Baseline, same run, bursts interleaved: ``_bare_relay.py``, a bare aiohttp
process relaying the same fake CLI's lines to one socket and keeping
nothing; its RSS after each burst the same way.

Figures: RSS after burst 10 (goal ≤ 80 MiB) and flatness, RSS at burst 30
minus burst 10 (goal ≤ 5 MiB); with fewer bursts the figures name the
bursts they compare.

Also reported: RSS ``--idle`` s after the last burst (pneuma saves its
state every 5 s; what a save keeps shows there), peak RSS (``VmHWM``), the
median time of a burst, and the session's state files on disk at the end.

The bursts follow each other at once; ``--pause S`` waits S seconds
between them (a user reading the reply; with S above 5, every burst is
followed by one of pneuma's periodic saves).

    python benchmarks/bench_memsoak.py [--bursts 30] [--deltas 20000] [--idle 6] [--pause 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp  # noqa: E402
from _common import (  # noqa: E402
    HERE,
    PYTHON,
    browser_tab,
    finish,
    machine_note,
    make_claude_wrapper,
    median,
    pneuma_run,
    row,
    rss_kib,
    stop_process,
    temp_dir,
)

SOAK_CLI = HERE / "_soak_cli.py"
BARE_RELAY = HERE / "_bare_relay.py"
TARGET_RSS_MIB = 80.0
TARGET_GROWTH_MIB = 5.0
# After a burst's result reached the socket: let the last writes and the
# allocator settle before reading RSS.
SETTLE_S = 0.2
DELTA = '"type":"content_block_delta"'
RESULT = '"type":"result"'


def soak_wrapper(directory: Path) -> Path:
    """An executable ``claude`` that runs ``_soak_cli.py``."""
    return make_claude_wrapper(directory, SOAK_CLI)


def vm_kib(pid: int, field: str) -> int:
    """A ``Vm*`` line of /proc/<pid>/status, in KiB (VmHWM: peak RSS)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


async def burst(ws: aiohttp.ClientWebSocketResponse, deltas: int, number: int) -> float:
    """One reply of ``deltas`` deltas, read to its ``result``; seconds taken."""
    t0 = time.monotonic()
    await ws.send_str(json.dumps({"type": "user_message", "content": f"soak n={deltas}",
                                  "client_msg_id": f"soak-{number}"}))
    got, done = 0, False
    while not done:
        msg = await ws.receive(timeout=60)
        if msg.type != aiohttp.WSMsgType.TEXT:
            raise RuntimeError(f"socket closed during burst {number} ({got:,} deltas in): {msg!r}")
        got += msg.data.count(DELTA)
        # The result of this burst's reply, not of a turn before it (the
        # greeting, had it not ended yet): it comes after all the deltas.
        done = got >= deltas and RESULT in msg.data
    return time.monotonic() - t0


async def settle_greeting(ws: aiohttp.ClientWebSocketResponse, quiet: float = 0.5) -> None:
    """Read until the socket has been quiet for ``quiet`` s (the mode's
    greeting turn, answered by the fake CLI, is over)."""
    while True:
        try:
            msg = await ws.receive(timeout=quiet)
        except asyncio.TimeoutError:
            return
        if msg.type != aiohttp.WSMsgType.TEXT:
            raise RuntimeError(f"socket closed: {msg!r}")


async def start_relay() -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        PYTHON, str(BARE_RELAY), "--cli", str(SOAK_CLI), stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode().strip()
    if not line.startswith("ready "):
        proc.kill()
        raise RuntimeError(f"bare relay did not start: {line!r}")
    return proc, line.split()[-1]


async def stop(proc: asyncio.subprocess.Process) -> None:
    await stop_process(proc)


def state_bytes(workspace: Path) -> int:
    """Bytes of the session's state files (``.pneuma/``) on disk."""
    state = workspace / ".pneuma"
    return sum(p.stat().st_size for p in state.rglob("*") if p.is_file()) if state.is_dir() else 0


async def soak(tmp: Path, bursts: int, deltas: int, idle: float, pause: float) -> dict:
    workspace = tmp / "ws"
    wrapper = soak_wrapper(tmp / "bin")
    relay, relay_url = await start_relay()
    rss: dict[str, list[int]] = {"pneuma": [], "bare": []}
    took: dict[str, list[float]] = {"pneuma": [], "bare": []}
    try:
        async with pneuma_run(workspace, "claude-code", wrapper) as (proc, url), \
                browser_tab(url) as tab, aiohttp.ClientSession() as http, \
                http.ws_connect(relay_url, max_msg_size=0) as bare_tab:
            await settle_greeting(tab)
            start = {"pneuma": rss_kib(proc.pid), "bare": rss_kib(relay.pid)}
            print(f"RSS before the bursts (socket subscribed): pneuma "
                  f"{start['pneuma'] / 1024:.1f} MiB, bare relay {start['bare'] / 1024:.1f} MiB")
            print(f"{'burst':>5} {'pneuma MiB':>11} {'s':>6} {'bare MiB':>9} {'s':>6}")
            sides = {"pneuma": (tab, proc.pid), "bare": (bare_tab, relay.pid)}
            for b in range(1, bursts + 1):
                # Alternate who goes first: a slow patch of the machine hits both.
                order = ["pneuma", "bare"] if b % 2 else ["bare", "pneuma"]
                for side in order:
                    ws, pid = sides[side]
                    took[side].append(await burst(ws, deltas, b))
                    await asyncio.sleep(SETTLE_S)
                    rss[side].append(rss_kib(pid))
                print(f"{b:5d} {rss['pneuma'][-1] / 1024:11.1f} {took['pneuma'][-1]:6.2f} "
                      f"{rss['bare'][-1] / 1024:9.1f} {took['bare'][-1]:6.2f}", flush=True)
                if pause and b < bursts:
                    await asyncio.sleep(pause)
            # pneuma saves every few seconds: the state after one more save.
            await asyncio.sleep(idle)
            rested = {"pneuma": rss_kib(proc.pid), "bare": rss_kib(relay.pid)}
            peak = {"pneuma": vm_kib(proc.pid, "VmHWM"), "bare": vm_kib(relay.pid, "VmHWM")}
        on_disk = state_bytes(workspace)  # after pneuma's exit: its last save is in
    finally:
        await stop(relay)
    return {"rss": rss, "took": took, "start": start, "rested": rested, "peak": peak,
            "on_disk": on_disk}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bursts", type=int, default=30)
    parser.add_argument("--deltas", type=int, default=20000)
    parser.add_argument("--idle", type=float, default=6.0,
                        help="seconds after the last burst before the last RSS reading "
                             "(pneuma saves its state every 5 s)")
    parser.add_argument("--pause", type=float, default=0.0,
                        help="seconds between bursts (e.g. 5.5: a save after every burst)")
    args = parser.parse_args()
    if args.bursts < 2 or args.deltas < 1:
        parser.error("--bursts must be at least 2 and --deltas at least 1")
    print(machine_note())
    print(f"{args.bursts} bursts of {args.deltas:,} deltas (64 bytes of text each, the whole "
          f"text also in assistant and result.result), one socket reading")
    tmp = temp_dir("pneuma-bench-memsoak-")
    try:
        got = asyncio.run(soak(tmp, args.bursts, args.deltas, args.idle, args.pause))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    rss, took = got["rss"], got["took"]
    # Burst 10 of 30 by default; with fewer bursts, a third of the way in.
    ref = 10 if args.bursts >= 20 else max(1, args.bursts // 3)
    last = args.bursts

    def mib(side: str, burst_number: int) -> float:
        return rss[side][burst_number - 1] / 1024

    rows = [
        row(f"RSS after burst {ref} of {args.deltas:,} deltas", mib("pneuma", ref),
            TARGET_RSS_MIB, "MiB", "lower", mib("bare", ref), "bare aiohttp relay"),
        row(f"RSS growth burst {ref} → {last} (flat)", mib("pneuma", last) - mib("pneuma", ref),
            TARGET_GROWTH_MIB, "MiB", "lower", mib("bare", last) - mib("bare", ref),
            "bare aiohttp relay"),
        row(f"RSS after burst {last}", mib("pneuma", last), None, "MiB", "lower",
            mib("bare", last), "bare aiohttp relay"),
        row(f"RSS {args.idle:g} s after burst {last}", got["rested"]["pneuma"] / 1024, None,
            "MiB", "lower", got["rested"]["bare"] / 1024, "bare aiohttp relay"),
        row("peak RSS (VmHWM) over the soak", got["peak"]["pneuma"] / 1024, None, "MiB", "lower",
            got["peak"]["bare"] / 1024, "bare aiohttp relay"),
        row("burst time (median)", median(took["pneuma"]) * 1000, None, "ms", "lower",
            median(took["bare"]) * 1000, "bare aiohttp relay"),
        row(f"session state on disk after {last} bursts", got["on_disk"] / 2**20, None, "MiB",
            "lower"),
    ]
    return finish(rows, f"RSS before the bursts: pneuma {got['start']['pneuma'] / 1024:.1f} MiB, "
                        f"bare relay {got['start']['bare'] / 1024:.1f} MiB")


if __name__ == "__main__":
    sys.exit(main())
