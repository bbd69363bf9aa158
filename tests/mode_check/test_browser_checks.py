"""`pneuma mode check`'s browser checks in real Chromium, on a freshly
generated mode (every check passes) and on the same mode with a viewer
action that throws (the `actions` check fails, naming the action)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pneuma.api import check_mode
from pneuma.mode_check.run import CHECKS
from tests.mode_check.generated import break_action, generated_mode, import_past_the_api

REPO = Path(__file__).resolve().parents[2]


def test_a_freshly_generated_mode_passes_every_check(tmp_path: Path) -> None:
    report = check_mode(generated_mode(tmp_path))
    assert [r.check for r in report.results] == list(CHECKS)
    assert report.ok, "\n".join(report.lines())
    # What the checks saw, not only that they ran: the action's answer, the
    # context the message carried, the exported file.
    answer = report.result("actions").details["answers"]["show-file"]
    assert answer["params"] == {"file": "welcome.md"} and answer["answer"]["success"] is True
    assert report.result("selection").details["viewer_context"].startswith(
        '<viewer-context mode="probemode" file="welcome.md">')
    assert "html" in report.result("exports").message


def test_an_action_that_throws_fails_the_actions_check_by_name(tmp_path: Path) -> None:
    project = generated_mode(tmp_path)
    break_action(project, "throw")
    report = check_mode(project, only=["mount", "actions"])
    assert report.result("mount").ok
    assert report.result("actions").message == "show-file: the viewer's runAction threw: planted breakage"


def test_an_action_answering_the_wrong_shape_fails(tmp_path: Path) -> None:
    project = generated_mode(tmp_path)
    break_action(project, "shape")
    report = check_mode(project, only=["actions"])
    assert report.result("actions").message == (
        "show-file: the viewer answered a string, not {success: true|false, message?, data?}")


def test_the_command_prints_a_line_per_check_and_exits_1_on_a_failure(tmp_path: Path) -> None:
    project = generated_mode(tmp_path)
    line = import_past_the_api(project)
    done = subprocess.run([sys.executable, "-m", "pneuma", "mode", "check", str(project),
                           "--only", "manifest,imports"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "✓ manifest: manifest of 'probemode' 0.1.0 validates",
        f"✗ imports: imports past pneuma.api: pneuma_probemode/tools.py:{line}: imports pneuma.core.errors "
        "(use pneuma.api)"]
    refused = subprocess.run([sys.executable, "-m", "pneuma", "mode", "check", "no-such-mode"],
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("pneuma: error: ") and len(refused.stderr.splitlines()) == 1
