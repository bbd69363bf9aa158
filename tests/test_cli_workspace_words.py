"""What the command line says about a workspace, the same way in every
command (issue 25, items 16 and 17): `pneuma init` records the mode (so
`pneuma export` and a later `run` of another mode know it), a mode that does
not exist is "no mode named …", a folder that does not exist is said to not
exist in the same words everywhere, and `init` / `skill install` on another
mode's workspace refuse as `pneuma run` does, with `--switch-mode` as the
way out."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.pneuma_process import PNEUMA


def _pneuma(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "slide,doc"}
    return subprocess.run([PNEUMA, *args], capture_output=True, text=True, timeout=120,
                          check=False, env=env, cwd=cwd, stdin=subprocess.DEVNULL)


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in lines if line.startswith("pneuma: error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_init_records_the_mode_for_export(tmp_path):
    workspace = tmp_path / "deck"
    assert _pneuma("init", "--mode", "doc", "-w", str(workspace), "--no-prompt").returncode == 0
    listed = _pneuma("export", "-w", str(workspace), "--list")
    assert listed.returncode == 0, listed.stderr
    assert "has not been run with a mode" not in listed.stderr
    assert "html" in listed.stdout


def test_an_unknown_mode_is_named_as_missing_not_as_having_no_export(tmp_path):
    result = _pneuma("export", "--mode", "nosuch", "-w", str(tmp_path), "--list")
    assert result.returncode == 2
    line = _one_error_line(result)
    assert "no mode named 'nosuch'" in line and "has no export" not in line


MISSING_COMMANDS = [
    ["export", "--format", "html"],
    ["export", "--mode", "doc", "--format", "html"],
    ["export", "--list"],
    ["checkpoints", "list"],
    ["conversations", "list"],
    ["tool", "--mode", "doc", "--list"],
    ["skill", "install", "--mode", "doc", "--check"],
]


@pytest.mark.parametrize("command", MISSING_COMMANDS, ids=lambda c: " ".join(c))
def test_a_missing_folder_is_said_to_not_exist_in_the_same_words(tmp_path, command):
    missing = tmp_path / "nope"
    result = _pneuma(*command, "-w", str(missing))
    assert result.returncode != 0
    assert _one_error_line(result) == f"pneuma: error: workspace {missing} does not exist"
    assert not missing.exists()


def test_init_of_another_modes_workspace_refuses_as_run_does(tmp_path):
    workspace = tmp_path / "deck"
    assert _pneuma("init", "--mode", "slide", "-w", str(workspace), "--no-prompt").returncode == 0
    before = _tree(workspace)
    result = _pneuma("init", "--mode", "doc", "-w", str(workspace), "--no-prompt")
    assert result.returncode == 2
    line = _one_error_line(result)
    assert "is a slide workspace" in line and "--switch-mode" in line
    assert _tree(workspace) == before
    switched = _pneuma("init", "--mode", "doc", "-w", str(workspace), "--no-prompt",
                       "--switch-mode")
    assert switched.returncode == 0, switched.stderr
    assert "has not been run" not in _pneuma("export", "-w", str(workspace), "--list").stderr
    assert "html" in _pneuma("export", "-w", str(workspace), "--list").stdout


def test_skill_install_of_another_mode_refuses_as_run_does(tmp_path):
    workspace = tmp_path / "deck"
    installed = _pneuma("skill", "install", "--mode", "slide", "-w", str(workspace),
                        "--no-prompt")
    assert installed.returncode == 0, installed.stderr
    before = _tree(workspace)
    result = _pneuma("skill", "install", "--mode", "doc", "-w", str(workspace), "--no-prompt")
    assert result.returncode == 2
    line = _one_error_line(result)
    assert "is a slide workspace" in line and "--switch-mode" in line
    assert _tree(workspace) == before
    switched = _pneuma("skill", "install", "--mode", "doc", "-w", str(workspace), "--no-prompt",
                       "--switch-mode")
    assert switched.returncode == 0, switched.stderr
    assert (workspace / ".claude" / "skills" / "pneuma-doc").is_dir()
    assert not (workspace / ".claude" / "skills" / "pneuma-slide").exists()


@pytest.mark.parametrize("command", MISSING_COMMANDS + [["init", "--mode", "doc"],
                                                        ["run", "--mode", "doc"]],
                         ids=lambda c: " ".join(c))
def test_a_file_given_as_the_workspace_is_said_the_same_way(tmp_path, command):
    afile = tmp_path / "notes.txt"
    afile.write_text("mine\n")
    result = _pneuma(*command, "-w", str(afile))
    assert result.returncode != 0
    assert _one_error_line(result) == f"pneuma: error: the workspace folder {afile} is a file"
    assert afile.read_text() == "mine\n"
