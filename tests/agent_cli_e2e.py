"""What the end-to-end suites that drive a real agent CLI through `pneuma
run` share: tests/e2e (the Claude Code CLI against the fake Anthropic API)
and tests/codex (the Codex CLI against the fake Responses API).

Both give each test a hard time limit (``time_limit_fixture``), start
`pneuma run --mode slide` as a subprocess the way a person does and kill it
(with all it started) when the test ends (``PneumaRuns``), and talk to it as
the Pneuma page does (the ``connect`` fixture, which both conftests
import). Each conftest keeps what is its own (the CLI's environment, its
fake, its limits) and builds its fixtures from these pieces; the process and
browser machinery itself lives in ``tests/e2e/pneuma_run.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.e2e.pneuma_run import BrowserClient, PneumaRun, pneuma_command


@contextlib.contextmanager
def hard_time_limit(seconds: int, error: type[Exception] = TimeoutError) -> Iterator[None]:
    """Raise ``error`` inside whatever the test is waiting on once ``seconds``
    have passed (SIGALRM), so that a hung CLI fails the test instead of the run."""

    def expire(signum: int, frame: Any) -> None:
        raise error(f"the test ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def time_limit_fixture(seconds: int, error: type[Exception] = TimeoutError) -> Any:
    """An autouse ``time_limit`` fixture putting every test of the conftest
    that assigns it under ``hard_time_limit(seconds, error)``."""

    @pytest.fixture(autouse=True)
    def time_limit() -> Iterator[None]:
        with hard_time_limit(seconds, error):
            yield

    return time_limit


class PneumaRuns:
    """The `pneuma run` subprocesses one test starts, for its ``start_…``
    fixture: each runs in ``cwd`` (the test's tmp_path) on ``workspace``
    with its stderr in a file there, and ``kill_all()`` stops every one at
    the end of the test, printing its stderr (pytest shows it only when the
    test failed)."""

    def __init__(self, cwd: Path, workspace: Path) -> None:
        self.cwd = cwd
        self.workspace = workspace
        self.runs: list[PneumaRun] = []

    async def start(self, backend: str, *args: str, env: dict[str, str]) -> PneumaRun:
        """`pneuma run --mode slide --workspace <ws> --backend <backend>
        --no-open --no-prompt --port 0 <args>`, returned once its ready line is read."""
        command = [
            *pneuma_command(), "run", "--mode", "slide", "--workspace", str(self.workspace),
            "--backend", backend, "--no-open", "--no-prompt", "--port", "0", *args,
        ]  # fmt: skip
        stderr_path = self.cwd / f"pneuma-run-{len(self.runs) + 1}.stderr"
        with stderr_path.open("wb") as stderr:
            proc = await asyncio.create_subprocess_exec(
                *command,
                cwd=str(self.cwd),
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
            )
        run = PneumaRun(proc=proc, stderr_path=stderr_path, workspace=self.workspace)
        self.runs.append(run)
        await run.wait_ready()
        return run

    async def kill_all(self) -> None:
        for number, run in enumerate(self.runs, 1):
            await run.kill()
            print(f"--- stderr of `pneuma run` #{number} (exit {run.proc.returncode}) ---\n{run.stderr(80)}")


class BrowserTabs:
    """The Pneuma pages one test opens, for its ``connect`` fixture: ``open``
    connects a BrowserClient to a run's ``/ws/browser/<sid>`` with its token
    and subscribes it; ``close_all()`` closes every tab and the HTTP session."""

    def __init__(self) -> None:
        self.http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15))
        self.clients: list[BrowserClient] = []

    async def open(self, run: PneumaRun, last_seq: int = 0) -> BrowserClient:
        ws = await self.http.ws_connect(
            f"{run.base_url}/ws/browser/{run.sid}",
            headers={"Authorization": f"Bearer {run.token}"},
            heartbeat=None,
            max_msg_size=0,
        )
        client = BrowserClient(self.http, ws)
        self.clients.append(client)
        init = await client.wait_type("session_init", timeout=5)
        assert init["session"]["session_id"] == run.sid
        await client.send({"type": "session_subscribe", "last_seq": last_seq})
        await client.wait_type("message_history", timeout=5)
        return client

    async def close_all(self) -> None:
        for client in self.clients:
            await client.close()
        await self.http.close()


@pytest.fixture
async def connect() -> AsyncIterator[Callable[..., Any]]:
    """``await connect(run, last_seq=0)``: a subscribed BrowserClient (the Pneuma page's protocol)."""
    tabs = BrowserTabs()
    yield tabs.open
    await tabs.close_all()
