"""Where a workspace folder cannot be made, the command line says so in one
`pneuma: error:` line, never a traceback, and writes nothing (issue 25,
item 15): a path below a file (`-w afile/sub`), a new folder on a read-only
file system, for `run`, `init`, `skill install` and `new-mode`; and Ctrl-C
in the first half-second of `pneuma run` ends it without a traceback and
without a half-seeded workspace."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pneuma_process import PNEUMA, no_server_left  # noqa: F401 (autouse fixture)

ENV = {**os.environ, "PNEUMA_LOAD_PLUGINS": "doc"}


def _commands(target: Path) -> dict[str, list[str]]:
    where = str(target)
    return {
        "run": ["run", "--mode", "doc", "--backend", "none", "--no-open", "--port", "0",
                "--no-prompt", "-w", where],
        "init": ["init", "--mode", "doc", "--no-prompt", "-w", where],
        "skill install": ["skill", "install", "--mode", "doc", "--no-prompt", "-w", where],
        "new-mode": ["new-mode", "name=zz", "--no-input", "-o", where],
    }


def _assert_one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pneuma: error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("command", ["run", "init", "skill install", "new-mode"])
def test_a_folder_below_a_file_is_one_line(tmp_path, command):
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    args = _commands(afile / "sub")[command]
    result = subprocess.run([PNEUMA, *args], capture_output=True, text=True, timeout=60,
                            env=ENV, stdin=subprocess.DEVNULL, check=False)
    line = _assert_one_error_line(result)
    assert str(afile) in line and "is a file" in line
    assert afile.read_text() == "not a folder\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A read-only file system, mounted in a mount namespace of its own."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to mount a read-only file system")
    folder = tmp_path / "ro"
    folder.mkdir()
    probe = subprocess.run(["unshare", "-m", "sh", "-c",
                            f"mount -t tmpfs -o ro none {folder} && touch {folder}/x"],
                           capture_output=True, text=True, check=False)
    if "Read-only file system" not in probe.stderr:
        pytest.skip(f"cannot mount a read-only file system here: {probe.stderr.strip()}")
    yield folder


@pytest.mark.parametrize("command", ["run", "init", "skill install", "new-mode"])
def test_a_new_folder_on_a_read_only_file_system_is_one_line(read_only, command):
    args = " ".join(f"'{a}'" for a in _commands(read_only / "new")[command])
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c",
         f"mount -t tmpfs -o ro none {read_only} && exec {PNEUMA} {args} </dev/null"],
        capture_output=True, text=True, timeout=60, env=ENV, check=False)
    line = _assert_one_error_line(result)
    assert "Read-only file system" in line and str(read_only / "new") in line


# Modules `pneuma run` imports on its way: the Ctrl-C lands just after one
# of them has loaded (Python's own import-time report says when), from the
# command line still loading to the checks seeding the workspace.
INTERRUPT_AFTER = ["pneuma", "click", "pneuma.cli.checkpoints", "pneuma.host.exporters",
                   "pneuma.startup.backends", "pneuma.startup.launch_stamp",
                   "pneuma.startup.runner", "pneuma.workspace.params", "pneuma.host.registry",
                   "pneuma.workspace.skill"]


@pytest.mark.parametrize("command", ["run", "init", "skill install", "new-mode"])
def test_an_existing_read_only_folder_is_one_line(read_only, command):
    args = " ".join(f"'{a}'" for a in _commands(read_only)[command])
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c",
         f"mount -t tmpfs -o ro none {read_only} && exec {PNEUMA} {args} </dev/null"],
        capture_output=True, text=True, timeout=60, env=ENV, check=False)
    line = _assert_one_error_line(result)
    assert "Read-only file system" in line and str(read_only) in line


def _interrupted_run(workspace: Path, after: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen([PNEUMA, *_commands(workspace)["run"]], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            env={**ENV, "PYTHONPROFILEIMPORTTIME": "1"})
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.rstrip().endswith(f"| {after}") or line.rstrip().endswith(f"|   {after}"):
            break
        if line.split("|")[-1].strip() == after:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    told = [line for line in [*seen, *err.splitlines(keepends=True)]
            if not line.startswith("import time:")]
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "".join(told))


def _doc_seed(tmp_path: Path) -> set[str]:
    seeded = tmp_path / "seeded"
    done = subprocess.run([PNEUMA, *_commands(seeded)["init"]], capture_output=True, text=True,
                          timeout=60, env=ENV, check=False)
    assert done.returncode == 0, done.stderr
    return {p.relative_to(seeded).as_posix() for p in seeded.rglob("*")
            if p.is_file() and ".pneuma" not in p.parts}


@pytest.mark.parametrize("after", INTERRUPT_AFTER)
def test_ctrl_c_while_starting_is_no_traceback_and_no_half_seed(tmp_path, after):
    seed = _doc_seed(tmp_path)
    workspace = tmp_path / "ws"
    result = _interrupted_run(workspace, after)
    assert "Traceback" not in result.stderr, result.stderr
    # 1: click's one "Aborted!" line; 0 and 130: a quiet stop.
    assert result.returncode in (0, 1, 130), (result.returncode, result.stderr)
    seeded = {p.relative_to(workspace).as_posix() for p in workspace.rglob("*")
              if p.is_file() and ".pneuma" not in p.parts} if workspace.exists() else set()
    assert seeded in (set(), seed), seeded
