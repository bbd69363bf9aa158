"""When Codex's model API fails, the page and the terminal say so, as the
Claude Code backend does (docs/backends.md, "Model API failures"): each
retry is an ``api_retry`` notice with its attempt and delay, the final
error names the HTTP status (and the server's own message where Codex
passes it on) instead of Codex's generic "high demand" text, and an
endpoint that cannot be reached is one line in the terminal.

The REAL Codex CLI runs against the fake Responses API, which answers
``[status: N TEXT]`` with HTTP N, or is closed to be unreachable.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from tests.codex.codex_helpers import codex_config
from tests.codex.conftest import requires_codex
from tests.codex.test_codex_backend_e2e import TURN, open_session, say

pytestmark = requires_codex

GENERIC = "experiencing high demand"
DELAY = re.compile(r"in \d+(\.\d+)? s\b")


def allow_retries(codex_env: dict[str, str], base_url: str, retries: int) -> None:
    config = Path(codex_env["CODEX_HOME"]) / "config.toml"
    config.write_text(codex_config(base_url, retries=retries))


async def test_a_500_is_retried_in_notices_then_told_with_its_status(
        fake_responses: Any, codex_env: dict[str, str], start_codex: Any, connect: Any) -> None:
    allow_retries(codex_env, fake_responses.base_url, 2)
    run, client = await open_session(start_codex, connect)
    before = len(fake_responses.requests)
    mark = await say(client, "[status: 500 The fake model is down for maintenance]", "err-a-1")
    result = await client.wait_turn_done(since=mark, timeout=TURN)

    assert len(fake_responses.requests) - before == 3  # the try and Codex's two retries
    retries = [e["message"] for e in client.of("error", mark) if e["code"] == "api_retry"]
    assert len(retries) == 2, retries
    for attempt, notice in enumerate(retries, 1):
        assert f"attempt {attempt} of 2" in notice and "HTTP 500" in notice, notice
        assert DELAY.search(notice), f"the notice names the delay: {notice}"
    (final,) = [e for e in client.of("error", mark) if e["code"] != "api_retry"]
    assert "HTTP 500" in final["message"] and fake_responses.base_url in final["message"]
    assert GENERIC not in final["message"]
    assert result["data"]["is_error"] and "HTTP 500" in result["data"]["result"]


async def test_a_503_is_told_with_the_servers_own_message(
        fake_responses: Any, codex_env: dict[str, str], start_codex: Any, connect: Any) -> None:
    allow_retries(codex_env, fake_responses.base_url, 1)
    run, client = await open_session(start_codex, connect)
    mark = await say(client, "[status: 503 Overloaded right now, try later]", "err-b-1")
    result = await client.wait_turn_done(since=mark, timeout=TURN)

    (retry,) = [e["message"] for e in client.of("error", mark) if e["code"] == "api_retry"]
    assert "HTTP 503" in retry and "Overloaded right now, try later" in retry
    assert "attempt 1 of 1" in retry and DELAY.search(retry)
    (final,) = [e["message"] for e in client.of("error", mark) if e["code"] != "api_retry"]
    assert "HTTP 503" in final and "Overloaded right now, try later" in final
    assert result["data"]["is_error"]


async def test_an_unreachable_endpoint_is_told_in_the_page_and_the_terminal(
        fake_responses: Any, start_codex: Any, connect: Any) -> None:
    run, client = await open_session(start_codex, connect)
    endpoint = fake_responses.base_url
    await fake_responses.close()  # its port is closed now: connection refused

    mark = await say(client, "Are you there?", "err-c-1")
    notice = await client.wait_for(lambda m: m["type"] == "error" and m["code"] == "api_retry",
                                   since=mark, timeout=TURN, what="an api_retry notice")
    assert "cannot reach" in notice["message"] and endpoint in notice["message"], notice
    assert DELAY.search(notice["message"]), notice
    line = await terminal_line(run, "cannot reach")
    assert endpoint in line and line.startswith("[pneuma]"), line

    # Codex would wait for the network for as long as it takes: Stop ends it.
    begun = asyncio.get_running_loop().time()
    await client.send({"type": "interrupt"})
    result = await client.wait_turn_done(since=mark, timeout=10)
    assert result["data"]["is_error"] and asyncio.get_running_loop().time() - begun < 5


async def terminal_line(run: Any, words: str, timeout: float = 10.0) -> str:
    """The first line of `pneuma run`'s terminal output holding ``words``, once written."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        lines = [line for line in run.stderr(200).splitlines() if words in line]
        if lines:
            assert len(lines) == 1, lines  # told once, not at every retry
            return lines[0]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no terminal line with {words!r}:\n{run.stderr()}")
        await asyncio.sleep(0.1)
