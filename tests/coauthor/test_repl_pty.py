"""The REPL driven through a pseudo-terminal (stdlib pty), against the fake API:
type /edit, see the plan and the colored diff, /accept, see the file change."""

from __future__ import annotations

import asyncio
import os
import pty
import re
import select
import signal
import subprocess
import time
from pathlib import Path

from tests.fakes.anthropic_api import FakeAnthropicAPI, tool_use

from .conftest import PNEUMA, env

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\r")


class Terminal:
    def __init__(self, argv: list[str], environ: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=environ, start_new_session=True)
        os.close(slave)
        self.raw = b""

    @property
    def text(self) -> str:
        return ANSI.sub("", self.raw.decode("utf-8", "replace"))

    async def expect(self, pattern: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.text):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {pattern!r}; screen so far:\n{self.text[-3000:]}")
            ready, _, _ = select.select([self.master], [], [], 0)
            if ready:
                try:
                    self.raw += os.read(self.master, 65536)
                except OSError:
                    await asyncio.sleep(0.05)
            else:
                await asyncio.sleep(0.02)  # let the fake API (same loop) answer

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\r")

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(5)
        os.close(self.master)


async def test_repl_edit_plan_diff_accept(paper: Path):
    async with FakeAnthropicAPI() as api:
        api.push(tool_use("post_plan", {
            "goal": "Fix the verb agreement", "issues": ["argue/argues"], "strategy": ["one word"],
            "scope": ["sections/intro.tex:4"], "risks": [], "questions": [], "files": ["sections/intro.tex"],
            "patchNeeded": True}))
        api.push(tool_use("propose_edits", {"summary": "argue -> argues", "edits": [
            {"path": "sections/intro.tex", "lineStart": 4, "lineEnd": 4,
             "replacement": "This paper argues that every change should be a patch."}]}))
        environ = env() | {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "k", "TERM": "xterm-256color",
                           "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "120", "LINES": "40"}
        term = Terminal([str(PNEUMA), "coauthor", "--workspace", str(paper)], environ)
        try:
            await term.expect(r"coauthor>")
            term.type("/edit sections/intro.tex:4-4 fix the grammar")
            await term.expect(r"t-001 created")
            await term.expect(r"Goal: Fix the verb agreement", timeout=40)
            await term.expect(r"Accept with /accept t-001-p1")
            assert "+This paper argues that every change should be a patch." in term.text
            assert "-This paper argue that every change should be a patch." in term.text
            assert "\x1b[32m" in term.raw.decode("utf-8", "replace")  # added lines in green
            assert re.search(r"reasoning · \S+ · plan", term.text)  # each model call is traced on screen
            term.type("/accept t-001-p1")
            await term.expect(r"t-001 done")
            assert "argues that" in (paper / "sections/intro.tex").read_text()
            term.type("/tasks")
            await term.expect(r"no open tasks")
            term.type("/log replay t-001")
            await term.expect(r"TaskCompleted #\d+ t-001")
            term.type("/quit")
            for _ in range(100):
                if term.proc.poll() is not None:
                    break
                await asyncio.sleep(0.05)
            assert term.proc.returncode == 0
        finally:
            term.close()
