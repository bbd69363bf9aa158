"""`pneuma run` as a real process for tests that are about the process
(its terminal lines, signals, locks): started with ``--backend none``, and
never left serving when a test fails (import ``no_server_left`` into the
test module; it is an autouse fixture)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PNEUMA = str(Path(sys.executable).parent / "pneuma")
_started: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def no_server_left() -> Iterator[None]:
    """A failing test must not leave a `pneuma run` serving."""
    yield
    while _started:
        proc = _started.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def start_run(workspace: Path, mode: str, *extra: str, plugins: str | None = None,
              root_sandbox: bool = True) -> subprocess.Popen:
    """``pneuma run --mode MODE -w WORKSPACE --backend none --no-open
    --no-prompt EXTRA…`` with text pipes, loading only ``plugins`` (default:
    the mode's). ``root_sandbox=False`` drops ``IS_SANDBOX`` from its environment."""
    env = {**os.environ, "PNEUMA_LOAD_PLUGINS": plugins or mode, "PYTHONUNBUFFERED": "1"}
    if not root_sandbox:
        env.pop("IS_SANDBOX", None)
    proc = subprocess.Popen(
        [PNEUMA, "run", "--mode", mode, "--workspace", str(workspace), "--backend", "none",
         "--no-open", "--no-prompt", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    _started.append(proc)
    return proc
