"""A rewind where a file and a folder swap names (issue 27, item 3): the
temp files are written before the deletions (which wait for the undo
point's contents to be synced), so a file whose folder is, now, a file
the rewind deletes is written once that file is gone."""

from __future__ import annotations

import shutil
from pathlib import Path

from pneuma.checkpoints import Checkpoints, restore
from tests.checkpoints.test_store import write


def test_a_folder_that_became_a_file_comes_back(tmp_path: Path) -> None:
    write(tmp_path, "notes/today.md", "the person's notes\n")
    store = Checkpoints(tmp_path)
    store.record("turn the folder into a file")
    shutil.rmtree(tmp_path / "notes")
    write(tmp_path, "notes", "a file now\n")
    store.turn_ended()
    result = restore(store, "1")
    assert not result.failed
    assert (tmp_path / "notes/today.md").read_text() == "the person's notes\n"
    restore(store, result.undo or "")
    assert (tmp_path / "notes").read_text() == "a file now\n"


def test_a_file_that_became_a_folder_comes_back(tmp_path: Path) -> None:
    write(tmp_path, "notes", "the person's notes\n")
    store = Checkpoints(tmp_path)
    store.record("turn the file into a folder")
    (tmp_path / "notes").unlink()
    write(tmp_path, "notes/today.md", "a folder now\n")
    store.turn_ended()
    result = restore(store, "1")
    assert not result.failed
    assert (tmp_path / "notes").read_text() == "the person's notes\n"
