"""The video mode's after-turn checks (issue 30, video): video.json must
read and name existing scene files; a scene that moves by the wall clock is
a warning naming the file and line; a scene that throws when loaded is an
error with the line in its file, found by loading it in headless Chromium
through the runtime."""

from __future__ import annotations

import json
from pathlib import Path

from pneuma.api import CheckRequest, Problem
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_checks import all_checks
from tests.modes.video_sample import write_sample


def run(workspace: Path, name: str, changed: tuple[str, ...]) -> list[Problem]:
    check = next(c for c in all_checks(get_plugin_manager())["video"] if c.name == name)
    return list(check.run(CheckRequest(workspace=workspace, changed=changed, mode="video")))


def test_a_valid_composition_passes_both_checks(tmp_path: Path) -> None:
    workspace = write_sample(tmp_path / "ws")
    changed = ("scenes/01-slide.html", "scenes/02-count.html", "video.json")
    assert run(workspace, "composition", changed) == []
    assert run(workspace, "scenes-run", changed) == []


def test_a_wrong_field_and_a_missing_scene_file_are_errors(tmp_path: Path) -> None:
    workspace = write_sample(tmp_path / "ws")
    data = json.loads((workspace / "video.json").read_text())
    data["scenes"][1]["duration"] = "two"
    (workspace / "video.json").write_text(json.dumps(data))
    [problem] = run(workspace, "composition", ("video.json",))
    assert (problem.message, problem.file, problem.severity) == (
        'scenes[1].duration must be a number > 0, not "two"', "video.json", "error")
    data["scenes"][1]["duration"] = 1
    data["scenes"][1]["file"] = "scenes/gone.html"
    (workspace / "video.json").write_text(json.dumps(data))
    [problem] = run(workspace, "composition", ("video.json",))
    assert problem.message == "Scene 2 “Count”: its file scenes/gone.html does not exist"
    assert problem.locate == {"scene": "count", "time": 1.0}


def test_wall_clock_motion_is_a_warning_at_its_line_not_in_comments_or_text(tmp_path: Path) -> None:
    workspace = write_sample(tmp_path / "ws")
    (workspace / "scenes" / "02-count.html").write_text(
        "<p>We never use setTimeout here.</p>\n"
        "<script>\n"
        "  // requestAnimationFrame is not used\n"
        "  const label = 'Date.now';\n"
        "  const started = performance.now();\n"
        "  setInterval(() => {}, 100);\n"
        "</script>\n")
    problems = run(workspace, "composition", ("scenes/02-count.html",))
    assert [(p.line, p.severity, p.file) for p in problems] == [
        (5, "warning", "scenes/02-count.html"), (6, "warning", "scenes/02-count.html")]
    assert problems[0].message.startswith("scenes/02-count.html line 5: performance.now moves by the wall clock")
    # the turn did not write that scene: its old warning is not this turn's
    assert run(workspace, "composition", ("scenes/01-slide.html",)) == []


def test_a_scene_that_throws_is_an_error_with_its_line(tmp_path: Path) -> None:
    workspace = write_sample(tmp_path / "ws")
    (workspace / "scenes" / "02-count.html").write_text(
        "<div id=\"n\">0</div>\n"
        "<script>\n"
        "  const n = document.getElementById('n');\n"
        "  n.textContent = missingHelper(1);\n"
        "</script>\n"
        "<script>\n"
        "  pneuma.onFrame((t) => { if (t === 0) null.width = 1; });\n"
        "</script>\n")
    problems = run(workspace, "scenes-run", ("scenes/02-count.html",))
    assert [(p.line, p.file, p.severity) for p in problems] == [
        (4, "scenes/02-count.html", "error"), (7, "scenes/02-count.html", "error")]
    assert "missingHelper is not defined" in problems[0].message
    assert problems[0].message.startswith("scenes/02-count.html line 4: Scene 2 “Count” throws:")
    assert "null" in problems[1].message
    assert problems[0].locate == {"scene": "count", "time": 1.0}
