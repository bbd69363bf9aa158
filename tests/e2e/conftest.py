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
killed too). The machinery lives in ``tests/e2e/pneuma_run.py``.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.e2e.pneuma_run import CLAUDE_BIN, FAKE_CLI, BrowserClient, PneumaRun, base_env, pneuma_command
from tests.fakes.anthropic_api import FakeAnthropicAPI
from tests.loopback import fail_unless_loopback_only

TEST_TIME_LIMIT = 30  # seconds a test may take, whatever happens


# --- guards -------------------------------------------------------------------


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    """Refuse to start anything where it could reach beyond this machine."""
    fail_unless_loopback_only("the end-to-end tests", "tests/e2e")


class TimeLimitExceeded(Exception):
    pass


@pytest.fixture(autouse=True)
def time_limit() -> Any:
    """A hard limit per test: SIGALRM raises inside whatever is waiting."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeLimitExceeded(f"the test ran longer than {TEST_TIME_LIMIT} s")

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
