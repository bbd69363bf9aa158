"""One `pneuma run` (without an agent) and one page for a whole test module.

The conftest's ``pneuma_server`` and ``open_page`` start a server and a
browser context per test; a module whose tests only look at one viewer can
share both (``module_run``), which keeps the file well under its time budget.
The tests then leave the page as they found it (the same file open, no edit
box left open).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.browser.browser_helpers import (
    READY_LINE,
    api_call,
    kill_process_group,
    read_first_line,
)

READY_TIMEOUT = 20.0
_FOREIGN_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDECODE", "PNEUMA_CLAUDE_BIN", "HTTP_PROXY", "HTTPS_PROXY")


@contextmanager
def module_run(root: Path, mode: str, seed: dict[str, str] | None = None) -> Iterator[SimpleNamespace]:
    """`pneuma run --mode <mode> --backend none` on a workspace under
    ``root`` holding ``seed`` ({path: text}, written before the start)."""
    workspace = root / "ws"
    home = root / "home"
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    workspace.mkdir(parents=True, exist_ok=True)
    for path, text in (seed or {}).items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in _FOREIGN_ENV}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), PYTHONUNBUFFERED="1",
               PNEUMA_LOAD_PLUGINS=mode)  # fmt: skip
    pneuma = Path(sys.executable).with_name("pneuma")
    command = [str(pneuma)] if pneuma.exists() else [sys.executable, "-m", "pneuma.cli"]
    command += ["run", "--mode", mode, "--workspace", str(workspace), "--no-open", "--no-prompt",
                "--port", "0", "--backend", "none"]  # fmt: skip
    stderr_path = root / "pneuma-run.stderr"
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=stderr, start_new_session=True)  # fmt: skip
    try:
        line = read_first_line(process, READY_TIMEOUT)
        match = READY_LINE.match(line or "")
        assert match, f"no ready line ({line!r}): {stderr_path.read_text(errors='replace')[-3000:]}"
        yield SimpleNamespace(url=line.split(" ", 2)[2], base=match["base"], token=match["token"],
                              workspace=workspace.resolve(), process=process)  # fmt: skip
    finally:
        kill_process_group(process)


@contextmanager
def module_page(
    browser: Any, url: str, viewport: dict[str, int] | None = None, before_goto: Any = None
) -> Iterator[Any]:
    """A page on ``url``, connected; ``page.console_errors`` collects errors.
    ``before_goto(page)`` runs first (to route requests, say)."""
    context = browser.new_context(viewport=viewport or {"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.console_errors = []
        page.responses = []  # (method, url) of every request the page finished reading the answer of
        page.on("requestfinished", lambda r: page.responses.append((r.method, r.url)))
        page.on("console", lambda m: page.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: page.console_errors.append(f"pageerror: {e}"))
        if before_goto is not None:
            before_goto(page)
        page.goto(url)
        page.wait_for_selector('.pill[data-state="open"]', timeout=10_000)
        yield page
    finally:
        context.close()


def stored_pins(server: Any, count: int, timeout: float = 10, commented: bool = True,
                placed: bool = True) -> list[dict[str, Any]]:  # fmt: skip
    """The workspace's review pins as the server keeps them, once there are
    ``count`` and each has (``placed``) its place and (``commented``) its
    comment: the page stores a new pin first, then its place and its comment
    as they come."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = api_call(server, "GET", "/api/review/pins")
        pins = body.get("pins", []) if status == 200 and isinstance(body, dict) else []
        if len(pins) == count and all((p.get("place") is not None or not placed) and (p.get("comment") or not commented)
                                       for p in pins):
            return list(pins)
        if time.monotonic() > deadline:
            raise AssertionError(f"the server holds {pins!r}, not {count} pins with comments and places")
        time.sleep(0.05)


def pins_loaded(page: Any, timeout: float = 10) -> None:
    """Wait until the page has the workspace's pins from the server (its
    first GET /api/review/pins), for tests that count what the page shows
    (a pin made before that answer joins the workspace's once it lands:
    tests/browser/test_review_pins.py)."""
    deadline = time.monotonic() + timeout
    while not any(m == "GET" and "/api/review/pins" in u for m, u in page.responses):
        assert time.monotonic() < deadline, "the page never asked for the review pins"
        page.wait_for_timeout(50)
    page.evaluate("() => new Promise((done) => setTimeout(done, 0))")  # its answer handled
