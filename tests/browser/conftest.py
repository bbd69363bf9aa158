"""Fixtures for driving Pneuma's page in a real browser.

* ``browser`` (session): Debian's Chromium through Playwright, headless.
  Never ``playwright install``: the browser is /usr/bin/chromium.
* ``pneuma_server(mode, backend="claude-code"|"none", claude_bin=None,
  args=(), workspace=None)``: starts ``pneuma run --mode M --workspace <tmp>
  --no-open --no-prompt --port 0`` as a subprocess and returns a
  ``PneumaServer`` (a dict with attribute access): ``url`` (the page URL with
  ``?session=&token=``), ``base``, ``token``, ``session_id``, ``workspace``,
  ``process``. Everything it started is killed when the test ends.
* ``fake_claude``: a ``claude`` for ``--claude-bin`` that is
  tests/fakes/fake_claude.py (behaviour picked by words in the prompt:
  hello, permission, slow, tool, ...), logging every stdin message to
  ``fake_claude.log``; ``fake_claude.stdin()`` reads the log back.
* ``open_page(server)``: a fresh browser context and page on the server's
  URL, waiting until the shell is connected. ``page.console_errors`` lists
  console errors and uncaught exceptions. A WebGAL engine in it draws at
  most ten frames a second (tests/browser/webgal_engine.py).
* ``shot(page, name)``: saves a screenshot under ``$PNEUMA_SCREENSHOTS``
  (default ``<tmp>/pneuma-screenshots``) and returns its path; look at them.

Everything runs inside the loopback-only network namespace set up by the
repository's root conftest.py. Reading the ready line, stopping `pneuma run`
and the check for Chromium live in browser_helpers.py, which
tests/test_new_mode.py shares.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pneuma.tools.chromium import CHROMIUM_ARGS
from tests.browser.browser_helpers import (
    CHROMIUM,
    READY_LINE,
    REPO,
    kill_process_group,
    read_first_line,
    skip_without_a_browser,
)
from tests.browser.webgal_engine import cap_engine_frame_rate

FAKE_CLI = REPO / "tests" / "fakes" / "fake_claude.py"
READY_TIMEOUT = 20.0
SCREENSHOTS = Path(os.environ.get("PNEUMA_SCREENSHOTS", Path(tempfile.gettempdir()) / "pneuma-screenshots"))

_FOREIGN_ENV = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
    "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "PNEUMA_CLAUDE_BIN",
    "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy",
)  # fmt: skip


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_without_a_browser(items, Path(__file__).parent)


class Record(dict):
    """A dict whose keys are also attributes."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


# --- the browser ----------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # Module scope, not session: Playwright's sync API keeps an asyncio loop
    # running on the main thread while it is open, which would break every
    # async test collected after the browser tests.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def shot() -> Callable[[Any, str], Path]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str, **kwargs: Any) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), **kwargs)
        return path

    return take


# --- the fake CLI ---------------------------------------------------------------


class FakeClaude:
    """A `claude` wrapper around tests/fakes/fake_claude.py with its log."""

    def __init__(self, directory: Path):
        directory.mkdir(parents=True, exist_ok=True)
        self.log = directory / "fake_claude.log"
        self.bin = directory / "claude"
        self.bin.write_text(
            "#!/bin/sh\n"
            f'export FAKE_CLAUDE_LOG="{self.log}"\n'
            f'exec "{sys.executable}" "{FAKE_CLI}" "$@"\n'
        )
        self.bin.chmod(0o755)

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def stdin(self) -> list[dict[str, Any]]:
        """Every message the fake CLI read on stdin, in order."""
        return [e["stdin"] for e in self.entries() if "stdin" in e]

    def user_texts(self) -> list[str]:
        """The text of every user turn the CLI received."""
        texts = []
        for message in self.stdin():
            if message.get("type") != "user":
                continue
            content = message["message"]["content"]
            if isinstance(content, str):
                texts.append(content)
            else:
                texts.append(" ".join(b.get("text", "") for b in content if b.get("type") == "text"))
        return texts

    def wait_stdin(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self.stdin():
                if predicate(message):
                    return message
            time.sleep(0.05)
        raise AssertionError(f"the fake CLI did not receive the expected message; it got {self.stdin()}")


@pytest.fixture
def fake_claude(tmp_path: Path) -> FakeClaude:
    return FakeClaude(tmp_path / "fake-claude")


# --- pneuma run ---------------------------------------------------------------


@pytest.fixture
def pneuma_server(tmp_path: Path) -> Iterator[Callable[..., Record]]:
    started: list[subprocess.Popen] = []
    counter = iter(range(1000))

    def start(
        mode: str,
        backend: str = "claude-code",
        claude_bin: str | Path | None = None,
        args: tuple[str, ...] | list[str] = (),
        workspace: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> Record:
        n = next(counter)
        if workspace is None:
            workspace = tmp_path / f"ws-{mode}-{n}"
        workspace.mkdir(parents=True, exist_ok=True)
        home = tmp_path / f"home-{n}"
        (home / ".claude").mkdir(parents=True, exist_ok=True)
        run_env = {k: v for k, v in os.environ.items() if k not in _FOREIGN_ENV}
        run_env.update(
            HOME=str(home),
            CLAUDE_CONFIG_DIR=str(home / ".claude"),
            PYTHONUNBUFFERED="1",
            # Only the mode under test: others may be half written.
            PNEUMA_LOAD_PLUGINS=mode,
        )
        run_env.update(env or {})
        pneuma = Path(sys.executable).with_name("pneuma")
        command = [str(pneuma)] if pneuma.exists() else [sys.executable, "-m", "pneuma.cli"]
        command += ["run", "--mode", mode, "--workspace", str(workspace), "--no-open",
                    "--no-prompt", "--port", "0", "--backend", backend]  # fmt: skip
        if claude_bin is not None:
            command += ["--claude-bin", str(claude_bin)]
        command += list(args)
        stderr_path = tmp_path / f"pneuma-run-{n}.stderr"
        with stderr_path.open("wb") as stderr:
            process = subprocess.Popen(
                command, cwd=tmp_path, env=run_env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=stderr, start_new_session=True,
            )  # fmt: skip
        started.append(process)
        line = read_first_line(process, READY_TIMEOUT)
        match = READY_LINE.match(line or "")
        if not match:
            kill_process_group(process)
            raise AssertionError(
                f"`pneuma run` did not print its ready line (got {line!r}); stderr:\n"
                + stderr_path.read_text(errors="replace")[-4000:]
            )
        return Record(
            url=line.split(" ", 2)[2],
            base=match["base"],
            token=match["token"],
            session_id=match["sid"],
            workspace=workspace.resolve(),
            process=process,
            stderr=stderr_path,
        )

    yield start
    for process in started:
        kill_process_group(process)


# --- pages -------------------------------------------------------------------


# A function, e.g. "() => x" or "(n) => ...", not a bare expression.
_FUNCTION_SOURCE = re.compile(r"^\s*(async\s+)?(function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)")


def _poll_without_eval(page: Any) -> None:
    """Make ``page.wait_for_function("a && b")`` work under the shell's
    Content-Security-Policy (no ``eval``): Playwright re-evaluates a bare
    expression with ``eval`` inside the page on every poll, which the policy
    refuses, whereas a function's source is compiled once through DevTools,
    which the policy does not govern. Bare expressions become ``() => (…)``."""
    if getattr(page, "_polls_without_eval", False):
        return
    wait = page.wait_for_function

    def wait_for_function(expression: str, *args: Any, **kwargs: Any) -> Any:
        if not _FUNCTION_SOURCE.match(expression):
            expression = f"() => ({expression})"
        return wait(expression, *args, **kwargs)

    page.wait_for_function = wait_for_function
    page._polls_without_eval = True


@pytest.fixture
def open_page(browser: Any) -> Iterator[Callable[..., Any]]:
    contexts: list[Any] = []

    def open_(server: Record, *, color_scheme: str = "light", viewport: dict[str, int] | None = None,
              wait_connected: bool = True, before_goto: Callable[[Any], None] | None = None,
              locale: str | None = None) -> Any:
        context = browser.new_context(
            viewport=viewport or {"width": 1360, "height": 820}, color_scheme=color_scheme,
            **({"locale": locale} if locale else {}),
        )
        contexts.append(context)
        # A WebGAL game in this context draws at most ten frames a second:
        # at 60 in software it takes a core from both test workers
        # (tests/browser/webgal_engine.py).
        cap_engine_frame_rate(context)
        context.on("page", _poll_without_eval)
        page = context.new_page()
        _poll_without_eval(page)
        page.console_errors = []
        page.on("console", lambda m: page.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: page.console_errors.append(f"pageerror: {e}"))
        if before_goto is not None:
            before_goto(page)
        page.goto(server.url)
        if wait_connected:
            page.wait_for_selector('.pill[data-state="open"]', timeout=10_000)
        return page

    yield open_
    for context in contexts:
        try:
            context.close()
        except Exception:
            pass
