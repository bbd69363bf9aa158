"""The mode-maker's check after every turn (plugins/mode-maker/pneuma_mode_maker/checks.py):
the quick checks of the package under construction, each failure one problem."""

from __future__ import annotations

from pathlib import Path

from pneuma_mode_maker.checks import CHECKS

from pneuma.api import CheckRequest, generate_mode_package

(CHECK,) = CHECKS


def test_a_missing_chinese_string_and_an_import_past_the_api_come_back_as_problems(tmp_path: Path) -> None:
    generate_mode_package(tmp_path, "notes")
    manifest = tmp_path / "pneuma_notes" / "manifest.json"
    manifest.write_text(manifest.read_text().replace(', "zh-CN": "Notes"', "", 1))
    tools = tmp_path / "pneuma_notes" / "tools.py"
    tools.write_text("from pneuma.host.registry import get_mode\n" + tools.read_text())
    request = CheckRequest(workspace=tmp_path, changed=("pneuma_notes/manifest.json", "pneuma_notes/tools.py"),
                           mode="mode-maker", budget_s=40.0)
    problems = [p.message for p in CHECK.run(request)]
    assert [m.split(":")[0] for m in problems] == ["imports", "locales"], problems
    assert "pneuma.host.registry" in problems[0] and "zh-CN" in problems[1]


def test_a_turn_that_changed_nothing_of_the_package_checks_nothing(tmp_path: Path) -> None:
    request = CheckRequest(workspace=tmp_path, changed=("notes.txt",), mode="mode-maker")
    assert CHECK.run(request) == []
