"""``pneuma run`` as a person starts it: a subprocess, its one ready line,
the page behind it, ports, signals and the saved session."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from tests.stored_conversation import logged

PNEUMA = str(Path(sys.executable).parent / "pneuma")
READY = re.compile(r"^\[pneuma\] ready http://127\.0\.0\.1:(\d+)/\?session=([\w-]+)&token=(\S+)$")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Run:
    def __init__(self, workspace: Path, *extra: str, port: int | None = None):
        self.port_asked = port or free_port()
        env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "slide", "PYTHONUNBUFFERED": "1"}
        env.pop("CLAUDECODE", None)
        self.proc = subprocess.Popen(
            [PNEUMA, "run", "--mode", "slide", "--workspace", str(workspace), "--backend",
             "none", "--no-open", "--no-prompt", "--port", str(self.port_asked), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        line = self.proc.stdout.readline()
        match = READY.match(line.rstrip("\n"))
        if match is None:
            self.proc.kill()
            _, err = self.proc.communicate()
            raise AssertionError(f"no ready line: {line!r}\nstderr: {err}")
        self.line = line
        self.port = int(match.group(1))
        self.session_id = match.group(2)
        self.token = match.group(3)
        self.url = line.split(" ", 2)[2].strip()

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 5.0) -> tuple[int, str, str]:
        started = time.monotonic()
        self.proc.send_signal(signum)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError(
                f"still running {timeout} s after {signum!r}; stderr: {err}") from None
        self.elapsed = time.monotonic() - started
        return self.proc.returncode, out, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture
def runs():
    started: list[Run] = []

    def start(*args, **kwargs) -> Run:
        run = Run(*args, **kwargs)
        started.append(run)
        return run

    yield start
    for run in started:
        run.kill()


async def test_ready_line_page_cookie_and_no_agent_session_init(tmp_path, runs):
    workspace = tmp_path / "deck"
    run = runs(workspace)
    assert run.port == run.port_asked
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(run.url) as response:
            assert response.status == 200
            assert "text/html" in response.headers["Content-Type"]
            cookie = response.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        # The cookie alone now authorises the API and the socket.
        base = f"http://127.0.0.1:{run.port}"
        async with http.get(f"{base}/api/session") as response:
            assert response.status == 200
            info = await response.json()
        assert info["session_id"] == run.session_id
        assert info["backend"] == "none"
        async with http.get(f"{base}/api/session",
                            headers={"Host": "evil.example"}) as response:
            assert response.status == 403
        async with http.ws_connect(f"{base}/ws/browser/{run.session_id}") as ws:
            frame = await ws.receive(timeout=5)
            init = json.loads(frame.data.split("\n")[0])
            assert init["type"] == "session_init"
            reason = init["session"]["no_agent_reason"]
            assert reason and "agent" in reason and "--backend" in reason
            await ws.send_json({"type": "session_subscribe", "last_seq": 0})
            await ws.send_json({"type": "user_message", "content": "remember me"})
            while "remember me" not in (await ws.receive(timeout=5)).data:
                pass
            # Tabs that never read (so never answer the close handshake)
            # must not hold up the shutdown or the final save.
            stuck = [await http.ws_connect(f"{base}/ws/browser/{run.session_id}?last_seq=0")
                     for _ in range(3)]
            code, out, err = run.stop()
            for tab in stuck:
                await tab.close()
            # Whatever was still on its way (the no-agent reply) may come
            # first; then the socket must be closed.
            frame = await ws.receive(timeout=5)
            while frame.type == aiohttp.WSMsgType.TEXT:
                frame = await ws.receive(timeout=5)
            assert frame.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED,
                                  aiohttp.WSMsgType.CLOSING)
    assert code == 0, err
    assert run.elapsed < 5
    ready_lines = [line for line in (run.line + out).splitlines()
                   if line.startswith("[pneuma] ready")]
    assert ready_lines == [run.line.rstrip("\n")]
    assert (run.line + out).strip() == run.line.strip()  # nothing else on stdout
    saved = logged(workspace)
    assert [m.get("content") for m in saved if m["type"] == "user_message"] == ["remember me"]
    assert (workspace / "manifest.json").exists()  # seeded
    assert (workspace / "CLAUDE.md").exists()  # skill installed


def test_a_taken_port_moves_to_the_next_one(tmp_path, runs):
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        taken = blocker.getsockname()[1]
        run = runs(tmp_path / "deck", port=taken)
        assert run.port != taken
        assert taken < run.port <= taken + 50
    assert run.stop()[0] == 0


def test_signals_save_and_exit_0_quickly_and_the_next_run_resumes(tmp_path, runs):
    workspace = tmp_path / "deck"
    first = runs(workspace)
    session_ids = []
    for signum, run in ((signal.SIGTERM, first), (signal.SIGINT, None)):
        if run is None:
            run = runs(workspace)
        session_ids.append(run.session_id)
        code, out, err = run.stop(signum)
        assert code == 0, err
        assert run.elapsed < 5
        assert "Traceback" not in err
        assert logged(workspace) == []
        meta = json.loads((workspace / ".pneuma" / "session.json").read_text())
        assert meta["sessionId"] == run.session_id
    # The second run reported the same session (and got a new token).
    assert session_ids[0] == session_ids[1]


def test_an_unknown_backend_is_exit_2_with_a_message(tmp_path):
    env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "slide"}
    proc = subprocess.run(
        [PNEUMA, "run", "--mode", "slide", "--workspace", str(tmp_path / "deck"),
         "--backend", "bogus", "--no-open", "--no-prompt", "--port", str(free_port())],
        capture_output=True, text=True, env=env, timeout=30,
    )
    assert proc.returncode == 2
    assert "bogus" in proc.stderr and "none" in proc.stderr  # names the real ones
    assert "[pneuma] ready" not in proc.stdout
    assert not (tmp_path / "deck" / ".pneuma").exists()  # nothing was started
