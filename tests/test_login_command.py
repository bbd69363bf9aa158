"""The login command a fix line names can be typed as it is (issue 25,
item 21): the pinned CLIs live inside .venv, which is not on PATH until
the venv is activated."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pneuma.api import command_to_type

PNEUMA = [sys.executable, "-m", "pneuma"]


def _backends(home: Path, path: str) -> dict[str, dict[str, object]]:
    env = {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8"}
    done = subprocess.run([*PNEUMA, "backends", "--json"], capture_output=True, text=True,
                          env=env, timeout=60, check=True)
    return {row["name"]: row for row in json.loads(done.stdout)["backends"]}


def _login_command(fix: str) -> list[str]:
    found = re.search(r"or run `([^`]+) login`", fix)
    assert found, fix
    return shlex.split(found.group(1))


@pytest.mark.parametrize("backend", ["claude-code", "codex"])
def test_the_login_command_in_the_fix_line_runs_without_the_venv_on_path(
        tmp_path: Path, backend: str) -> None:
    rows = _backends(tmp_path, "/usr/bin:/bin")
    status = rows[backend]
    if status.get("found") is None:
        pytest.skip(f"{backend}'s CLI is not installed here")
    command = _login_command(str(status["fix"]))
    program = command[0]
    assert os.path.isabs(program) or shutil.which(program, path="/usr/bin:/bin"), (
        f"`{program} login` cannot be typed in a shell whose PATH lacks .venv/bin")
    version = subprocess.run([*command, "--version"], capture_output=True, text=True,
                             timeout=30, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert version.returncode == 0, version.stderr


def test_a_cli_on_path_is_named_bare_and_another_by_its_full_path(tmp_path: Path) -> None:
    real = tmp_path / "pkg" / "claude"
    real.parent.mkdir()
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(real)
    assert command_to_type(str(real), "claude", {"PATH": str(bin_dir)}) == "claude"
    other = tmp_path / "other"
    other.mkdir()
    assert command_to_type(str(real), "claude", {"PATH": str(other)}) == str(real)
    spaced = tmp_path / "with space" / "claude"
    spaced.parent.mkdir()
    spaced.write_text("#!/bin/sh\n")
    assert command_to_type(str(spaced), "claude", {"PATH": ""}) == shlex.quote(str(spaced))
