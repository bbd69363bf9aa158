"""What a turn's recordings stored is synced after the turn, off its path
(restore_journal.sync_stored), so that a rewind does not sync it again
while the person waits: its undo point's contents are on disk already."""

from __future__ import annotations

from pathlib import Path

import pytest

from pneuma.checkpoints import Checkpoints, batch_write, restore_journal


def test_a_rewind_syncs_only_what_was_not_synced_after_its_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = batch_write._sync
    monkeypatch.setattr(batch_write, "_sync", lambda fd: (synced.append(fd), real(fd)))
    for i in range(5):
        (tmp_path / f"page{i}.md").write_text(f"page {i}\n")
    store = Checkpoints(tmp_path)
    store.record("first", turn=1)
    (tmp_path / "page0.md").write_text("changed by the turn\n")
    store.turn_ended()
    digests = [e.hash for e in (store.newest_files() or {}).values() if e.hash]
    assert len(digests) == 5  # the five pages as the turn left them

    restore_journal.sync_stored(store)
    assert synced, "the stored contents were not synced after the turn"
    synced.clear()
    restore_journal.sync_blobs(store, digests)
    assert synced == []  # known to be on disk: nothing to wait for

    # A content stored since (a hand edit the rewind's undo point keeps) is synced then.
    (tmp_path / "page1.md").write_text("a hand edit\n")
    fresh = store._scan_stored(store.newest_files())["page1.md"].hash
    assert fresh is not None
    restore_journal.sync_blobs(store, [*digests, fresh])
    assert len(synced) == 2  # its file and its folder
    synced.clear()
    restore_journal.sync_blobs(store, [fresh])
    assert synced == []
