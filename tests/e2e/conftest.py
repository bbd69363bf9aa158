"""Fixtures for driving ``pneuma run`` end to end, as a person's browser would.

``pneuma run`` is started as a subprocess, exactly as a person starts it;
the environment it inherits points the Claude Code CLI it spawns at the
fake Anthropic Messages API of ``tests/fakes/anthropic_api.py``, which runs
in the test's own event loop on 127.0.0.1. A ``BrowserClient`` then plays
the page: it connects to ``/ws/browser/<sid>`` with the token, subscribes,
and keeps every message the server sends (frames hold several messages
separated by newlines; the client splits them).

Nothing here may reach beyond loopback: the root conftest re-executes pytest
inside ``unshare -n`` with only ``lo`` up, and the ``loopback_only_network``
fixture refuses to run a test anywhere else.

Every wait is bounded, every test has a hard time limit (SIGALRM), and each
``pneuma run`` is stopped in a finalizer together with every process it
started (the CLI lives in a process group of its own, so its group is
killed too).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from pneuma.agents import claude_code
from tests.fakes.anthropic_api import FakeAnthropicAPI

CLAUDE_BIN = claude_code._bundled_binary()
FAKE_CLI = Path(__file__).resolve().parent.parent / "fakes" / "fake_claude.py"

TEST_TIME_LIMIT = 30  # seconds a test may take, whatever happens
READY_TIMEOUT = 15.0  # seconds from spawning `pneuma run` to its ready line
TURN = 20.0  # seconds a CLI turn may take at most (they take about one)

READY_LINE = re.compile(
    r"^\[pneuma\] ready http://127\.0\.0\.1:(?P<port>\d+)/\?session=(?P<sid>[^&\s]+)"
    r"&token=(?P<token>[A-Za-z0-9_\-]+)$"
)

# Variables of the outer environment that would steer the CLI (or the
# backend's choice of binary) elsewhere.
_FOREIGN_ENV = (
    "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_OAUTH_TOKEN", "IS_SANDBOX", "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT", "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy",
    "ALL_PROXY", "all_proxy", "PNEUMA_CLAUDE_BIN",
)  # fmt: skip


# --- guards -------------------------------------------------------------------


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    """Refuse to start anything where it could reach beyond this machine.

    Asked through netlink (socket.if_nameindex): /sys/class/net shows the
    namespace that mounted /sys, not ours."""
    interfaces = sorted(name for _, name in socket.if_nameindex())
    if interfaces != ["lo"]:
        pytest.fail(
            "the end-to-end tests must run in a loopback-only network namespace, "
            f"but these interfaces exist: {interfaces}. Run pytest from the repository "
            "root (its conftest re-executes under `unshare -n`), or by hand: "
            "`unshare -n -- sh -c 'ip link set lo up && exec .venv/bin/python -m pytest tests/e2e'`."
        )


class TestTookTooLong(Exception):
    pass


@pytest.fixture(autouse=True)
def time_limit() -> Any:
    """A hard limit per test: SIGALRM raises inside whatever is waiting."""

    def expire(signum: int, frame: Any) -> None:
        raise TestTookTooLong(f"the test ran longer than {TEST_TIME_LIMIT} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(TEST_TIME_LIMIT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- the fake Anthropic API and the environment -----------------------------


@pytest.fixture
async def fake_api() -> AsyncIterator[FakeAnthropicAPI]:
    async with FakeAnthropicAPI() as api:
        yield api


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A throwaway HOME (and CLAUDE_CONFIG_DIR inside it) for the CLI."""
    path = tmp_path / "home"
    (path / ".claude").mkdir(parents=True)
    return path


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _FOREIGN_ENV}
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        # The editable mode packages may be half written while others work;
        # these tests need only the slide mode.
        PNEUMA_LOAD_PLUGINS="slide",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture
def cli_env(fake_api: FakeAnthropicAPI, home: Path) -> dict[str, str]:
    """The environment `pneuma run` inherits (and passes on to the CLI)."""
    env = base_env(home)
    env.update(
        ANTHROPIC_BASE_URL=fake_api.base_url,
        ANTHROPIC_API_KEY="sk-test",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        # As root the CLI refuses bypassPermissions (the slide mode's
        # default) unless told that this machine is a sandbox.
        IS_SANDBOX="1",
    )
    return env


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return (tmp_path / "ws").resolve()


@pytest.fixture
def fake_claude_bin(tmp_path: Path) -> Path:
    """A `claude` that is tests/fakes/fake_claude.py, for --claude-bin."""
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLI}" "$@"\n')
    path.chmod(0o755)
    return path


# --- processes ----------------------------------------------------------------


def _parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may hold spaces and parentheses; fields follow the last ')'.
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def descendants(root: int) -> list[int]:
    """Every living process below ``root`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            parent = _parent_of(int(entry.name))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry.name))
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
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
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
    seen_pids: set[int] = field(default_factory=set)
    _stdout_task: asyncio.Task[None] | None = None

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
        pids = descendants(self.proc.pid)
        self.seen_pids.update(pids)
        return pids

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
        """The finalizer: stop politely, then kill the whole tree."""
        with contextlib.suppress(Exception):
            self.note_children()
        if self.proc.returncode is None:
            await self.stop(timeout=5.0)
        for pid in [self.proc.pid, *sorted(self.seen_pids)]:
            for kill in (os.killpg, os.kill):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    kill(pid, signal.SIGKILL)
        if self.proc.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), 2.0)
        if self._stdout_task is not None:
            self._stdout_task.cancel()


@pytest.fixture
async def start_pneuma(
    tmp_path: Path, workspace: Path, cli_env: dict[str, str]
) -> AsyncIterator[Callable[..., Any]]:
    """``await start_pneuma(*extra_args, env=None, claude_bin=CLAUDE_BIN)``:
    `pneuma run --mode slide --workspace <ws> --backend claude-code --no-open
    --no-prompt --port 0` as a subprocess, returned once its ready line is read."""
    runs: list[PneumaRun] = []

    async def start(
        *extra: str, env: dict[str, str] | None = None, claude_bin: str | Path | None = CLAUDE_BIN
    ) -> PneumaRun:
        command = [
            *pneuma_command(), "run", "--mode", "slide", "--workspace", str(workspace),
            "--backend", "claude-code", "--no-open", "--no-prompt", "--port", "0",
        ]  # fmt: skip
        if claude_bin is not None:
            command += ["--claude-bin", str(claude_bin)]
        command += list(extra)
        stderr_path = tmp_path / f"pneuma-run-{len(runs) + 1}.stderr"
        with stderr_path.open("wb") as stderr:
            proc = await asyncio.create_subprocess_exec(
                *command,
                cwd=str(tmp_path),
                env=env if env is not None else cli_env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
            )
        run = PneumaRun(proc=proc, stderr_path=stderr_path, workspace=workspace)
        runs.append(run)
        await run.wait_ready()
        return run

    yield start
    for number, run in enumerate(runs, 1):
        await run.kill()
        # Shown by pytest only when the test failed.
        print(f"--- stderr of `pneuma run` #{number} (exit {run.proc.returncode}) ---\n{run.stderr(80)}")


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


@pytest.fixture
async def connect() -> AsyncIterator[Callable[..., Any]]:
    """``await connect(run, last_seq=0)``: a subscribed BrowserClient."""
    http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15))
    clients: list[BrowserClient] = []

    async def open_client(run: PneumaRun, last_seq: int = 0) -> BrowserClient:
        ws = await http.ws_connect(
            f"{run.base_url}/ws/browser/{run.sid}",
            headers={"Authorization": f"Bearer {run.token}"},
            heartbeat=None,
            max_msg_size=0,
        )
        client = BrowserClient(http, ws)
        clients.append(client)
        init = await client.wait_type("session_init", timeout=5)
        assert init["session"]["session_id"] == run.sid
        await client.send({"type": "session_subscribe", "last_seq": last_seq})
        await client.wait_type("message_history", timeout=5)
        return client

    yield open_client
    for client in clients:
        await client.close()
    await http.close()


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
