"""Issue 25, items 1 and 2 under stress.

Item 1: Codex's patch questions that acceptEdits answers itself. Hostile
paths (``..``, links out of the workspace, absolute paths elsewhere, long
and odd names) are never taken unasked; ordinary files inside are.

Item 2: the words of Codex's model-API failures. Random statuses, server
messages (plain and OpenAI-shaped JSON), log lines with colours and secret
headers, and missing log lines: the status is always told once known,
Codex's generic text never stands in for it, no header reaches the page.
Then the REAL Codex CLI meets a run of failing statuses in one session:
every turn ends with its status told, and the next ordinary turn works.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from pneuma.agents.codex.backend import inside_workspace
from pneuma.agents.codex.model_errors import ModelTrouble, strip_ansi
from tests.codex.codex_helpers import codex_config
from tests.codex.conftest import (  # noqa: F401  (fixtures)
    CODEX_BIN,
    codex_env,
    connect,
    fake_responses,
    proxy,
    start_codex,
    time_limit,
    workspace,
)
from tests.codex.test_codex_backend_e2e import TURN, open_session, say
from tests.fakes.openai_responses import TEXT_REPLY
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

PATHS = 2000
MESSAGES = 3000
LIVE_STATUSES = (500, 502, 503, 504, 429, 400, 404, 500, 503)
GENERIC = "We\u2019re currently experiencing high demand, which may cause temporary errors."
SECRET = "org-do-not-show"


def test_accept_edits_never_takes_a_path_outside_the_workspace(tmp_path: Path) -> None:
    rng = random.Random(25_1)
    root = tmp_path / "ws"
    (root / "slides").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "out-link").symlink_to(outside)
    (root / "slides" / "up").symlink_to(tmp_path)
    (root / "root-link").symlink_to("/")
    inside_names = ["a.md", "slides/01.html", "slides/../b.md", "./c.txt", "deep/er/d.txt",
                    "x" * 200, "spaced name.md", "ünï.md", str(root / "abs.md")]
    outside_names = ["../o.md", "slides/../../o.md", "out-link/o.md", "slides/up/o.md",
                     "root-link/etc/passwd", str(outside / "o.md"), "/etc/passwd", "/", "",
                     str(tmp_path), "a/../../o.md", "./../o.md"]
    taken = refused = 0
    for _ in range(PATHS):
        if rng.random() < 0.5:
            name = rng.choice(inside_names)
            assert inside_workspace(root, name), name
            taken += 1
        else:
            name = rng.choice(outside_names)
            prefix = rng.choice(["", "./", "slides/../"])
            candidate = name if name.startswith("/") or not name else prefix + name
            assert not inside_workspace(root, candidate), candidate
            refused += 1
    record("25.1", f"codex acceptEdits paths: {count(PATHS)} patch paths, {count(taken)} inside "
                   f"taken unasked, {count(refused)} outside (.., links, absolute) all asked")


def _error_case(rng: random.Random) -> tuple[int, str, dict[str, Any], str]:
    """(status, server message, the final notification, the answer's log line)."""
    status = rng.choice([400, 404, 408, 409, 422, 429, 500, 502, 503, 504, 520])
    message = rng.choice(["Overloaded", "scripted: try later", "‰ odd ünïcode", "a, b: c", "x" * 300])
    url = f"http://127.0.0.1:{rng.randrange(1024, 65535)}/v1/responses"
    line = (f"\x1b[2m2026-11-29T07:34:17Z\x1b[0m DEBUG codex_http_client::client: Request completed "
            f"method=POST url={url} status={status} Reason Phrase headers={{\"openai-organization\": "
            f"\"{SECRET}\"}} version=HTTP/1.1")
    body = json.dumps({"error": {"message": message}}) if rng.random() < 0.5 else message
    if status == 500:
        error = {"message": GENERIC, "codexErrorInfo": "internalServerError"}
    elif status >= 500:
        error = {"message": f"unexpected status {status} Reason Phrase: {body}, url: {url}",
                 "codexErrorInfo": {"httpConnectionFailed": {"httpStatusCode": status}}}
    else:
        error = {"message": body, "codexErrorInfo": "other"}
    return status, message, error, line


def test_model_failures_are_told_with_their_status_and_never_a_header() -> None:
    rng = random.Random(25_2)
    with_log = without_log = 0
    for _ in range(MESSAGES):
        status, message, error, line = _error_case(rng)
        trouble = ModelTrouble()
        if rng.random() < 0.8:
            assert trouble.note_stderr(strip_ansi(line))
            with_log += 1
        else:
            without_log += 1
        retry = trouble.retry_notice({"message": "Reconnecting... 1/2",
                                      "codexErrorInfo": {"responseStreamDisconnected":
                                                         {"httpStatusCode": None}},
                                      "additionalDetails": error["message"]},
                                     rng.choice([None, 0.2, 5.0]), None)
        final = trouble.final_error(error, None)
        for text in (retry, final):
            assert SECRET not in text and "headers=" not in text, text
        if status >= 500 or trouble.last_answer is not None:
            assert f"HTTP {status}" in final and "high demand" not in final, (error, final)
        if status != 500:
            assert message in final, (error, final)
        assert "attempt 1 of 2" in retry
    record("25.2", f"codex model errors: {count(MESSAGES)} failures over 11 statuses "
                   f"({count(with_log)} with Codex's log line, {count(without_log)} without): "
                   "0 told without their status, 0 generic texts, 0 headers shown")


@pytest.mark.skipif(CODEX_BIN is None, reason="the Codex CLI is not installed: scripts/install")
async def test_the_real_codex_tells_a_run_of_failing_statuses(
        fake_responses: Any, codex_env: dict[str, str], start_codex: Any, connect: Any) -> None:  # noqa: F811
    (Path(codex_env["CODEX_HOME"]) / "config.toml").write_text(
        codex_config(fake_responses.base_url, retries=1))
    begun = time.monotonic()
    run, client = await open_session(start_codex, connect)
    told = 0
    for number, status in enumerate(LIVE_STATUSES):
        mark = await say(client, f"[status: {status} stress failure {number}]", f"stress-{number}")
        result = await client.wait_turn_done(since=mark, timeout=TURN)
        assert result["data"]["is_error"]
        finals = [e["message"] for e in client.of("error", mark) if e["code"] != "api_retry"]
        assert len(finals) == 1 and f"HTTP {status}" in finals[0], finals
        assert "high demand" not in finals[0]
        told += 1
    mark = await say(client, "Say hello", "stress-ok")
    result = await client.wait_turn_done(since=mark, timeout=TURN)
    assert result["data"]["result"] == TEXT_REPLY and not result["data"]["is_error"]
    retries = [e for e in client.of("error") if e.get("code") == "api_retry"]
    record("25.2", f"codex live: {told} failing turns ({len(set(LIVE_STATUSES))} statuses), "
                   f"{len(retries)} retry notices, each final error with its status, then a "
                   f"good turn, in {time.monotonic() - begun:.1f} s")
