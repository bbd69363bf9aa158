"""The change-description contract (``register_change_describers``): a mode's
describer is what the host uses, a mode without one or a describer that
fails is described per file, and nothing a turn changed is left out."""

from __future__ import annotations

import pytest

from pneuma import hookimpl
from pneuma.api import Change, ChangeDescriber, TurnFiles, TurnFilesFromMaps, text_of
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_changes import all_describers, describe_turn, revert_contents
from pneuma.testing import register_plugin

BEFORE = {"notes/a.md": b"# A\nold\n", "notes/b.md": b"# B\n", "order.txt": b"a\nb\n"}
AFTER = {"notes/a.md": b"# A\nnew\n", "notes/c.md": b"# C\n", "order.txt": b"b\na\n"}


def _describe_notes(files: TurnFiles) -> list[Change]:
    changes = []
    for item in files.changed:
        if not item.path.startswith("notes/"):
            continue  # order.txt is left out on purpose: the host must add it
        title = (text_of(files.after(item.path)) or text_of(files.before(item.path)) or "").split("\n")[0]
        kind = {"added": "added", "deleted": "removed", "modified": "changed"}[item.status]
        changes.append(Change(id=f"note:{item.path}", where=title.lstrip("# "), what=kind,
                              kind=kind, files=(item.path,), locate={"file": item.path}))
    return changes


class NotesDescriber:
    @hookimpl
    def register_change_describers(self) -> list[ChangeDescriber]:
        return [ChangeDescriber(mode="notes", describe=_describe_notes)]


def test_a_plugins_describer_describes_its_mode_and_the_host_adds_what_it_left_out() -> None:
    with register_plugin(NotesDescriber(), "notes-describer"):
        describer = all_describers(get_plugin_manager())["notes"]
    turn = describe_turn(describer, TurnFilesFromMaps(BEFORE, AFTER))
    assert turn.source == "mode"
    assert [(c.id, c.where, c.what) for c in turn.changes] == [
        ("note:notes/a.md", "A", "changed"),
        ("note:notes/b.md", "B", "removed"),
        ("note:notes/c.md", "C", "added"),
        ("file:order.txt", "order.txt", {"en": "changed", "zh-CN": "修改"}),
    ]
    assert turn.to_json()["changes"][0]["locate"] == {"file": "notes/a.md"}


def test_a_mode_without_a_describer_and_a_failing_describer_fall_back_to_files() -> None:
    files = TurnFilesFromMaps(BEFORE, AFTER)
    plain = describe_turn(None, files)
    assert plain.source == "files"
    assert [c.id for c in plain.changes] == [
        "file:notes/a.md", "file:notes/b.md", "file:notes/c.md", "file:order.txt"]

    def broken(_files: TurnFiles) -> list[Change]:
        raise RuntimeError("parser exploded")

    failed = describe_turn(ChangeDescriber("notes", broken), files)
    assert failed.source == "files" and "parser exploded" in (failed.warning or "")
    assert [c.id for c in failed.changes] == [c.id for c in plain.changes]


def test_reverting_one_change_puts_its_files_back_or_uses_the_modes_revert() -> None:
    files = TurnFilesFromMaps(BEFORE, AFTER)
    turn = describe_turn(None, files)
    change = next(c for c in turn.changes if c.id == "file:notes/c.md")
    assert revert_contents(turn, files, change, {"notes/c.md": b"# C\n"}) == {"notes/c.md": None}

    def undo_swap(files: TurnFiles, change: Change, current: dict) -> dict:
        return {"order.txt": b"a\nb\n" + b"# kept by the mode\n"}

    def one(files: TurnFiles) -> list[Change]:
        return [Change("order", "order", "moved", "moved", ("order.txt",))]

    moded = describe_turn(ChangeDescriber("notes", one, revert=undo_swap), files)
    order = moded.changes[0]
    assert revert_contents(moded, files, order, {"order.txt": b"b\na\n"}) == {
        "order.txt": b"a\nb\n# kept by the mode\n"}

    def stray(files: TurnFiles, change: Change, current: dict) -> dict:
        return {"notes/a.md": b"x"}

    bad = describe_turn(ChangeDescriber("notes", one, revert=stray), files)
    with pytest.raises(ValueError, match="outside the change"):
        revert_contents(bad, files, bad.changes[0], {})


def test_a_change_id_is_checked() -> None:
    with pytest.raises(ValueError):
        Change("has space", "w", "x", "changed", ("a",))
    with pytest.raises(ValueError):
        Change("ok", "w", "x", "changed", ())
