"""Helpers for starting `pneuma run` and looking at it in Chromium (used by
tests/browser/conftest.py and tests/test_new_mode.py).

``browser_problems()`` says what is missing for a browser test (Chromium,
Playwright, the vendored web files); ``read_first_line`` reads the ready
line of a `pneuma run` started with ``stdout=PIPE`` without blocking past
its timeout; ``READY_LINE`` parses it; ``kill_process_group`` stops a
`pneuma run` started with ``start_new_session=True`` and everything it
started.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import subprocess
import time
from pathlib import Path

from pneuma.tools.chromium import CHROMIUM

REPO = Path(__file__).resolve().parents[2]
READY_LINE = re.compile(
    r"^\[pneuma\] ready (?P<base>http://127\.0\.0\.1:\d+)/\?session=(?P<sid>[^&\s]+)"
    r"&token=(?P<token>[A-Za-z0-9_\-]+)$"
)


def browser_problems() -> list[str]:
    """Why a browser test cannot run here (empty when it can)."""
    problems = []
    if not Path(CHROMIUM).exists():
        problems.append(f"{CHROMIUM} is missing (scripts/install installs Debian's chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problems.append("playwright is not installed in this virtualenv (scripts/install)")
    if not (REPO / "pneuma" / "web" / "vendor" / "VERSIONS.json").is_file():
        problems.append("pneuma/web/vendor/ is missing: run scripts/build-web")
    return problems


def read_first_line(process: subprocess.Popen, timeout: float) -> str | None:
    """The first line of the process's stdout, or None when it ends or
    ``timeout`` passes first (a select loop: a plain readline could hang)."""
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    buffer = b""
    deadline = time.monotonic() + timeout
    try:
        while b"\n" not in buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                return None
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                return None
            buffer += chunk
    finally:
        selector.close()
    return buffer.split(b"\n", 1)[0].decode().rstrip("\r")


def kill_process_group(process: subprocess.Popen) -> None:
    """SIGTERM (a polite stop, up to 5 s), then SIGKILL to whatever is left
    in the process's group (the CLI it started, say)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(2)
