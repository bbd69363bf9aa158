"""The ACP agent's process: started in its own process group (so a stop
reaches whatever it starts), its stderr kept as a bounded tail for the
message shown when it dies."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections import deque
from pathlib import Path

from .transport import LINE_LIMIT

log = logging.getLogger(__name__)

STDERR_LINES = 50
STDERR_LINE_CHARS = 2000
TAIL_LINES = 8
STOP_GRACE = 2.0


def line_limit(env: dict[str, str]) -> int:
    """The longest line read from the agent (``PNEUMA_ACP_LINE_LIMIT`` bytes
    when set: tests use a small one)."""
    try:
        return max(int(env.get("PNEUMA_ACP_LINE_LIMIT", LINE_LIMIT)), 1024)
    except ValueError:
        return LINE_LIMIT


class AgentProcess:
    """One running agent; ``tail()`` is the end of what it wrote to stderr."""

    def __init__(self, process: asyncio.subprocess.Process, line_limit: int = LINE_LIMIT) -> None:
        self.process = process
        self.line_limit = line_limit
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._stderr_done = asyncio.get_running_loop().create_task(self._read_stderr())

    @classmethod
    async def spawn(cls, argv: list[str], cwd: Path, env: dict[str, str]) -> AgentProcess:
        """Start ``argv``; OSError (not found, not executable) as Popen raises it."""
        limit = line_limit(env)
        process = await asyncio.create_subprocess_exec(
            *argv, cwd=str(cwd), env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            limit=limit, start_new_session=True)
        return cls(process, limit)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def reader(self) -> asyncio.StreamReader:
        assert self.process.stdout is not None
        return self.process.stdout

    @property
    def writer(self) -> asyncio.StreamWriter:
        assert self.process.stdin is not None
        return self.process.stdin

    async def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a line over the limit: its end follows
                continue
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip()
            if text:
                self._stderr.append(text[:STDERR_LINE_CHARS])
                log.debug("acp agent stderr: %s", text[:STDERR_LINE_CHARS])

    async def exited(self) -> int:
        """Wait for the process to end and its stderr to be read; its status."""
        code = await self.process.wait()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_done), 1.0)
        return code

    def tail(self, lines: int = TAIL_LINES) -> str:
        return "\n".join(list(self._stderr)[-lines:])

    async def terminate(self) -> None:
        """SIGTERM to its group, then SIGKILL after a grace."""
        if self.process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), STOP_GRACE)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            await self.process.wait()
