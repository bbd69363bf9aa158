"""kill -9 while the store records, ends turns and prunes: whatever moment
it lands on, the store reads afterwards, every checkpoint's files are
there, and the next recording goes on from it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pneuma.checkpoints import Checkpoints, StorePolicy

# Turns as fast as the store takes them, pruning at a cap of 4 all along.
_TURNS = """
import os, sys
from pathlib import Path
from pneuma.checkpoints import Checkpoints, StorePolicy
root = Path(sys.argv[1])
store = Checkpoints(root, policy=StorePolicy(max_checkpoints=4))
turn = int(sys.argv[2])
print("ready", flush=True)
while True:
    turn += 1
    store.record(f"turn {turn}")
    for k in range(3):
        (root / f"docs/page{(turn * 3 + k) % 150}.md").write_text(f"turn {turn} {k} " * 50)
    store.turn_ended()
"""


def test_kill_9_at_any_moment_leaves_a_store_that_reads(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    for i in range(150):
        (tmp_path / f"docs/page{i}.md").write_text(f"page {i} " * 100)
    first = 0
    for delay in (0.3, 0.6, 0.9):
        child = subprocess.Popen([sys.executable, "-c", _TURNS, str(tmp_path), str(first)],
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        time.sleep(delay)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        store = Checkpoints(tmp_path, policy=StorePolicy(max_checkpoints=4))
        kept = store.checkpoints()
        for checkpoint in kept:
            for path, entry in checkpoint.files.items():
                assert entry.hash is not None
                store.read_blob(entry.hash, path)
            store.changes_of(checkpoint.ref)
        first = max((c.number for c in kept), default=first)
        store.record("after the kill")  # goes on from what is there
        first += 1
    assert len(Checkpoints(tmp_path).checkpoints()) == 4
