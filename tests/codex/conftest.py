"""Fixtures for driving ``pneuma run --backend codex`` end to end with the
REAL Codex CLI (the pinned @openai/codex that scripts/install puts in
.venv/codex) against the fake Responses API of
``tests/fakes/openai_responses.py``, all on loopback.

The CLI gets a throwaway HOME and CODEX_HOME whose config.toml names one
model provider, the fake, with retries off; update checks and analytics are
switched off by the backend itself. The root conftest already runs pytest
in a loopback-only network namespace; ``loopback_only_network`` refuses to
run anywhere else.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from pneuma.agents.codex.binary import find_codex_binary, pinned_binary
from tests.agent_cli_e2e import PneumaRuns, connect, time_limit_fixture  # noqa: F401  (connect: a fixture)
from tests.codex.codex_helpers import RecordingProxy, codex_config
from tests.e2e.pneuma_run import PneumaRun, base_env
from tests.fakes.openai_responses import FakeResponsesAPI
from tests.loopback import fail_unless_loopback_only

# The pinned version when scripts/install brought it, else whichever is found.
CODEX_BIN = pinned_binary() or find_codex_binary()
TEST_TIME_LIMIT = 60  # seconds a test may take, whatever happens

requires_codex = pytest.mark.skipif(
    CODEX_BIN is None,
    reason="the Codex CLI is not installed: scripts/install (npm @openai/codex@0.169.0)",
)


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    fail_unless_loopback_only("the Codex end-to-end tests", "tests/codex")


# A hard limit per test: SIGALRM raises inside whatever is waiting.
time_limit = time_limit_fixture(TEST_TIME_LIMIT)


@pytest.fixture
async def fake_responses() -> AsyncIterator[FakeResponsesAPI]:
    async with FakeResponsesAPI() as api:
        yield api


@pytest.fixture
async def proxy() -> AsyncIterator[RecordingProxy]:
    recorder = RecordingProxy()
    await recorder.start()
    yield recorder
    await recorder.close()


@pytest.fixture
def codex_env(tmp_path: Path, fake_responses: FakeResponsesAPI,
              proxy: RecordingProxy) -> dict[str, str]:
    """The environment `pneuma run` inherits and passes on to Codex."""
    home = tmp_path / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(codex_config(fake_responses.base_url))
    env = base_env(home)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME", "PNEUMA_CODEX_BIN"):
        env.pop(name, None)
    env.update(CODEX_HOME=str(codex_home), FAKE_OPENAI_API_KEY="sk-fake",
               PNEUMA_CODEX_BIN=str(CODEX_BIN or ""), RUST_LOG="warn")
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy",
                 "all_proxy"):
        env[name] = proxy.url
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return (tmp_path / "ws").resolve()


@pytest.fixture
async def start_codex(tmp_path: Path, workspace: Path,
                      codex_env: dict[str, str]) -> AsyncIterator[Callable[..., Any]]:
    """``await start_codex(*extra_args)``: `pneuma run --mode slide --backend
    codex --no-open --no-prompt --port 0`, returned once its ready line is read."""
    runs = PneumaRuns(tmp_path, workspace)

    async def start(*extra: str) -> PneumaRun:
        return await runs.start("codex", *extra, env=codex_env)

    yield start
    await runs.kill_all()

