"""Stopping `pneuma run` when whoever started it went away: its stdout and
stderr are a pipe nobody reads any more (a closed terminal, a supervisor
that died). SIGTERM and SIGHUP must still stop it at once with status 0,
the agent (the real Claude Code CLI) included, leaving no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.pneuma_run import (
    CLAUDE_BIN,
    READY_LINE,
    alive,
    descendants,
    pneuma_command,
)

STOP_WITHIN = 8.0  # seconds: the server's own shutdown budget is 4.5 s


def _start_orphaned(workspace: Path, env: dict[str, str], backend: str,
                    tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """`pneuma run` whose stdout and stderr share one pipe; once the ready
    line is read (and the agent is up) the reading end is closed."""
    command = [*pneuma_command(), "run", "--mode", "slide", "--workspace", str(workspace),
               "--backend", backend, "--no-open", "--no-prompt", "--port", "0"]
    if backend == "claude-code":
        command += ["--claude-bin", str(CLAUDE_BIN)]
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(command, cwd=str(tmp_path), env=env, stdin=subprocess.DEVNULL,
                            stdout=write_end, stderr=write_end, start_new_session=True)
    os.close(write_end)
    reader = os.fdopen(read_end, "r")
    line = ""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        line = reader.readline()
        if not line or READY_LINE.match(line.rstrip("\n")):
            break
    assert READY_LINE.match(line.rstrip("\n")), line
    children: list[int] = []
    if backend == "claude-code":
        while time.monotonic() < deadline and not children:
            children = descendants(proc.pid)
            time.sleep(0.1)
        assert children, "the agent never started"
    time.sleep(0.5)
    reader.close()  # the terminal went away
    return proc, children


@pytest.mark.parametrize("backend", ["none", "claude-code"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_stops_pneuma_run_whose_terminal_is_gone(tmp_path, cli_env, backend, signum):
    proc, children = _start_orphaned((tmp_path / "ws").resolve(), cli_env, backend, tmp_path)
    try:
        begun = time.monotonic()
        proc.send_signal(signum)
        try:
            code = proc.wait(STOP_WITHIN)
        except subprocess.TimeoutExpired:
            code = None
        assert code == 0, f"exit status {code} after {time.monotonic() - begun:.1f} s"
        leftover = []
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            leftover = [pid for pid in children if alive(pid)]
            if not leftover:
                break
            time.sleep(0.1)
        assert not leftover, f"processes left behind: {leftover}"
    finally:
        for pid in [proc.pid, *children]:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        proc.wait(5)
