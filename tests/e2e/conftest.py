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
killed too). The machinery lives in ``tests/e2e/pneuma_run.py`` and, shared
with tests/codex, ``tests/agent_cli_e2e.py``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.agent_cli_e2e import PneumaRuns, connect, time_limit_fixture  # noqa: F401  (connect: a fixture)
from tests.e2e.pneuma_run import CLAUDE_BIN, FAKE_CLI, PneumaRun, base_env
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


# A hard limit per test: SIGALRM raises inside whatever is waiting.
time_limit = time_limit_fixture(TEST_TIME_LIMIT, TimeLimitExceeded)


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
    runs = PneumaRuns(tmp_path, workspace)

    async def start(
        *extra: str, env: dict[str, str] | None = None, claude_bin: str | Path | None = CLAUDE_BIN
    ) -> PneumaRun:
        bin_args = ["--claude-bin", str(claude_bin)] if claude_bin is not None else []
        return await runs.start("claude-code", *bin_args, *extra, env=env if env is not None else cli_env)

    yield start
    await runs.kill_all()

