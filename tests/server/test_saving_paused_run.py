"""A real `pneuma run` whose disk fills while it works, and one whose log
another process holds (issue 23, item 1).

A full disk used to print a traceback every second (the session state's
save, each message's write) and drop the messages meanwhile; now the
terminal gets one line when saving pauses and one when it resumes, the
page a ``session_update {saving}`` it shows as a banner, and every message
reaches the log once there is room again."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

from tests.server.log_faults import fill, hold_lock, make_log, rows
from tests.server.test_seq_after_crash import messages, read_ready, user_message

PNEUMA = str(Path(sys.executable).parent / "pneuma")
# How long the disk stays full while the person keeps talking: more than
# two of the session's periodic saves (every 5 s), each of which used to
# print a traceback.
FULL_FOR_SECONDS = 11.0


class RunOnSmallDisk:
    """`pneuma run --backend none` with its workspace on a small tmpfs in a
    private mount namespace; the test reaches the tmpfs through
    /proc/<pid>/root."""

    def __init__(self, mountpoint: Path, size: str = "16m", agent: Path | None = None) -> None:
        mountpoint.mkdir(parents=True, exist_ok=True)
        self.mountpoint = mountpoint
        env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "slide", "PYTHONUNBUFFERED": "1"}
        backend = ["--backend", "none"]
        if agent is not None:  # the fake Claude Code CLI (tests/fakes/fake_claude.py)
            home = mountpoint.parent / "home"
            (home / ".claude").mkdir(parents=True, exist_ok=True)
            env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"))
            backend = ["--backend", "claude-code", "--claude-bin", str(agent)]
        shell = ('mount -t tmpfs -o size="$1" tmpfs "$2" && mkdir "$2/deck" && shift 2 '
                 '&& exec "$@"')
        self.proc = subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c", shell, "_", size,
             str(mountpoint), PNEUMA, "run", "--mode", "slide", "--workspace",
             str(mountpoint / "deck"), *backend, "--no-open", "--no-prompt", "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.stderr: list[str] = []
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        self.port, self.session_id, self.token = read_ready(self.proc, lambda: str(self.stderr))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip("\n"))

    def disk(self) -> Path:
        """The tmpfs as the test sees it."""
        return Path(f"/proc/{self.proc.pid}/root") / self.mountpoint.relative_to("/")

    def url(self) -> str:
        return (f"ws://127.0.0.1:{self.port}/ws/browser/{self.session_id}"
                f"?token={self.token}&last_seq=0")

    def stop(self) -> list[str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)
        return self.stderr


async def say_and_wait(ws: aiohttp.ClientWebSocketResponse, stream: Any, text: str,
                       seen: list[dict[str, Any]]) -> None:
    """Send ``text`` and read until the server's answer to it (no agent)."""
    await ws.send_str(user_message(text))
    async for message in stream:
        seen.append(message)
        if message.get("type") == "error" and message.get("code") == "no_agent":
            return


def saving_updates(seen: list[dict[str, Any]]) -> list[Any]:
    return [m["updates"]["saving"] for m in seen
            if m.get("type") == "session_update" and "saving" in m.get("updates", {})]


def assert_said_once(lines: list[str], *notices: str) -> None:
    """The run's terminal said each of ``notices`` once, and no traceback."""
    text = "\n".join(lines)
    assert "Traceback" not in text, text
    for notice in notices:
        assert len([line for line in lines if notice in line]) == 1, text


async def wait_saving_resumed(stream: Any, seen: list[dict[str, Any]]) -> None:
    """Read until the session says saving runs again (its ``saving`` is None)."""
    async for message in stream:
        seen.append(message)
        if saving_updates([message]) == [None]:
            return


async def test_a_disk_filling_while_working_pauses_saving_once_and_loses_nothing(
        tmp_path: Path) -> None:
    run = RunOnSmallDisk(tmp_path / "disk")
    seen: list[dict[str, Any]] = []
    said: list[str] = []
    try:
        async with aiohttp.ClientSession() as http, \
                http.ws_connect(run.url(), max_msg_size=0) as ws:
            stream = messages(ws)
            usual = 0.0  # the slowest answer with room on the disk
            for n in range(3):
                said.append(f"before {n}")
                asked = time.monotonic()
                await say_and_wait(ws, stream, said[-1], seen)
                usual = max(usual, time.monotonic() - asked)
            # A message must not wait on the full disk: 2 s, or more on a
            # machine loaded enough that an answer took long with room too.
            bound = max(2.0, 4 * usual)
            filler = await asyncio.to_thread(fill, run.disk())
            started = time.monotonic()
            n = 0
            # Until the page was told, at most twice as long.
            while (time.monotonic() - started < FULL_FOR_SECONDS
                   or (not saving_updates(seen)
                       and time.monotonic() - started < 2 * FULL_FOR_SECONDS)):
                said.append(f"while full {n}")
                n += 1
                asked = time.monotonic()
                await say_and_wait(ws, stream, said[-1], seen)
                took = time.monotonic() - asked
                assert took < bound, f"a message waited {took:.1f} s on the full disk (usually {usual:.2f} s)"
                await asyncio.sleep(0.25)  # a person typing, not a measured wait
            paused = saving_updates(seen)
            assert paused and paused[-1] is not None
            assert "conversation" in paused[-1]["paused"]
            assert paused[-1]["reason"] == "the disk is full"
            filler.unlink()
            # Resumed within the next periodic save (every 5 s).
            await wait_saving_resumed(stream, seen)
            said.append("after")
            await say_and_wait(ws, stream, said[-1], seen)
        lines = run.stop()
    finally:
        run.stop()
    assert_said_once(lines, "saving paused", "saving resumed")


async def test_the_log_of_a_disk_that_filled_holds_every_message(tmp_path: Path) -> None:
    """The same, read back: the run keeps serving after the disk is freed,
    and a second tab's history (read from the log) has every message."""
    run = RunOnSmallDisk(tmp_path / "disk")
    said: list[str] = []
    seen: list[dict[str, Any]] = []
    try:
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(run.url(), max_msg_size=0) as ws:
                stream = messages(ws)
                said.append("before")
                await say_and_wait(ws, stream, said[-1], seen)
                filler = await asyncio.to_thread(fill, run.disk())
                for n in range(20):
                    said.append(f"while full {n}")
                    await say_and_wait(ws, stream, said[-1], seen)
                filler.unlink()
                await wait_saving_resumed(stream, seen)
                said.append("after")
                await say_and_wait(ws, stream, said[-1], seen)
            # SQLite resolves /proc/<pid>/root (a link to "/"): read a copy.
            copy = tmp_path / "copy"
            copy.mkdir()
            for name in ("conversation.db", "conversation.db-wal"):
                source = run.disk() / "deck" / ".pneuma" / name
                if source.exists():
                    shutil.copyfile(source, copy / name)
            logged = [json.loads(body).get("content")
                      for body in rows(copy / "conversation.db").values()]
    finally:
        run.stop()
    assert [text for text in logged if text is not None] == said


def test_a_run_on_a_locked_log_stops_with_one_line(tmp_path: Path) -> None:
    workspace = tmp_path / "deck"
    state = workspace / ".pneuma"
    make_log(state, 3)
    holder = hold_lock(state / "conversation.db")
    try:
        env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "slide", "PYTHONUNBUFFERED": "1"}
        done = subprocess.run(
            [PNEUMA, "run", "--mode", "slide", "--workspace", str(workspace), "--backend",
             "none", "--no-open", "--no-prompt", "--port", "0"],
            capture_output=True, text=True, env=env, timeout=60, check=False)
    finally:
        holder.communicate("")
    errors = [line for line in done.stderr.splitlines() if line.startswith("pneuma: error")]
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert len(errors) == 1 and "locked by another process" in errors[0]
    assert sorted(rows(state / "conversation.db")) == [1, 2, 3]
    assert not [p for p in state.iterdir() if "corrupt" in p.name]


def fake_agent(directory: Path) -> Path:
    """A `claude` that is tests/fakes/fake_claude.py (it answers "hello")."""
    directory.mkdir(parents=True, exist_ok=True)
    script = Path(__file__).resolve().parent.parent / "fakes" / "fake_claude.py"
    agent = directory / "claude"
    agent.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
    agent.chmod(0o755)
    return agent


async def read_until(stream: Any, seen: list[dict[str, Any]],
                     found: Callable[[dict[str, Any]], bool]) -> None:
    """Read until a message ``found`` accepts has been seen: a turn's
    checkpoint is written while the agent works, so it may come after the
    turn's result (docs/checkpoints.md, "Turns are never held up")."""
    if any(found(m) for m in seen):
        return
    async for message in stream:
        seen.append(message)
        if found(message):
            return


def checkpoints_paused(message: dict[str, Any]) -> bool:
    return any(u and "checkpoints" in u["paused"] for u in saving_updates([message]))


def checkpoints_announced(seen: list[dict[str, Any]]) -> int:
    return len([m for m in seen if m.get("type") == "turn_checkpoint"])


async def turn(ws: aiohttp.ClientWebSocketResponse, stream: Any, text: str,
               seen: list[dict[str, Any]]) -> None:
    """One turn of the agent's: sent, read until its result."""
    await ws.send_str(user_message(text))
    async for message in stream:
        seen.append(message)
        if message.get("type") == "result":
            return


async def test_checkpoints_pause_on_a_full_disk_and_the_next_turn_is_recorded(
        tmp_path: Path) -> None:
    run = RunOnSmallDisk(tmp_path / "disk", agent=fake_agent(tmp_path / "agent"))
    seen: list[dict[str, Any]] = []
    try:
        async with aiohttp.ClientSession() as http, \
                http.ws_connect(run.url(), max_msg_size=0) as ws:
            stream = messages(ws)
            async for message in stream:  # the greeting turn
                seen.append(message)
                if message.get("type") == "result":
                    break
            await turn(ws, stream, "hello before", seen)
            await read_until(stream, seen, lambda m: m.get("type") == "turn_changes")
            recorded = checkpoints_announced(seen)
            assert recorded
            filler = await asyncio.to_thread(fill, run.disk())
            await turn(ws, stream, "hello while full", seen)
            await read_until(stream, seen, checkpoints_paused)
            assert checkpoints_announced(seen) == recorded
            filler.unlink()
            await wait_saving_resumed(stream, seen)
            await turn(ws, stream, "hello after", seen)
            await read_until(stream, seen, lambda m: m.get("type") == "turn_checkpoint"
                             and checkpoints_announced(seen) > recorded)
            assert checkpoints_announced(seen) == recorded + 1
        lines = run.stop()
    finally:
        run.stop()
    assert_said_once(lines, "saving paused")
