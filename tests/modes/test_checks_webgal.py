"""The webgal mode's check after every turn: the script validator on each
scene the turn changed, every finding with its file and line, in English
(the agent reads it in a repair turn); in a served session, the turn's
badge and the repair turn that reaches the agent."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from pneuma.api import CheckRequest, Problem
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_checks import checks_for
from pneuma.server.config import SESSION
from pneuma.testing import make_workspace, serve
from pneuma.turn_checks.feature import FEATURE_NAME


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


async def test_a_served_turn_that_breaks_a_scene_is_badged_and_the_repair_turn_names_the_line(tmp_path: Path) -> None:
    async with serve("webgal", tmp_path / "game") as server:
        server.app[SESSION].hooks.get(FEATURE_NAME).repairs.delay_s = 0.2  # the announced countdown, short
        tab = await server.tab()
        await tab.say("add a line", client_msg_id="c1")
        await server.agent.wait_call("send_user_message", 1)
        scene = tmp_path / "game" / "game" / "scene" / "start.txt"
        scene.write_text(scene.read_text(encoding="utf-8") + "changFigure:mio.png;\n", encoding="utf-8")
        line = len(scene.read_text(encoding="utf-8").splitlines())
        await asyncio.sleep(0.3)  # the watcher's batch
        server.agent.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})

        checked = await tab.wait_for("turn_checked", timeout=20)
        assert checked["status"] == "failed"
        assert [(p["file"], p["line"], p["check"], p["severity"]) for p in checked["problems"]] == [
            ("game/scene/start.txt", line, "script", "error")]
        calls = await server.agent.wait_call("send_user_message", 2, timeout=15)
        assert f"game/scene/start.txt:{line}" in calls[1][1] and "changeFigure" in calls[1][1]
