"""`pneuma` (no arguments) and `pneuma open` as real processes: the ready
line, a taken port, bad options, and a stop signal that stops and saves
every workspace the launcher serves."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from pneuma.launcher.details import served_elsewhere

PNEUMA = str(Path(sys.executable).parent / "pneuma")
READY = re.compile(r"^\[pneuma\] launcher ready http://127\.0\.0\.1:(?P<port>\d+)/\?token=(?P<token>[A-Za-z0-9_\-]+)\n$")


@pytest.fixture
def run_pneuma(tmp_path: Path):
    started: list[subprocess.Popen] = []
    home = tmp_path / "home"
    home.mkdir()

    def start(*args: str) -> subprocess.Popen:
        env = {**os.environ, "HOME": str(home), "PNEUMA_HOME": str(tmp_path / "pneuma-home"),
               "PYTHONUNBUFFERED": "1", "BROWSER": "true"}  # "opening the browser" runs `true`
        proc = subprocess.Popen([PNEUMA, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, stdin=subprocess.DEVNULL)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def _stop(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    return err


def test_pneuma_alone_starts_the_launcher(run_pneuma) -> None:
    proc = run_pneuma()
    line = proc.stdout.readline()
    match = READY.match(line)
    assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
    with urllib.request.urlopen(f"http://127.0.0.1:{match['port']}/api/modes?token={match['token']}",
                                timeout=10) as answer:
        assert {m["name"] for m in json.load(answer)["modes"]} >= {"doc", "slide"}
    assert "stopping" in _stop(proc)


def test_a_taken_port_is_named_before_the_ready_line(run_pneuma) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = run_pneuma("open", "--no-open", "--port", str(port))
        line = proc.stdout.readline()
        match = READY.match(line)
        assert match and int(match["port"]) != port, line
        err = _stop(proc)
    # (A warning about the default backend may come first: this home has no credentials.)
    lines = [line for line in err.splitlines() if "warning:" not in line]
    assert lines[0] == f"[pneuma] port {port} is taken; using {match['port']}"


def test_a_bad_backend_is_one_line_and_no_ready_line(run_pneuma) -> None:
    proc = run_pneuma("open", "--no-open", "--port", "0", "--backend", "nope")
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 2 and out == ""
    assert err.startswith("pneuma: error: no backend named 'nope'") and "Traceback" not in err


def test_help_version_and_subcommands_still_answer(run_pneuma) -> None:
    out, _ = run_pneuma("--help").communicate(timeout=20)
    assert "open" in out and "run" in out
    out, _ = run_pneuma("--version").communicate(timeout=20)
    assert out.startswith("pneuma, version")
    proc = run_pneuma("modes")
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "doc" in out


def test_a_stop_signal_stops_and_saves_every_workspace_it_serves(run_pneuma, tmp_path) -> None:
    proc = run_pneuma("open", "--no-open", "--port", "0", "--backend", "none")
    match = READY.match(proc.stdout.readline())
    assert match
    base, token = f"http://127.0.0.1:{match['port']}", match["token"]
    opened = []
    for name in ("one", "two"):
        request = urllib.request.Request(
            f"{base}/api/workspaces/new", method="POST",
            data=json.dumps({"mode": "doc", "path": str(tmp_path / name)}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            opened.append(json.load(answer))
    assert len(opened) == 2
    for name in ("one", "two"):
        assert served_elsewhere(tmp_path / name) is not None  # held by the launcher process
    err = _stop(proc)
    assert "one: stopped" in err and "two: stopped" in err
    for name, session in zip(("one", "two"), opened):
        saved = json.loads((tmp_path / name / ".pneuma" / "session.json").read_text())
        assert saved["sessionId"] == session["sessionId"]
        assert served_elsewhere(tmp_path / name) is None
