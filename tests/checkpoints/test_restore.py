"""Restoring to before a turn: files come back, conflicts are reported and
kept, the restore is undoable, and nothing leads outside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pneuma.checkpoints import Checkpoints, StorePolicy, plan_restore, restore
from pneuma.core.errors import ToolError
from tests.checkpoints.test_store import edit, write


def two_turns(root: Path) -> Checkpoints:
    """Turn 1 edits a.md, deletes b.md, adds c/new.md; turn 2 edits a.md again."""
    edit(root, {"a.md": "original a", "b.md": "original b"})
    store = Checkpoints(root)
    store.record("turn one")
    edit(root, {"a.md": "agent a 1", "b.md": None, "c/new.md": "new"})
    store.turn_ended()
    store.record("turn two")
    write(root, "a.md", "agent a 2")
    store.turn_ended()
    return store


def test_restore_brings_files_back(tmp_path: Path) -> None:
    store = two_turns(tmp_path)
    os.chmod(tmp_path / "b.md", 0o600) if (tmp_path / "b.md").exists() else None
    result = restore(store, "1")
    assert (tmp_path / "a.md").read_text() == "original a"
    assert (tmp_path / "a.md").stat().st_mode & 0o777 == store.get("1").files["a.md"].mode
    assert (tmp_path / "b.md").read_text() == "original b"
    assert not (tmp_path / "c").exists()  # the emptied folder went too
    assert sorted(result.restored) == ["a.md", "b.md", "c/new.md"]
    assert result.plan.paths("create") == ["b.md"]
    assert result.plan.paths("delete") == ["c/new.md"]
    assert result.undo == "u1"
    assert "a.md" in result.agent_note()


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    store = two_turns(tmp_path)
    result = restore(store, "1", dry_run=True)
    assert (tmp_path / "a.md").read_text() == "agent a 2"
    assert result.plan.paths("write") == ["a.md"] and result.restored == []
    assert [c.ref for c in store.checkpoints()] == ["1", "2"]


def test_undo_of_a_restore(tmp_path: Path) -> None:
    store = two_turns(tmp_path)
    restore(store, "1")
    restore(store, "u1")
    assert (tmp_path / "a.md").read_text() == "agent a 2"
    assert not (tmp_path / "b.md").exists()
    assert (tmp_path / "c/new.md").read_text() == "new"
    assert [c.ref for c in store.checkpoints()] == ["1", "2", "u1", "u2"]


def test_hand_edit_after_the_turn_is_a_conflict(tmp_path: Path) -> None:
    store = two_turns(tmp_path)
    write(tmp_path, "a.md", "my own edit")
    plan = plan_restore(store, "1")
    assert plan.conflicts == ["a.md"]
    with pytest.raises(ToolError) as refused:
        restore(store, "1")
    assert refused.value.code == "E_CONFLICT"
    assert refused.value.details["conflicts"] == ["a.md"]
    assert (tmp_path / "a.md").read_text() == "my own edit"
    assert not (tmp_path / "b.md").exists()  # nothing at all was written

    kept = restore(store, "1", keep_conflicts=True)
    assert kept.kept_conflicts == ["a.md"]
    assert (tmp_path / "a.md").read_text() == "my own edit"
    assert (tmp_path / "b.md").read_text() == "original b"


def test_hand_edit_between_turns_is_a_conflict(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "original")
    store = Checkpoints(tmp_path)
    store.record("one")
    write(tmp_path, "a.md", "agent")
    store.turn_ended()
    write(tmp_path, "a.md", "by hand")  # before the next turn started
    store.record("two")
    write(tmp_path, "other.md", "agent 2")
    store.turn_ended()
    assert plan_restore(store, "1").conflicts == ["a.md"]
    assert plan_restore(store, "2").conflicts == []


def test_overwrite_named_conflicts(tmp_path: Path) -> None:
    store = two_turns(tmp_path)
    write(tmp_path, "a.md", "my own edit")
    result = restore(store, "1", overwrite_conflicts=["a.md"])
    assert "a.md" in result.restored
    assert (tmp_path / "a.md").read_text() == "original a"
    # ...and the hand edit is in the undo point.
    restore(store, result.undo)
    assert (tmp_path / "a.md").read_text() == "my own edit"
    with pytest.raises(ToolError) as bad:
        restore(store, "1", overwrite_conflicts=["nope.md"])
    assert bad.value.code == "E_BAD_ARGS"


def test_agent_changes_in_later_turns_are_not_conflicts(tmp_path: Path) -> None:
    store = two_turns(tmp_path)  # turn 2's edit of a.md came from the agent
    assert plan_restore(store, "1").conflicts == []


def test_a_symlink_swapped_in_is_replaced_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("outside stays")
    workspace = tmp_path / "w"
    store = two_turns(workspace)
    (workspace / "a.md").unlink()
    os.symlink(outside, workspace / "a.md")
    assert plan_restore(store, "1").conflicts == ["a.md"]  # a change after the turn
    restore(store, "1", overwrite_conflicts=["a.md"])
    assert outside.read_text() == "outside stays"
    assert not (workspace / "a.md").is_symlink()
    assert (workspace / "a.md").read_text() == "original a"


def test_a_folder_symlinked_outside_is_not_written_into(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = tmp_path / "w"
    write(workspace, "sub/x.md", "x")
    store = Checkpoints(workspace)
    store.record("one")
    (workspace / "sub/x.md").unlink()
    (workspace / "sub").rmdir()
    os.symlink(outside, workspace / "sub")
    result = restore(store, "1")
    assert result.failed and result.failed[0]["path"] == "sub/x.md"
    assert list(outside.iterdir()) == []


def test_a_hard_linked_file_is_left_alone(tmp_path: Path) -> None:
    other = tmp_path / "other.md"
    workspace = tmp_path / "w"
    store = two_turns(workspace)
    (workspace / "a.md").unlink()
    write(workspace, "a.md", "linked")
    os.link(workspace / "a.md", other)
    plan = plan_restore(store, "1")
    assert {"path": "a.md", "reason": "hard_link",
            "why": "a hard-linked file is not replaced"} in plan.left_as_is
    restore(store, "1")
    assert other.read_text() == "linked"


def test_a_manifest_naming_a_path_outside_is_refused(tmp_path: Path) -> None:
    import json

    store = two_turns(tmp_path)
    manifest = next((tmp_path / ".pneuma/checkpoints/manifests").glob("*-1.json"))
    data = json.loads(manifest.read_text())
    data["files"]["../escaped.md"] = data["files"]["a.md"]
    manifest.write_text(json.dumps(data))
    store = Checkpoints(tmp_path)  # as a later run finds it (not from memory)
    # Later checkpoints are deltas built on this one, so to them the crafted
    # file was there and went by hand: even told to overwrite it, the
    # restore writes nothing outside.
    result = restore(store, "1", overwrite_conflicts=["../escaped.md"])
    assert [f["path"] for f in result.failed] == ["../escaped.md"]
    assert not (tmp_path.parent / "escaped.md").exists()


def test_too_big_file_is_reported_and_left(tmp_path: Path) -> None:
    write(tmp_path, "big.bin", "x" * 5000)
    store = Checkpoints(tmp_path, policy=StorePolicy(max_file_bytes=1000))
    store.record("one")
    write(tmp_path, "big.bin", "y" * 6000)
    plan = restore(store, "1").plan
    assert plan.left_as_is == [{"path": "big.bin", "reason": "too_big",
                                "why": "too big to keep"}]
    assert (tmp_path / "big.bin").read_text() == "y" * 6000


def test_a_file_watched_only_since_is_not_deleted(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "A")
    write(tmp_path, "data.json", "{}")
    Checkpoints(tmp_path, watch=["**/*.md"]).record("one")
    newer = Checkpoints(tmp_path, watch=["**/*.md", "**/*.json"])
    newer.record("two")
    write(tmp_path, "a.md", "changed")
    result = restore(newer, "1")
    assert result.plan.paths("delete") == []
    assert (tmp_path / "data.json").read_text() == "{}"
    assert (tmp_path / "a.md").read_text() == "A"


def test_turn_end_after_a_restore_keeps_the_undo_point(tmp_path: Path) -> None:
    store = two_turns(tmp_path)
    restore(store, "1")
    assert store.turn_ended() is None
    write(tmp_path, "a.md", "by hand after the restore")
    assert plan_restore(store, "u1").conflicts == ["a.md"]


def test_file_diff_path_escape_is_refused(tmp_path: Path) -> None:
    store = two_turns(tmp_path)
    for path in ("../outside.md", "/etc/passwd", ".pneuma/checkpoints/lock"):
        with pytest.raises(ToolError) as refused:
            store.file_diff(path, "1")
        assert refused.value.code == "E_DENY_PATH"


def test_conversation_is_kept(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path)
    assert store.record("hi", conversation="conv-1").conversation == "conv-1"
    assert store.get("1").conversation == "conv-1"


def test_a_folder_where_a_file_was_and_the_reverse(tmp_path: Path) -> None:
    write(tmp_path, "x.md", "file x")
    write(tmp_path, "y.md/inner.md", "inner")
    store = Checkpoints(tmp_path)
    store.record("one")
    (tmp_path / "x.md").unlink()
    write(tmp_path, "x.md/deep.md", "now a folder")
    (tmp_path / "y.md/inner.md").unlink()
    (tmp_path / "y.md").rmdir()
    write(tmp_path, "y.md", "now a file")
    result = restore(store, "1")
    assert result.failed == []
    assert (tmp_path / "x.md").read_text() == "file x"
    assert (tmp_path / "y.md/inner.md").read_text() == "inner"
