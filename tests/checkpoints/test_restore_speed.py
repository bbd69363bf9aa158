"""A rewind costs what it restores (issue 27, item 3): one fsync per file
written and one per folder, not two per file; its plan reads no file when
nothing changed since the turn's end; and what the undo point says the
restore left (worked out from what it wrote, not read again) is what a
scan of the workspace finds."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from pneuma.checkpoints import Checkpoints, plan_restore, restore
from pneuma.core.sandbox import Sandbox
from tests.checkpoints.test_store import write

FOLDERS, PER_FOLDER = 3, 20


def turn_rewriting_every_file(root: Path) -> tuple[Checkpoints, dict[str, str]]:
    """A workspace of 60 files in 3 folders, then a turn that rewrites them all."""
    before = {f"part{f}/page{i}.md": f"page {f}.{i}\n" * 40
              for f in range(FOLDERS) for i in range(PER_FOLDER)}
    for rel, text in before.items():
        write(root, rel, text)
    store = Checkpoints(root)
    store.record("rewrite everything")
    for rel in before:
        write(root, rel, "the agent's\n")
    store.turn_ended()
    return store, before


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every os.fsync made (from any thread)."""
    made: list[int] = []
    lock = threading.Lock()
    real = os.fsync

    def counted(fd: int) -> None:
        with lock:
            made.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counted)
    return made


def test_a_rewind_syncs_each_file_once_and_each_folder_once(
        tmp_path: Path, fsyncs: list[int]) -> None:
    store, before = turn_rewriting_every_file(tmp_path)
    fsyncs.clear()
    result = restore(store, "1")
    assert sorted(result.restored) == sorted(before)
    assert all((tmp_path / rel).read_text() == text for rel, text in before.items())
    files = FOLDERS * PER_FOLDER
    # And the store's own files, each with its folder: the undo point
    # twice (before, and what the rewind left), the agent's and the chat's notes.
    assert len(fsyncs) <= files + FOLDERS + 8, len(fsyncs)


def test_planning_a_rewind_reads_no_file_that_did_not_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, _ = turn_rewriting_every_file(tmp_path)
    opened: list[str] = []
    real = Sandbox.open_file

    def counted(self: Sandbox, rel: object) -> tuple[int, os.stat_result]:
        opened.append(str(rel))
        return real(self, rel)

    monkeypatch.setattr(Sandbox, "open_file", counted)
    plan = plan_restore(store, "1")
    assert len(plan.paths("write")) == FOLDERS * PER_FOLDER
    assert opened == []


def test_the_undo_point_knows_what_the_rewind_left(tmp_path: Path) -> None:
    store, before = turn_rewriting_every_file(tmp_path)
    write(tmp_path, "part0/added.md", "added by the agent\n")
    store.turn_ended()
    result = restore(store, "1")
    assert "part0/added.md" in result.restored
    left = store.get(result.undo or "").after
    assert left is not None
    scanned = Checkpoints(tmp_path).current()
    assert {p: (e.hash, e.size, e.mode) for p, e in left.items()} == \
        {p: (e.hash, e.size, e.mode) for p, e in scanned.items()}
    # The undo brings back the agent's files, exactly.
    restore(store, result.undo or "")
    assert all((tmp_path / rel).read_text() == "the agent's\n" for rel in before)
    assert (tmp_path / "part0/added.md").read_text() == "added by the agent\n"
