"""Item 4 under stress: a few crash-restart-reconnect cycles of a real
``pneuma run`` on one workspace (tests/server/test_seq_after_crash.py's
``Run`` and tab helpers). Each run is killed with SIGKILL mid-stream; the
next run, talked to until its numbers pass what the old tab saw, gives
that tab everything it missed, never a silent gap. Cycles pile up on one
workspace, so each restart starts after a crash that itself followed a
crash."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import aiohttp
import pytest

from tests.server.test_seq_after_crash import Run, messages, tab, user_message
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

CYCLES = 4
TIME_CAP = 20.0  # seconds; a cycle takes about one
EVENTS_BEFORE_KILL = 40


async def _talk_until_killed(run: Run) -> tuple[int, int]:
    """A tab keeps sending until the run is killed at EVENTS_BEFORE_KILL
    events seen; returns (the newest seq seen, messages sent)."""
    seen = first = 0
    sent = 0
    async with tab(run, 0) as ws:
        async def keep_sending() -> None:
            nonlocal sent
            for i in range(10_000):
                await ws.send_str(user_message(f"before {i}"))
                sent += 1
                await asyncio.sleep(0.005)

        sender = asyncio.create_task(keep_sending())
        try:
            async for message in messages(ws):
                seq = message.get("seq", 0)
                first = first or seq
                seen = max(seen, seq)
                if seen - first >= EVENTS_BEFORE_KILL and run.proc.poll() is None:
                    run.proc.send_signal(signal.SIGKILL)
        except (aiohttp.ClientError, ConnectionError):
            pass
        finally:
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
    run.proc.kill()
    run.proc.wait()
    assert run.proc.returncode == -signal.SIGKILL
    return seen, sent


async def _missed_after_reconnect(run: Run, stale_seq: int) -> tuple[list[str], int, bool]:
    """Talks to ``run`` until its numbers pass ``stale_seq``, then reconnects
    with it; returns (messages the reconnecting tab did not get, messages
    sent, whether it got a full history)."""
    sent: list[str] = []
    async with tab(run, 0) as ws:
        stream = messages(ws)
        newest = 0
        while newest <= stale_seq + 4:
            sent.append(f"after {len(sent)}")
            await ws.send_str(user_message(sent[-1]))
            async for message in stream:
                newest = max(newest, message.get("seq", 0))
                if message.get("type") == "error" and message.get("code") == "no_agent":
                    break
    got = []
    async with tab(run, stale_seq) as ws:
        async for message in messages(ws):
            got.append(message)
            if message["type"] == "status_change" and "seq" not in message:
                break
    shown = [m["content"] for m in got if m["type"] == "user_message"]
    for m in got:
        if m["type"] == "message_history":
            shown += [h["content"] for h in m["messages"] if h.get("type") == "user_message"]
    history = any(m["type"] == "message_history" for m in got)
    return [text for text in sent if text not in shown], len(sent), history


async def test_repeated_kill_9_never_leaves_a_silent_gap(tmp_path: Path) -> None:
    workspace = tmp_path / "deck"
    workspace.mkdir()
    deadline = time.monotonic() + TIME_CAP
    cycles = sent_total = reconnects = gaps = 0
    stale_seq = 0
    run = Run(workspace)
    try:
        while cycles < CYCLES and time.monotonic() < deadline:
            if stale_seq:  # the tab from before the last crash comes back
                missed, sent, history = await _missed_after_reconnect(run, stale_seq)
                sent_total += sent
                reconnects += 1
                gaps += bool(missed)
                assert not missed, f"cycle {cycles}: the reconnecting tab missed {missed}"
                assert history, f"cycle {cycles}: no message_history for a stale last_seq"
            stale_seq, sent = await _talk_until_killed(run)
            sent_total += sent
            cycles += 1
            run = Run(workspace)
        missed, sent, history = await _missed_after_reconnect(run, stale_seq)
        sent_total += sent
        reconnects += 1
        gaps += bool(missed)
        assert not missed and history
    finally:
        run.stop()
        record("4 seq after crash", f"{cycles} kill -9 cycles, {reconnects} reconnects with a "
               f"pre-crash last_seq (last {count(stale_seq)}), {count(sent_total)} messages "
               f"sent, {gaps} silent gaps")
    assert cycles >= 2, "too few cycles ran within the time cap"
