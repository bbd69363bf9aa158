"""A real ``pneuma run`` with the fake Claude Code CLI (tests/fakes/fake_claude.py)
and one socket tab, for the tests of queued follow-ups across a stop
(tests/server/test_follow_ups_restart.py and its stress part): the
prompt "slow" keeps the agent busy, streaming, until interrupted."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp

from pneuma.server.follow_up_file import QUEUE_FILE
from tests.browser.browser_helpers import (
    READY_LINE,
    kill_process_group,
    read_first_line,
)

REPO = Path(__file__).resolve().parents[2]
FAKE_CLI = REPO / "tests" / "fakes" / "fake_claude.py"
PNEUMA = Path(sys.executable).with_name("pneuma")
TIMEOUT = 15.0
_FOREIGN_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
                "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT",
                "PNEUMA_CLAUDE_BIN")


class FakeAgent:
    """The fake CLI behind ``--claude-bin``, logging what it reads."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.log = directory / "fake_claude.log"
        self.bin = directory / "claude"
        self.bin.write_text(f'#!/bin/sh\nexport FAKE_CLAUDE_LOG="{self.log}"\n'
                            f'exec "{sys.executable}" "{FAKE_CLI}" "$@"\n')
        self.bin.chmod(0o755)

    def user_texts(self) -> list[str]:
        """Every user turn the agent got, over every run."""
        if not self.log.exists():
            return []
        texts = []
        for line in self.log.read_text().splitlines():
            message = json.loads(line).get("stdin") if line.strip() else None
            if not message or message.get("type") != "user":
                continue
            content = message["message"]["content"]
            texts.append(content if isinstance(content, str) else " ".join(
                b.get("text", "") for b in content if b.get("type") == "text"))
        return texts


class Run:
    """``pneuma run --mode slide`` on ``workspace`` with the fake agent; its
    stderr (the terminal's lines) in ``stderr_path``."""

    def __init__(self, workspace: Path, agent: FakeAgent, home: Path, name: str) -> None:
        home.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in _FOREIGN_ENV}
        env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"),
                   PNEUMA_LOAD_PLUGINS="slide", PYTHONUNBUFFERED="1")
        self.stderr_path = home / f"{name}.stderr"
        with self.stderr_path.open("wb") as stderr:
            self.proc = subprocess.Popen(
                [str(PNEUMA), "run", "--mode", "slide", "--workspace", str(workspace),
                 "--no-open", "--no-prompt", "--port", "0", "--claude-bin", str(agent.bin)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr, env=env,
                start_new_session=True)
        line = read_first_line(self.proc, 20.0)
        match = READY_LINE.match(line or "")
        if match is None:
            self.kill_all()
            raise AssertionError(f"pneuma run did not start ({line!r}): {self.stderr()}")
        self.ws_url = (f"ws://{match['base'].removeprefix('http://')}/ws/browser/"
                       f"{match['sid']}?token={match['token']}")

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self, how: signal.Signals) -> None:
        """SIGTERM (as Ctrl-C or the launcher's Stop) or SIGKILL (kill -9,
        a crash): to the server alone, as a person or the system would."""
        self.proc.send_signal(how)
        self.proc.wait(TIMEOUT)
        self.kill_all()  # the agent it left, if any

    def kill_all(self) -> None:
        kill_process_group(self.proc)
        with contextlib.suppress(Exception):
            if self.proc.stdout is not None:
                self.proc.stdout.close()


class Tab:
    """One socket tab, subscribed from 0; ``seen`` keeps every message."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.seen: list[dict[str, Any]] = []
        self._buffer: list[dict[str, Any]] = []

    async def __aenter__(self) -> Tab:
        self._http = aiohttp.ClientSession()
        self.ws = await self._http.ws_connect(self.run.ws_url, max_msg_size=0)
        await self.send({"type": "session_subscribe", "last_seq": 0})
        return self

    async def __aexit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close()
        await self._http.close()

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_str(json.dumps(message))

    async def say(self, text: str) -> None:
        await self.send({"type": "user_message", "content": text, "client_msg_id": text})

    async def wait_for(self, kind: str, where: Any = None) -> dict[str, Any]:
        while True:
            while self._buffer:
                message = self._buffer.pop(0)
                if message.get("type") == kind and (where is None or where(message)):
                    return message
            frame = await self.ws.receive(timeout=TIMEOUT)
            if frame.type != aiohttp.WSMsgType.TEXT:
                raise AssertionError(f"the socket closed while waiting for {kind!r}")
            for line in frame.data.split("\n"):
                if line.strip():
                    message = json.loads(line)
                    self.seen.append(message)
                    self._buffer.append(message)

    async def busy(self) -> None:
        """The agent works on a long answer (until interrupted, or 10 s)."""
        await self.say(f"slow please {len(self.seen)}")
        await self.wait_for("stream_event")

    async def queue(self, text: str) -> dict[str, Any]:
        await self.say(text)
        return await self.wait_for("user_message_queued", lambda m: m.get("client_msg_id") == text)


def kept(workspace: Path) -> list[dict[str, Any]]:
    """The queue in the workspace's file (empty when there is none)."""
    path = workspace / ".pneuma" / QUEUE_FILE
    if not path.exists():
        return []
    return list(json.loads(path.read_bytes())["queue"])


__all__ = ["FakeAgent", "Run", "Tab", "kept", "signal"]
