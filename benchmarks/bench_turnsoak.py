"""Memory of a long-lived server: 2,000 short turns, then the same workspace reopened.

One real ``pneuma run --mode slide --backend claude-code`` whose
``--claude-bin`` is ``_turn_cli.py``: one subscribed browser socket sends
``--turns`` user messages one after the other, each answered as Claude
Code answers a small edit (a streamed ``Write`` tool use that writes one
file of the workspace, its tool result, a streamed text reply of a few
hundred bytes, the text again in the ``assistant`` message and in
``result.result``), read to its ``result`` and to the ``turn_changes``
listing that file (the turn's checkpoint recorded), as a person reads a
reply before writing the next message. The server's RSS (``VmRSS``) is
read after the first tenth of the turns and after the last (plus a short
settle and, by default, one of pneuma's periodic saves).

Baseline, same run: a fresh ``pneuma run`` on the same workspace (the same
conversation, its newest part read from the log), a socket subscribed the
same way, its RSS read the same way. Goal: the server that lived through the
turns within 10 MiB of the fresh one (issue 27, item 5); docs/performance.md,
"Memory of a long-lived server", says what grew before and how it was found.

    python benchmarks/bench_turnsoak.py [--turns 2000] [--quick] [--idle 6]
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
    browser_tab,
    finish,
    machine_note,
    make_claude_wrapper,
    median,
    pneuma_run,
    row,
    rss_kib,
    temp_dir,
)

TURN_CLI = HERE / "_turn_cli.py"
TARGET_GAP_MIB = 10.0
RESULT = '"type":"result"'
TURN_CHANGES = '"type":"turn_changes"'
SETTLE_S = 0.3


async def settle(ws: aiohttp.ClientWebSocketResponse, quiet: float = 0.5) -> None:
    """Read until the socket has been quiet for ``quiet`` s."""
    while True:
        try:
            msg = await ws.receive(timeout=quiet)
        except asyncio.TimeoutError:
            return
        if msg.type != aiohttp.WSMsgType.TEXT:
            raise RuntimeError(f"socket closed: {msg!r}")


async def turn(ws: aiohttp.ClientWebSocketResponse, number: int) -> float:
    """One user message and its short reply, read to its ``result`` and
    then to the ``turn_changes`` that lists the file it wrote (its
    checkpoint recorded), as a person reads a reply before the next
    message: a soak of turns faster than their checkpoints would measure
    the backlog of recordings, not what a long-lived server keeps."""
    t0 = time.monotonic()
    await ws.send_str(json.dumps({"type": "user_message",
                                  "content": f"Tighten the notes, turn={number}",
                                  "client_msg_id": f"turn-{number}"}))
    ended = listed = False
    while not (ended and listed):
        msg = await ws.receive(timeout=60)
        if msg.type != aiohttp.WSMsgType.TEXT:
            raise RuntimeError(f"socket closed during turn {number}: {msg!r}")
        ended = ended or RESULT in msg.data
        listed = listed or (ended and TURN_CHANGES in msg.data)
    return time.monotonic() - t0


async def soak(tmp: Path, turns: int, idle: float) -> dict[str, float]:
    workspace = tmp / "ws"
    wrapper = make_claude_wrapper(tmp / "bin", TURN_CLI)
    took: list[float] = []
    early_at = max(1, turns // 10)
    async with pneuma_run(workspace, "claude-code", wrapper) as (proc, url), \
            browser_tab(url) as tab:
        await settle(tab)
        start = rss_kib(proc.pid)
        early = start
        t0 = time.monotonic()
        for number in range(1, turns + 1):
            took.append(await turn(tab, number))
            if number == early_at:
                await asyncio.sleep(SETTLE_S)
                early = rss_kib(proc.pid)
            if number % 500 == 0:
                print(f"  turn {number:5d}: RSS {rss_kib(proc.pid) / 1024:6.1f} MiB, "
                      f"{time.monotonic() - t0:5.1f} s", flush=True)
        await asyncio.sleep(SETTLE_S + idle)
        lived = rss_kib(proc.pid)
    # The fresh server on the same workspace (it holds the newest part of
    # the conversation, read from the log), a tab on it as on the first.
    async with pneuma_run(workspace, "claude-code", wrapper) as (proc, url), \
            browser_tab(url) as fresh_tab:
        await settle(fresh_tab)
        await asyncio.sleep(SETTLE_S + idle)
        fresh = rss_kib(proc.pid)
    return {"start": start / 1024, "early": early / 1024, "lived": lived / 1024,
            "fresh": fresh / 1024, "turn_ms": median(took) * 1000, "early_at": early_at}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="300 turns")
    parser.add_argument("--idle", type=float, default=6.0,
                        help="seconds before each reading (pneuma saves its state every 5 s)")
    args = parser.parse_args()
    turns = 300 if args.quick else args.turns
    if turns < 10:
        parser.error("--turns must be at least 10")
    print(machine_note())
    print(f"{turns:,} short turns through one socket, then the same workspace reopened")
    tmp = temp_dir("pneuma-bench-turnsoak-")
    try:
        got = asyncio.run(soak(tmp, turns, args.idle))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = [
        row(f"RSS after {turns:,} turns vs a fresh server", got["lived"] - got["fresh"],
            TARGET_GAP_MIB, "MiB", "lower", 0.0, f"fresh server {got['fresh']:.1f} MiB"),
        row(f"RSS after {turns:,} turns", got["lived"], None, "MiB", "lower", got["fresh"],
            "fresh server, same workspace"),
        row(f"RSS growth turn {int(got['early_at'])} → {turns:,}", got["lived"] - got["early"],
            None, "MiB", "lower"),
        row("turn time (median)", got["turn_ms"], None, "ms", "lower"),
    ]
    return finish(rows, f"RSS before the turns: {got['start']:.1f} MiB")


if __name__ == "__main__":
    sys.exit(main())
