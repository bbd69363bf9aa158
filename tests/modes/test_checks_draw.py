"""The draw mode's check after every turn: the drawing check the skill
ships (skill/scripts/check_drawing.py) on each changed .excalidraw file;
its errors fail the turn, its warnings are shown, each with the file, the
line and the element."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pneuma.api import CheckRequest, Problem
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_checks import checks_for
from pneuma.testing import make_workspace
from pneuma_draw.checks import CHECK_SCRIPT


def run_check(workspace: Path, changed: list[str]) -> list[Problem]:
    checks = checks_for(get_plugin_manager(), "draw")
    assert [c.name for c in checks] == ["drawing"]
    return list(checks[0].run(CheckRequest(workspace=workspace, changed=tuple(changed), mode="draw")))


def box(element_id: str, **extra: object) -> dict[str, object]:
    return {"id": element_id, "type": "rectangle", "x": 0, "y": 0, "width": 200, "height": 80, **extra}


def test_a_changed_drawing_gets_what_the_skills_check_reports(tmp_path: Path) -> None:
    workspace = make_workspace("draw", tmp_path / "ws")
    drawing = {"type": "excalidraw", "version": 2, "elements": [
        box("card", boundElements=[]),
        {"id": "label", "type": "text", "x": 5, "y": 5, "width": 60, "height": 20, "text": "Card",
         "containerId": "card"},
    ], "appState": {}, "files": {}}
    (workspace / "flow.excalidraw").write_text(json.dumps(drawing, indent=2))
    (workspace / "broken.excalidraw").write_text('{"type": "excalidraw",\n  "elements": [,]\n}')
    problems = run_check(workspace, ["broken.excalidraw", "flow.excalidraw", "notes.md"])

    broken, flow = problems
    assert (broken.file, broken.line, broken.severity) == ("broken.excalidraw", 2, "error")
    assert broken.message == "broken.excalidraw: not valid JSON: line 2 column 16: Expecting value"
    assert (flow.file, flow.severity, flow.locate) == ("flow.excalidraw", "error",
                                                       {"file": "flow.excalidraw", "elementIds": ["label"]})
    assert "container 'card' does not list it" in flow.message
    assert flow.line == (workspace / "flow.excalidraw").read_text().splitlines().index('      "id": "label",') + 1
    # The same verdict as the script the agent runs.
    script = subprocess.run([sys.executable, str(CHECK_SCRIPT), str(workspace / "flow.excalidraw")],
                            capture_output=True, text=True)
    assert script.returncode == 1 and flow.message.split(": ", 1)[1] in script.stdout


def test_the_seed_drawing_passes_and_a_warning_does_not_fail_the_turn(tmp_path: Path) -> None:
    workspace = make_workspace("draw", tmp_path / "ws")
    seeds = sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*.excalidraw"))
    assert seeds and run_check(workspace, seeds) == []
    drawing = {"type": "excalidraw", "version": 2, "elements": [box("a", index="a2"), box("b", index="a1")],
               "appState": {}, "files": {}}
    (workspace / "order.excalidraw").write_text(json.dumps(drawing))
    problems = run_check(workspace, ["order.excalidraw"])
    assert [(p.severity, p.file) for p in problems] == [("warning", "order.excalidraw")]
    assert "'index' keys are not increasing" in problems[0].message
