"""The webgal mode's check after every turn: the script validator on each
scene the turn changed, every finding with its file and line, in English
(the agent reads it in a repair turn)."""

from __future__ import annotations

import re
from pathlib import Path

from pneuma.api import CheckRequest, Problem
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_checks import checks_for
from pneuma.testing import make_workspace


def run_check(workspace: Path, changed: list[str]) -> list[Problem]:
    checks = checks_for(get_plugin_manager(), "webgal")
    assert [c.name for c in checks] == ["script"]
    return list(checks[0].run(CheckRequest(workspace=workspace, changed=tuple(changed), mode="webgal")))


def test_a_changed_scene_gets_the_validators_findings_with_file_and_line(tmp_path: Path) -> None:
    game = make_workspace("webgal", tmp_path / "game")
    (game / "game/scene/start.txt").write_text(
        "changeBg:station_dusk.png -next;\n"
        "changeFigure:mio_smile.png;\n"
        "mio:We are late\n"
        "changFigure:mio.png;\n", encoding="utf-8")
    problems = run_check(game, ["game/scene/start.txt", "game/config.txt"])
    found = [(p.file, p.line, p.severity) for p in problems]
    assert found == [("game/scene/start.txt", 2, "error"), ("game/scene/start.txt", 3, "warning"),
                     ("game/scene/start.txt", 4, "error")]
    assert "mio_smile.png" in problems[0].message and "mio.png" in problems[0].message  # the near name
    assert problems[2].message.startswith("game/scene/start.txt, line 4: syntax:")
    assert "changeFigure" in problems[2].message
    assert problems[0].locate == {"file": "game/scene/start.txt", "line": 2}
    assert not any(re.search("[\u4e00-\u9fff]", p.message) for p in problems)  # English, not Chinese


def test_the_seed_game_passes_and_files_that_are_not_scenes_are_not_checked(tmp_path: Path) -> None:
    game = make_workspace("webgal", tmp_path / "game")
    scenes = sorted(p.relative_to(game).as_posix() for p in (game / "game/scene").glob("*.txt"))
    assert [p for p in run_check(game, scenes) if p.severity == "error"] == []
    (game / "notes.txt").write_text("changFigure:nothing\n")
    assert run_check(game, ["notes.txt", "game/scene/gone.txt"]) == []
