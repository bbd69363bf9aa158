"""After a rewind, the files it wrote are read once more when their stat can
be trusted (pneuma.checkpoints.settle), so that the next rewind's plan and
undo point read none of them; a file changed meanwhile is never taken for
what the rewind wrote."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pneuma.checkpoints import Checkpoints, plan_restore, restore, restore_journal
from pneuma.checkpoints.settle import settle_written
from pneuma.core.sandbox import Sandbox

FILES = [f"pages/p{i}.md" for i in range(6)]


def _turns(workspace: Path) -> tuple[Checkpoints, str]:
    for path in FILES:
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(f"# {path}\nfirst\n")
    old = time.time() - 10  # written long ago: trusted by their stat
    for path in FILES:
        os.utime(workspace / path, (old, old))
    store = Checkpoints(workspace)
    first = store.record("rewrite every page", turn=1)
    for path in FILES:
        (workspace / path).write_text(f"# {path}\nsecond, by the agent\n")
    store.turn_ended()
    return store, first.ref


def _reads(monkeypatch: pytest.MonkeyPatch, workspace: Path) -> list[str]:
    """Every file of ``workspace`` a walk opens to read it (another test's
    thread still at work in this process opens its own)."""
    opened: list[str] = []
    real = Sandbox.open_file
    root = workspace.resolve()

    def counting(self: Sandbox, rel: object, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if self.root == root:
            opened.append(str(rel))
        return real(self, rel, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Sandbox, "open_file", counting)
    return opened


def _settled(store: Checkpoints, undo: str) -> bool:
    newest = store.newest_files() or {}
    return all(newest[path].mtime_ns for path in FILES)


def test_a_second_rewind_reads_none_of_the_files_the_first_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, first = _turns(tmp_path)
    result = restore(store, first)
    assert sorted(result.restored) == FILES
    restore_journal.wait_until_durable()
    deadline = time.monotonic() + 10
    while not _settled(store, result.undo or "") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _settled(store, result.undo or ""), "the rewind's files were never settled"
    opened = _reads(monkeypatch, tmp_path)
    plan = plan_restore(store, result.undo or "")
    assert sorted(plan.paths("write")) == FILES
    assert opened == []  # the plan trusted every stat: nothing read again
    assert all((tmp_path / p).read_text().endswith("first\n") for p in FILES)


def test_a_file_changed_before_it_is_settled_is_not_taken_for_the_rewinds(
        tmp_path: Path) -> None:
    store, first = _turns(tmp_path)
    # Settling is driven by hand here: stop the rewind's own.
    result = restore(store, first)
    restore_journal.wait_until_durable()
    changed = tmp_path / FILES[0]
    # The same size, and (on a file system with coarse timestamps) perhaps
    # the same mtime: only the content tells.
    text = changed.read_text()
    changed.write_text(text.replace("first", "FIRST"))
    settle_written(store, result.undo or "", FILES)
    newest = store.newest_files() or {}
    assert newest[FILES[0]].mtime_ns == 0 or newest[FILES[0]].hash != \
        (store.get(first).files[FILES[0]].hash)
    # The hand edit is seen as one: a rewind forward would ask first.
    plan = plan_restore(store, result.undo or "")
    assert FILES[0] in plan.conflicts


def test_settling_leaves_an_undo_point_that_is_no_longer_the_newest(tmp_path: Path) -> None:
    store, first = _turns(tmp_path)
    result = restore(store, first)
    restore_journal.wait_until_durable()
    store.record("the next message", turn=2)
    assert settle_written(store, result.undo or "", FILES) == 0
