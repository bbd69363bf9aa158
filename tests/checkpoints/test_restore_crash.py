"""kill -9 in the middle of a rewind (issue 27, item 3): at each step of
the batched write (every temp file written and synced; some renamed; all
renamed), every file holds either what it had or what the rewind brings,
whole; the undo point holds what the person had; and running the rewind
again completes it (docs/checkpoints.md, "Restoring")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pneuma.checkpoints import Checkpoints, restore
from tests.checkpoints.test_store import write

# Restores to before turn 1 and kills itself at the step named in argv[2].
_RESTORE = """
import os, signal, sys
from pathlib import Path
from pneuma.checkpoints import Checkpoints, restore
from pneuma.checkpoints import batch_write
step = sys.argv[2]
def die():
    os.kill(os.getpid(), signal.SIGKILL)
if step.startswith("rename:"):
    left = int(step[len("rename:"):])
    real = batch_write._rename
    def renaming(item):
        global left
        if left == 0:
            die()
        left -= 1
        real(item)
    batch_write._rename = renaming
else:
    batch_write._reached = lambda reached: die() if reached == step else None
restore(Checkpoints(Path(sys.argv[1])), "1")
"""

AGENT = "the agent's version\n"


def original(rel: str) -> str:
    return f"{rel} as the person had it\n" * 30


def a_turn_to_rewind(root: Path) -> list[str]:
    paths = [f"part{f}/page{i}.md" for f in range(3) for i in range(10)]
    for rel in paths:
        write(root, rel, original(rel))
    store = Checkpoints(root)
    store.record("rewrite everything")
    for rel in paths:
        write(root, rel, AGENT)
    store.turn_ended()
    return paths


@pytest.mark.parametrize("step", ["written", "rename:7", "renamed"])
def test_a_rewind_killed_mid_way_loses_nothing_and_a_second_one_completes(
        tmp_path: Path, step: str) -> None:
    paths = a_turn_to_rewind(tmp_path)
    killed = subprocess.run([sys.executable, "-c", _RESTORE, str(tmp_path), step],
                            capture_output=True, text=True, timeout=60)
    assert killed.returncode == -9, killed.stderr

    # Each file whole: the agent's version or the person's, never a mix.
    now = {rel: (tmp_path / rel).read_text() for rel in paths}
    assert all(text in (AGENT, original(rel)) for rel, text in now.items())
    restored = sum(text != AGENT for text in now.values())
    if step == "written":
        assert restored == 0
    elif step == "renamed":
        assert restored == len(paths)
    else:  # renames run side by side: about 7 landed before the kill
        assert restored < len(paths)
    store = Checkpoints(tmp_path)
    assert store.get("u1").kind == "undo"  # recorded before anything was written

    result = restore(store, "1")
    assert all((tmp_path / rel).read_text() == original(rel) for rel in paths)
    assert not result.failed
    # And the person's files as they were before the first rewind are kept.
    restore(store, "u1", keep_conflicts=True)
    assert all((tmp_path / rel).read_text() == AGENT for rel in paths)
