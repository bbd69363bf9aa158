"""Seq numbers across a kill -9 of a real `pneuma run` (issue 14, item 4).

A tab that saw seq N of a run that was then killed reconnects to the next
run with ``last_seq=N``. The killed run saved its ``lastSeq`` only every few
seconds, so the next one used to count from the saved value again: once it
had broadcast past N, the tab's ``last_seq`` looked current and it got only
the events after N, silently missing the new run's first ones. Now each run
reserves its numbers on disk before using them, the next run starts above
them, and such a tab gets the full ``message_history``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

PNEUMA = str(Path(sys.executable).parent / "pneuma")
READY = re.compile(r"^\[pneuma\] ready http://127\.0\.0\.1:(\d+)/\?session=([^&\s]+)&token=(\S+)$")
TIMEOUT = 15.0


def read_ready(proc: subprocess.Popen[str], detail: Callable[[], str] | None = None) -> tuple[int, str, str]:
    """The port, session id and token of `pneuma run`'s ready line; if its
    first line is another, the run is killed and the test fails, saying
    ``detail()`` too (what the run wrote to stderr)."""
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    match = READY.match(line)
    if match is None:
        proc.kill()
        raise AssertionError(f"pneuma run did not start: {line!r}" + (f" {detail()}" if detail else ""))
    return int(match[1]), match[2], match[3]


class Run:
    """One `pneuma run --backend none` on ``workspace``: every user message
    is broadcast (and answered by a broadcast ``no_agent`` error)."""

    def __init__(self, workspace: Path) -> None:
        env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "slide", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [PNEUMA, "run", "--mode", "slide", "--workspace", str(workspace), "--backend",
             "none", "--no-open", "--no-prompt", "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )
        self.port, self.session_id, self.token = read_ready(self.proc)

    def url(self, last_seq: int) -> str:
        return (f"ws://127.0.0.1:{self.port}/ws/browser/{self.session_id}"
                f"?token={self.token}&last_seq={last_seq}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@asynccontextmanager
async def tab(run: Run, last_seq: int) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(run.url(last_seq), max_msg_size=0) as ws:
            yield ws


async def messages(ws: aiohttp.ClientWebSocketResponse) -> AsyncIterator[dict[str, Any]]:
    """Every message of the socket until it closes (frames hold several, one a line)."""
    while True:
        frame = await ws.receive(timeout=TIMEOUT)
        if frame.type != aiohttp.WSMsgType.TEXT:
            return
        for line in frame.data.split("\n"):
            if line.strip():
                yield json.loads(line)


def user_message(text: str) -> str:
    return json.dumps({"type": "user_message", "content": text, "client_msg_id": text})


async def restarted_history(workspace: Path) -> tuple[Run, dict[str, Any]]:
    """A new `pneuma run` on ``workspace`` and the ``message_history`` a
    fresh tab gets from it (the run is stopped before this returns)."""
    again = Run(workspace)
    try:
        async with tab(again, 0) as ws:
            async for message in messages(ws):
                if message["type"] == "message_history":
                    return again, message
    finally:
        again.stop()
    raise AssertionError("the restarted run sent no message_history")


async def say(run: Run, text: str) -> int:
    """One user message from a new tab, read until the server's no-agent
    answer; returns the newest seq the tab saw."""
    last = 0
    async with tab(run, 0) as ws:
        await ws.send_str(user_message(text))
        async for message in messages(ws):
            last = max(last, message.get("seq", 0))
            if message.get("type") == "error" and message.get("code") == "no_agent":
                break
    return last


EVENTS_BEFORE_KILL = 40


async def talk_until_killed(run: Run) -> tuple[int, int]:
    """A tab keeps sending until the run is killed at EVENTS_BEFORE_KILL
    events seen; returns (the newest seq seen, messages sent)."""
    seen = first = 0
    sent = 0
    try:
        async with tab(run, 0) as ws:
            async def keep_sending() -> None:
                nonlocal sent
                for i in range(10_000):
                    await ws.send_str(user_message(f"before {i}"))
                    sent += 1
                    await asyncio.sleep(0.005)

            sender = asyncio.create_task(keep_sending())
            try:
                async for message in messages(ws):
                    seq = message.get("seq", 0)
                    first = first or seq
                    seen = max(seen, seq)
                    if seen - first >= EVENTS_BEFORE_KILL and run.proc.poll() is None:
                        run.proc.send_signal(signal.SIGKILL)
            except (aiohttp.ClientError, ConnectionError):
                pass
            finally:
                sender.cancel()
                await asyncio.gather(sender, return_exceptions=True)
    finally:  # killed, or never left serving by a failure
        run.proc.kill()
        run.proc.wait()
    assert run.proc.returncode == -signal.SIGKILL
    return seen, sent


async def missed_after_reconnect(run: Run, stale_seq: int) -> tuple[list[str], int, bool]:
    """Talks to ``run`` until its numbers pass ``stale_seq``, then reconnects
    with it; returns (messages the reconnecting tab did not get, messages
    sent, whether it got a full history)."""
    sent: list[str] = []
    async with tab(run, 0) as ws:
        stream = messages(ws)
        newest = 0
        while newest <= stale_seq + 4:
            sent.append(f"after {len(sent)}")
            await ws.send_str(user_message(sent[-1]))
            async for message in stream:
                newest = max(newest, message.get("seq", 0))
                if message.get("type") == "error" and message.get("code") == "no_agent":
                    break
    got = []
    async with tab(run, stale_seq) as ws:
        async for message in messages(ws):
            got.append(message)
            if message["type"] == "status_change" and "seq" not in message:
                break
    shown = [m["content"] for m in got if m["type"] == "user_message"]
    for m in got:
        if m["type"] == "message_history":
            shown += [h["content"] for h in m["messages"] if h.get("type") == "user_message"]
    history = any(m["type"] == "message_history" for m in got)
    return [text for text in sent if text not in shown], len(sent), history


async def test_a_tab_from_before_a_kill_9_misses_nothing_of_the_next_run(tmp_path: Path) -> None:
    workspace = tmp_path / "deck"
    workspace.mkdir()

    # Run 1: a tab keeps sending; the server is killed while events flow.
    seen, _ = await talk_until_killed(Run(workspace))
    assert seen >= EVENTS_BEFORE_KILL

    # Run 2: another tab talks until the new run has broadcast past `seen`;
    # then the tab from before the crash reconnects with what it saw.
    second = Run(workspace)
    try:
        missing, _, history = await missed_after_reconnect(second, seen)
    finally:
        second.stop()
    assert not missing, f"the reconnecting tab silently missed {missing}"
    assert history


async def test_a_clean_restart_continues_the_numbering(tmp_path: Path) -> None:
    """A stop by SIGTERM releases the reserved numbers: the next run starts
    right after the last one used, and a tab that saw it gets no history again."""
    workspace = tmp_path / "deck"
    workspace.mkdir()
    first = Run(workspace)
    try:
        last = await say(first, "hello")
    finally:
        first.stop()
    assert first.proc.returncode == 0

    second = Run(workspace)
    try:
        async with tab(second, last) as ws:
            got = []
            async for message in messages(ws):
                got.append(message)
                if message["type"] == "status_change" and "seq" not in message:
                    break
    finally:
        second.stop()
    assert got[0]["type"] == "session_init"
    assert got[0]["session"]["last_seq"] == last
    assert [m["type"] for m in got[1:]] == ["status_change"]


def test_every_number_is_on_disk_before_a_tab_can_see_it(tmp_path: Path, monkeypatch) -> None:
    """With a small block, many reservations: none is ever behind the counter."""
    from pneuma.server import persistence
    from pneuma.server.session import Session

    monkeypatch.setattr(persistence, "SEQ_BLOCK", 3)
    session = Session("s", mode="slide", workspace=tmp_path, backend_name="none", last_seq=5)
    session.use_seq_reservation(persistence.SeqReservation(tmp_path).reserve)
    for i in range(20):
        if i % 2:
            session.emit_stream('{"type":"ping"}')
        else:
            session.emit({"type": "status_change", "status": "idle"})
        assert persistence.read_reserved_seq(tmp_path) >= session.seq == 6 + i
    persistence.SeqReservation(tmp_path).release(session.seq)
    assert persistence.read_reserved_seq(tmp_path) == session.seq
