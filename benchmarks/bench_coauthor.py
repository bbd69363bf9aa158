"""CoAuthor's billboard: events appended per second, and the time to rebuild
the projections from a log of 100,000 events.

1. Durable single appends: ``Billboard.append_event`` one at a time (each a
   committed, fsynced transaction with the transition check), for a few
   seconds. Baseline, same run: a bare SQLite INSERT + COMMIT per row with
   the same pragmas (WAL, synchronous=FULL), i.e. the cost of the disk.
2. Batched appends: ``append_events`` in batches of 1,000 until the log holds
   100,000 events of realistic task lifecycles (10 events per task).
3. Rebuild: ``Billboard.replay()`` over the 100,000 events (read, parse,
   fold into TaskView/ThreadView/ArtifactIndex), median of 3; and opening a
   Billboard on that log (the same fold: rows were validated when appended,
   so both read them as light RawEvents without pydantic). The live
   billboard stays open meanwhile, as in a session, so the heap is large.

    python benchmarks/bench_coauthor.py [--events 100000] [--seconds 3]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import emit_results, machine_note, row  # noqa: E402

from pneuma_coauthor.billboard import Billboard  # noqa: E402
from pneuma_coauthor.domain import new_event  # noqa: E402

FILES = [{"path": "sections/method.tex", "baseRevision": "sha256:" + "a" * 64, "resultRevision": "sha256:" + "b" * 64}]
DIFF = "--- a/sections/method.tex\n+++ b/sections/method.tex\n@@ -3 +3 @@\n-An old sentence.\n+A new sentence.\n"


def lifecycle(n: int) -> list:
    """The ten events of one task from request to done."""
    t = f"t-{n:06d}"
    p = f"{t}-p1"
    rev = "sha256:" + f"{n:064x}"[-64:]
    return [
        new_event("TaskCreated", t, "user", {"intent": f"tighten paragraph {n}", "artifactRefs": [{"path": "sections/method.tex", "range": {"lineStart": 3, "lineEnd": 9}}]}),
        new_event("TaskRouted", t, "router", {"assignedTo": "coauthor"}),
        new_event("TaskClaimed", t, "coauthor", {"baseRevisions": {"sections/method.tex": rev, "OUTLINE.md": rev}}),
        new_event("TaskStarted", t, "coauthor", {}),
        new_event("LlmCallTraced", t, "coauthor", {"profile": "reasoning", "model": "m", "purpose": "plan", "inputTokens": 3000, "outputTokens": 400, "durationMs": 4000}),
        new_event("AgentPlanPosted", t, "coauthor", {"goal": "shorter", "issues": ["long"], "strategy": ["merge"], "scope": ["sections/method.tex:3-9"]}),
        new_event("PatchProposed", t, "coauthor", {"patchId": p, "files": FILES, "diff": DIFF, "summary": "merge two sentences"}),
        new_event("PatchAccepted", t, "user", {"patchId": p}),
        new_event("PatchApplied", t, "user", {"patchId": p, "revisions": {"sections/method.tex": rev}}),
        new_event("TaskCompleted", t, "user", {"summary": "done"}),
    ]


def bench_single(directory: Path, seconds: float) -> tuple[float, float]:
    board = Billboard.open(directory / "single")
    board.append_event(new_event("TaskCreated", "t-1", "user", {"intent": "bench"}))
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        board.append_event(new_event("UserFeedbackPosted", "t-1", "user", {"text": f"note {count}"}))
        count += 1
    rate = count / (time.perf_counter() - start)
    board.close()
    conn = sqlite3.connect(str(directory / "bare.sqlite3"), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE e (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, payload TEXT)")
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO e (id, payload) VALUES (?, ?)", (f"e{count}", '{"text":"note"}'))
        conn.execute("COMMIT")
        count += 1
    bare = count / (time.perf_counter() - start)
    conn.close()
    return rate, bare


def bench_batch(directory: Path, total: int) -> tuple[float, Billboard]:
    board = Billboard.open(directory / "big")
    start, n, appended = time.perf_counter(), 0, 0
    while appended < total:
        batch = []
        while len(batch) < 1000 and appended + len(batch) < total:
            batch.extend(lifecycle(n))
            n += 1
        board.append_events(batch)
        appended += len(batch)
    return appended / (time.perf_counter() - start), board


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    print(machine_note())
    with tempfile.TemporaryDirectory(prefix="bench-coauthor-") as tmp:
        directory = Path(tmp)
        single, bare = bench_single(directory, args.seconds)
        print(f"durable single appends: {single:,.0f} events/s (bare SQLite commit: {bare:,.0f}/s)")
        batched, board = bench_batch(directory, args.events)
        print(f"batched appends (1,000 per transaction): {batched:,.0f} events/s, log of {board.store.last_seq():,} events")
        rebuilds = []
        for _ in range(3):
            start = time.perf_counter()
            projector = board.replay()
            rebuilds.append(time.perf_counter() - start)
        assert projector.count == board.store.last_seq()
        assert {v.dump()["status"] for v in projector.tasks.values()} == {"done"}
        rebuild = statistics.median(rebuilds)
        print(f"rebuild of {projector.count:,} events: {rebuild:.2f} s median of 3 ({projector.count / rebuild:,.0f} events/s)")
        board.close()
        start = time.perf_counter()
        reopened = Billboard.open(directory / "big")
        reopen = time.perf_counter() - start
        print(f"open a billboard on that log: {reopen:.2f} s")
        reopened.close()
    print(machine_note())
    emit_results([
        row("coauthor durable appends", single, None, "ev/s", "higher", bare, "bare SQLite commit"),
        row("coauthor batched appends", batched, None, "ev/s", "higher"),
        row(f"coauthor rebuild {args.events:,} events", rebuild, 5.0, "s", "lower"),
        row(f"coauthor open {args.events:,}-event log", reopen, None, "s", "lower"),
    ])
    return 0


if __name__ == "__main__":
    sys.exit(main())
