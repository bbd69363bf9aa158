"""A rewind costs what it restores (issue 27, item 3): no workspace file
is synced while the person waits (each file and folder once afterwards,
then the journal goes); its plan reads no file when
nothing changed since the turn's end; and what the undo point says the
restore left (worked out from what it wrote, not read again) is what a
scan of the workspace finds."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import pytest

from pneuma.checkpoints import (
    Checkpoints,
    batch_write,
    plan_restore,
    restore,
    restore_journal,
)
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
def fsyncs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """What every os.fsync made (from any thread) synced in this test's
    folder, by path: another test's work still finishing in this process
    (its contents synced after its turn, its rewind settled) is not this
    rewind's."""
    made: list[str] = []
    lock = threading.Lock()
    real = os.fsync
    mine = str(tmp_path)

    def counted(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        if path == mine or path.startswith(mine + "/"):
            with lock:
                made.append(path)
        real(fd)

    monkeypatch.setattr(os, "fsync", counted)
    return made


def test_a_rewind_syncs_no_workspace_file_while_the_person_waits(
        tmp_path: Path, fsyncs: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    store, before = turn_rewriting_every_file(tmp_path)
    later_work: list[Callable[[], None]] = []

    def held(work: Callable[[], None]) -> Future[None]:
        later_work.append(work)  # run once what the person waited for is counted
        done: Future[None] = Future()
        done.set_result(None)
        return done

    monkeypatch.setattr(batch_write, "submit", held)
    fsyncs.clear()
    result = restore(store, "1")
    assert sorted(result.restored) == sorted(before)
    assert all((tmp_path / rel).read_text() == text for rel, text in before.items())
    state = str(tmp_path / ".pneuma")
    # While the person waits: the undo point, the person's text as stored
    # (each content and its folder, once), the journal, the notes; none of
    # the files written.
    waited = list(fsyncs)
    assert all(path.startswith(state) for path in waited), waited
    files = FOLDERS * PER_FOLDER
    assert len(waited) <= 2 * files + 12, len(waited)
    # Then each file written and each folder once, and the journal goes.
    assert (tmp_path / ".pneuma/checkpoints" / restore_journal.JOURNAL).exists()
    for work in later_work:
        work()
    later = fsyncs[len(waited):]
    assert sorted(p for p in later if not p.startswith(state)) == sorted(
        {str(tmp_path / rel) for rel in before}
        | {str(tmp_path / f"part{f}") for f in range(FOLDERS)} | {str(tmp_path)})
    assert not (tmp_path / ".pneuma/checkpoints" / restore_journal.JOURNAL).exists()


def test_planning_a_rewind_reads_no_file_that_did_not_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, _ = turn_rewriting_every_file(tmp_path)
    opened: list[str] = []
    real = Sandbox.open_file

    def counted(self: Sandbox, rel: object) -> tuple[int, os.stat_result]:
        if self.root == store.sandbox.root:  # not another test's thread
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
