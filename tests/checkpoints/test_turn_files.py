"""A turn's two states read from the checkpoint store (StoreTurnFiles), and
reverting one change of it (revert_change), on real files: before is the
checkpoint, after what the turn left; nothing is read until asked for; a
turn still running is refused; a file a later turn changed is a conflict
as a hand edit is; a file whose content was not kept is never "reverted"
by deleting it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pneuma.checkpoints import Checkpoints, StorePolicy, restore
from pneuma.checkpoints.described_turns import DescribedTurns
from pneuma.checkpoints.revert_change import revert_change
from pneuma.checkpoints.turn_files import StoreTurnFiles, describe_checkpoint
from pneuma.core.errors import ToolError
from pneuma.host.turn_changes import FileChange
from tests.checkpoints.test_store import edit, write


def _turn(store: Checkpoints, root: Path, message: str, changes: dict[str, str | None],
          end: bool = True) -> str:
    ref = store.record(message).ref
    edit(root, changes)
    if end:
        store.turn_ended()
    return ref


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    write(tmp_path, "a.md", "A1")
    write(tmp_path, "b.md", "B1")
    write(tmp_path, "gone.md", "G")
    return tmp_path


def test_before_is_the_checkpoint_and_after_what_the_turn_left(workspace: Path) -> None:
    store = Checkpoints(workspace)
    ref = _turn(store, workspace, "one", {"a.md": "A2", "new.md": "N", "gone.md": None})
    edit(workspace, {"a.md": "A3 by hand"})  # after the turn: not part of it
    files = StoreTurnFiles(store, ref)
    assert list(files.changed) == [FileChange("a.md", "modified"),
                                   FileChange("gone.md", "deleted"),
                                   FileChange("new.md", "added")]
    assert (files.before("a.md"), files.after("a.md")) == (b"A1", b"A2")
    assert (files.before("new.md"), files.after("gone.md")) == (None, None)
    assert files.before("b.md") == files.after("b.md") == b"B1"  # unchanged files read too
    assert list(files.paths_before()) == ["a.md", "b.md", "gone.md"]
    assert list(files.paths_after()) == ["a.md", "b.md", "new.md"]
    turn = describe_checkpoint(store, None, ref)
    assert turn.source == "files"
    assert [c.id for c in turn.changes] == ["file:a.md", "file:gone.md", "file:new.md"]


def test_a_running_turn_is_refused_and_one_whose_end_was_lost_ends_at_the_next(
        workspace: Path) -> None:
    store = Checkpoints(workspace)
    ref = _turn(store, workspace, "one", {"a.md": "A2"}, end=False)
    with pytest.raises(ToolError) as running:
        StoreTurnFiles(store, ref)
    assert running.value.code == "E_CONFLICT"
    assert running.value.details["reason"] == "turn_running"
    _turn(store, workspace, "two", {"b.md": "B2"})
    files = StoreTurnFiles(store, ref)
    assert [c.path for c in files.changed] == ["a.md"] and files.after("a.md") == b"A2"
    for bad, code in (("9", "E_NOT_FOUND"), ("x", "E_BAD_ARGS")):
        with pytest.raises(ToolError) as error:
            StoreTurnFiles(store, bad)
        assert error.value.code == code


def test_nothing_is_read_that_the_describer_does_not_ask_for(workspace: Path) -> None:
    store = Checkpoints(workspace)
    ref = _turn(store, workspace, "one", {"a.md": "A2"})
    shutil.rmtree(store.blobs.directory)  # any content read now fails
    files = StoreTurnFiles(store, ref)
    assert [c.path for c in files.changed] == ["a.md"]
    assert list(files.paths_after()) == ["a.md", "b.md", "gone.md"]
    with pytest.raises(ToolError) as error:
        files.before("a.md")
    assert error.value.code == "E_IO"


def test_a_file_a_later_turn_changed_is_a_conflict_and_the_revert_has_an_undo(
        workspace: Path) -> None:
    store = Checkpoints(workspace)
    turns = DescribedTurns(store, None)
    first = _turn(store, workspace, "one", {"a.md": "A2", "new.md": "N"})
    _turn(store, workspace, "two", {"a.md": "A3"})
    with pytest.raises(ToolError) as error:
        revert_change(store, turns, first, "file:a.md")
    assert error.value.code == "E_CONFLICT"
    assert error.value.details["conflicts"] == [{"path": "a.md",
                                                  "reason": "changed_by_a_later_turn"}]
    assert (workspace / "a.md").read_text() == "A3"

    # Reverting an added file removes it; the undo point brings it back.
    result = revert_change(store, turns, first, "file:new.md")
    assert (result.reverted, result.undo) == (["new.md"], "u1")
    assert not (workspace / "new.md").exists()
    assert "new.md" in store.take_agent_note()
    [notice] = store.take_chat_notices()
    assert notice["reverted_change"]["id"] == "file:new.md" and notice["undo"] == "u1"
    restore(store, "u1")
    assert (workspace / "new.md").read_text() == "N"

    # Overwriting the later turn's edit by name.
    forced = revert_change(store, turns, first, "file:a.md", overwrite=["a.md"])
    assert forced.reverted == ["a.md"] and (workspace / "a.md").read_text() == "A1"
    with pytest.raises(ToolError) as unknown:
        revert_change(store, turns, first, "file:b.md")
    assert unknown.value.code == "E_NOT_FOUND"


def test_a_file_whose_content_was_not_kept_is_never_reverted_by_deleting_it(
        workspace: Path) -> None:
    write(workspace, "big.md", "x" * 200)
    store = Checkpoints(workspace, policy=StorePolicy(max_file_bytes=100))
    ref = _turn(store, workspace, "one", {"big.md": "y" * 50})
    with pytest.raises(ToolError) as error:
        revert_change(store, DescribedTurns(store, None), ref, "file:big.md")
    assert error.value.code == "E_CONFLICT" and error.value.details["reason"] == "not_kept"
    assert (workspace / "big.md").read_text() == "y" * 50
