"""The turn checks' contract: a plugin declares checks through
``register_turn_checks`` (or ``ModePlugin(checks=...)``) and the host finds
them by mode."""

from __future__ import annotations

from pathlib import Path

from pneuma import hookimpl
from pneuma.api import CheckRequest, ModePlugin, Problem, TurnCheck
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_checks import all_checks, checks_for
from pneuma.testing import register_plugin


def _empty_notes(request: CheckRequest) -> list[Problem]:
    return [Problem("the note is empty", file=p, line=1)
            for p in request.changed_with_suffix(".md")
            if not (request.workspace / p).read_text(encoding="utf-8").strip()]


EMPTY = TurnCheck(mode="notes", name="empty", label={"en": "Empty notes", "zh-CN": "空笔记"},
                  run=_empty_notes)
CHECKS = [EMPTY]


class NotesChecks:
    @hookimpl
    def register_turn_checks(self) -> list[TurnCheck]:
        return [EMPTY, TurnCheck(mode="notes", name="empty", label="again", run=_empty_notes),
                "not a check"]  # type: ignore[list-item]


def test_a_plugins_checks_are_found_by_mode_and_a_duplicate_name_is_ignored(tmp_path: Path) -> None:
    with register_plugin(NotesChecks(), "notes-checks"):
        pm = get_plugin_manager()
        assert [c.name for c in checks_for(pm, "notes")] == ["empty"]
        assert checks_for(pm, "notes")[0].label == EMPTY.label
        assert "notes" in all_checks(pm)
    (tmp_path / "a.md").write_text("  \n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n", encoding="utf-8")
    request = CheckRequest(workspace=tmp_path, changed=("a.md", "b.md", "c.txt"))
    problems = EMPTY.run(request)
    assert [p.to_json("empty") for p in problems] == [
        {"message": "the note is empty", "file": "a.md", "line": 1, "severity": "error",
         "locate": None, "check": "empty"}]


def test_mode_plugin_declares_checks_by_reference() -> None:
    plugin = ModePlugin(__name__, checks=f"{__name__}:CHECKS")
    assert plugin.register_turn_checks() == [EMPTY]
    assert ModePlugin(__name__).register_turn_checks() == []
