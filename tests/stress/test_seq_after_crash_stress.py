"""Item 4 under stress: a few crash-restart-reconnect cycles of a real
``pneuma run`` on one workspace (tests/server/test_seq_after_crash.py's
``Run`` and tab helpers). Each run is killed with SIGKILL mid-stream; the
next run, talked to until its numbers pass what the old tab saw, gives
that tab everything it missed, never a silent gap. Cycles pile up on one
workspace, so each restart starts after a crash that itself followed a
crash."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.server.test_seq_after_crash import (
    Run,
    missed_after_reconnect,
    talk_until_killed,
)
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

CYCLES = 4
TIME_CAP = 20.0  # seconds; a cycle takes about one


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
                missed, sent, history = await missed_after_reconnect(run, stale_seq)
                sent_total += sent
                reconnects += 1
                gaps += bool(missed)
                assert not missed, f"cycle {cycles}: the reconnecting tab missed {missed}"
                assert history, f"cycle {cycles}: no message_history for a stale last_seq"
            stale_seq, sent = await talk_until_killed(run)
            sent_total += sent
            cycles += 1
            run = Run(workspace)
        missed, sent, history = await missed_after_reconnect(run, stale_seq)
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
