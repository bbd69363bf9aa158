"""Helpers for driving `pneuma run` end to end (used by conftest.py and the tests).

``PneumaRun`` is one `pneuma run` subprocess: its ready line (port,
session id, token), its stderr, the processes it started, a polite stop
(SIGTERM) and a thorough kill (every process group below it).
``BrowserClient`` plays the Pneuma page over ``/ws/browser/<sid>``: the
server coalesces several messages into one frame, one per line, so the
client splits frames and keeps every message in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from pneuma.agents import claude_code
from pneuma.startup.workspace_lock import pid_exists

CLAUDE_BIN = claude_code._bundled_binary()
FAKE_CLI = Path(__file__).resolve().parent.parent / "fakes" / "fake_claude.py"

READY_TIMEOUT = 15.0  # seconds from spawning `pneuma run` to its ready line
TURN = 20.0  # seconds a CLI turn may take at most (they take about one)

READY_LINE = re.compile(
    r"^\[pneuma\] ready http://127\.0\.0\.1:(?P<port>\d+)/\?session=(?P<sid>[^&\s]+)"
    r"&token=(?P<token>[A-Za-z0-9_\-]+)$"
)

# Variables of the outer environment that would steer the CLI (or the
# backend's choice of binary) elsewhere.
FOREIGN_ENV = (
    "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_OAUTH_TOKEN", "IS_SANDBOX", "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT", "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy",
    "ALL_PROXY", "all_proxy", "PNEUMA_CLAUDE_BIN",
)  # fmt: skip


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN_ENV}
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        # The editable mode packages may be half written while others work;
        # these tests need only the slide mode.
        PNEUMA_LOAD_PLUGINS="slide",
        PYTHONUNBUFFERED="1",
    )
    return env



# --- processes ----------------------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name (which may hold spaces and
    parentheses): [state, ppid, pgrp, ...]; None when the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()


def identity(pid: int) -> tuple[int, str] | None:
    """(pid, start time): a pid the kernel may reuse, made unambiguous."""
    fields = _stat_fields(pid)
    return None if fields is None else (pid, fields[19])


def descendants(root: int) -> list[int]:
    """Every living process below ``root`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def argv_of(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def alive(pid: int) -> bool:
    if not pid_exists(pid):
        return False
    # A zombie is dead for our purposes.
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
        return state[state.rindex(")") + 2] != "Z"
    except (OSError, IndexError):
        return False


def pneuma_command() -> list[str]:
    script = Path(sys.executable).with_name("pneuma")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "pneuma.cli"]


@dataclass
class PneumaRun:
    """One `pneuma run` subprocess and what its ready line told."""

    proc: asyncio.subprocess.Process
    stderr_path: Path
    workspace: Path
    ready_line: str = ""
    port: int = 0
    sid: str = ""
    token: str = ""
    stdout_lines: list[str] = field(default_factory=list)
    seen: set[tuple[int, str]] = field(default_factory=set)  # identities of processes below it
    _stdout_task: asyncio.Task[None] | None = None
    _watch_task: asyncio.Task[None] | None = None

    @property
    def seen_pids(self) -> set[int]:
        return {pid for pid, _ in self.seen}

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stderr(self, last: int = 40) -> str:
        try:
            lines = self.stderr_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-last:])

    def note_children(self) -> list[int]:
        """Every process below `pneuma run` now; remembered for cleanup."""
        if self.proc.returncode is not None:
            return []  # its pid may belong to someone else by now
        pids = descendants(self.proc.pid)
        self.seen.update(i for i in map(identity, pids) if i is not None)
        return pids

    async def _watch_children(self) -> None:
        # Noted while `pneuma run` lives, so that a CLI orphaned by a crash
        # is still found and killed by the finalizer.
        while self.proc.returncode is None:
            self.note_children()
            await asyncio.sleep(0.25)

    def cli_argvs(self) -> list[list[str]]:
        """The argv of each Claude Code CLI (real or fake) running under this server."""
        found = []
        for pid in self.note_children():
            argv = argv_of(pid)
            if "--input-format" in argv and "stream-json" in argv:
                found.append(argv)
        return found

    async def wait_ready(self) -> None:
        assert self.proc.stdout is not None
        try:
            raw = await asyncio.wait_for(self.proc.stdout.readline(), READY_TIMEOUT)
        except TimeoutError:
            raise AssertionError(
                f"`pneuma run` printed no ready line within {READY_TIMEOUT:g} s; stderr:\n{self.stderr()}"
            ) from None
        self.ready_line = raw.decode().rstrip("\n")
        self.stdout_lines.append(self.ready_line)
        match = READY_LINE.match(self.ready_line)
        assert match, f"unexpected first line {self.ready_line!r}; stderr:\n{self.stderr()}"
        self.port, self.sid, self.token = int(match["port"]), match["sid"], match["token"]
        self._stdout_task = asyncio.create_task(self._drain_stdout())
        self._watch_task = asyncio.create_task(self._watch_children())

    async def _drain_stdout(self) -> None:
        assert self.proc.stdout is not None
        while True:
            raw = await self.proc.stdout.readline()
            if not raw:
                return
            self.stdout_lines.append(raw.decode(errors="replace").rstrip("\n"))

    async def stop(self, timeout: float = 5.0) -> tuple[int | None, float]:
        """SIGTERM, as a person's Ctrl-C or a service manager would; (exit code, seconds)."""
        self.note_children()
        begun = time.monotonic()
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            code = None
        if self._stdout_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._stdout_task, 1.0)
        return code, time.monotonic() - begun

    async def kill(self) -> None:
        """The finalizer: stop politely, then kill whatever is left of the tree.

        Only processes seen below `pneuma run` are signalled, each checked
        to be the very process seen (pid and start time), with its process
        group when it leads one (the CLI and the shells it started)."""
        with contextlib.suppress(Exception):
            self.note_children()
        if self.proc.returncode is None:
            await self.stop(timeout=5.0)
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        for pid, started in sorted(self.seen):
            if identity(pid) != (pid, started):
                continue
            fields = _stat_fields(pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if fields is not None and int(fields[2]) == pid:
                    os.killpg(pid, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)
        if self.proc.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), 2.0)
        for task in (self._stdout_task, self._watch_task):
            if task is not None:
                task.cancel()


# --- the browser ----------------------------------------------------------------


class BrowserClient:
    """A WebSocket client that behaves as the Pneuma page does."""

    def __init__(self, http: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.http = http
        self.ws = ws
        self.messages: list[dict[str, Any]] = []
        self.frames = 0
        self._changed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for frame in self.ws:
            if frame.type == aiohttp.WSMsgType.TEXT:
                self.frames += 1
                # The server coalesces queued messages into one frame, one per line.
                for line in frame.data.split("\n"):
                    if line.strip():
                        self.messages.append(json.loads(line))
                self._changed.set()
            elif frame.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.ERROR):
                break
        self._changed.set()

    def mark(self) -> int:
        """The index of the next message to arrive (for ``wait_for(since=...)``)."""
        return len(self.messages)

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_str(json.dumps(message))

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], *, since: int = 0, timeout: float = TURN,
        what: str = "a matching message",
    ) -> dict[str, Any]:
        deadline = asyncio.get_running_loop().time() + timeout
        index = since
        while True:
            while index < len(self.messages):
                message = self.messages[index]
                index += 1
                if predicate(message):
                    return message
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0 or self.ws.closed and self._reader.done():
                seen = [m.get("type") for m in self.messages[since:]]
                raise AssertionError(f"no {what} within {timeout:g} s; the client got {seen}")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    async def wait_type(self, kind: str, *, since: int = 0, timeout: float = TURN) -> dict[str, Any]:
        return await self.wait_for(lambda m: m.get("type") == kind, since=since, timeout=timeout,
                                   what=f"'{kind}' message")

    def of(self, kind: str, since: int = 0) -> list[dict[str, Any]]:
        return [m for m in self.messages[since:] if m.get("type") == kind]

    def text_deltas(self, since: int = 0) -> str:
        return "".join(
            m["event"]["delta"].get("text", "")
            for m in self.of("stream_event", since)
            if m["event"].get("type") == "content_block_delta"
            and m["event"]["delta"].get("type") == "text_delta"
        )

    def history(self) -> list[dict[str, Any]]:
        """The conversation of the first message_history this tab got."""
        return self.of("message_history")[0]["messages"]

    def assert_seq_contiguous(self) -> None:
        """Every broadcast after the history arrived once, in order, none missing."""
        history = self.of("message_history")
        assert history, "the tab never got its message_history"
        expected = history[0]["last_seq"] + 1
        start = self.messages.index(history[0])
        seqs = [m["seq"] for m in self.messages[start + 1 :] if "seq" in m]
        assert seqs == list(range(expected, expected + len(seqs))), seqs

    async def wait_turn_done(self, *, since: int, timeout: float = TURN) -> dict[str, Any]:
        """The next result, then the status_change idle that follows it."""
        result = await self.wait_type("result", since=since, timeout=timeout)
        await self.wait_for(
            lambda m: m.get("type") == "status_change" and m.get("status") == "idle" and "seq" in m,
            since=self.messages.index(result), timeout=5, what="status_change idle after the result",
        )
        return result

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), 2.0)
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader


def greeting_done(client: BrowserClient) -> Callable[[dict[str, Any]], bool]:
    """A predicate for the end of the hidden greeting turn, whether it ended
    before the tab subscribed (in the history) or after (live)."""

    def done(message: dict[str, Any]) -> bool:
        if message.get("type") == "result":
            return True
        return message.get("type") == "message_history" and any(
            m.get("type") == "result" for m in message.get("messages", [])
        )

    return done


async def wait_greeting(client: BrowserClient, timeout: float = TURN) -> None:
    await client.wait_for(greeting_done(client), timeout=timeout, what="end of the greeting turn")
