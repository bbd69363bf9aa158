"""A rewind killed at any step is completed by the next store operation
(issue 27, item 3; docs/checkpoints.md, "How a restore writes"): its
journal, synced before any workspace file changes, is applied again, so the
workspace ends as the rewind wants it, never half way; what the person had
stays in the undo point; and a file someone changed after the crash is
left as they left it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pneuma.checkpoints import Checkpoints, restore
from pneuma.checkpoints.restore_journal import JOURNAL
from tests.checkpoints.test_restore_crash import (
    _RESTORE,
    AGENT,
    a_turn_to_rewind,
    original,
)


def killed_rewind(root: Path, step: str) -> list[str]:
    paths = a_turn_to_rewind(root)
    killed = subprocess.run([sys.executable, "-c", _RESTORE, str(root), step],
                            capture_output=True, text=True, timeout=60)
    assert killed.returncode == -9, killed.stderr
    assert (root / ".pneuma/checkpoints" / JOURNAL).exists()
    return paths


def test_killed_before_its_journal_a_rewind_changed_nothing(tmp_path: Path) -> None:
    paths = a_turn_to_rewind(tmp_path)
    killed = subprocess.run([sys.executable, "-c", _RESTORE, str(tmp_path), "written"],
                            capture_output=True, text=True, timeout=60)
    assert killed.returncode == -9, killed.stderr
    assert not (tmp_path / ".pneuma/checkpoints" / JOURNAL).exists()
    Checkpoints(tmp_path).prune()
    assert all((tmp_path / rel).read_text() == AGENT for rel in paths)


@pytest.mark.parametrize("step", ["journaled", "rename:7", "renamed", "synced"])
def test_the_next_store_operation_completes_a_killed_rewind(tmp_path: Path, step: str) -> None:
    paths = killed_rewind(tmp_path, step)
    store = Checkpoints(tmp_path)
    store.record("the next message")  # any operation that takes the store's lock
    assert {rel: (tmp_path / rel).read_text() for rel in paths} == \
        {rel: original(rel) for rel in paths}
    assert not (tmp_path / ".pneuma/checkpoints" / JOURNAL).exists()
    if step == "journaled":  # nothing was in place: the agent hears of it
        assert "completed" in store.take_agent_note()
    # What the person had before the rewind is kept: the undo brings it back.
    restore(store, "u1", keep_conflicts=True)
    assert all((tmp_path / rel).read_text() == AGENT for rel in paths)


def test_a_file_changed_after_the_crash_is_left_as_it_is(tmp_path: Path) -> None:
    paths = killed_rewind(tmp_path, "journaled")
    (tmp_path / paths[0]).write_text("typed after the crash\n")
    Checkpoints(tmp_path).prune()
    assert (tmp_path / paths[0]).read_text() == "typed after the crash\n"
    assert all((tmp_path / rel).read_text() == original(rel) for rel in paths[1:])
