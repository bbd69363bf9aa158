"""The headless viewer under stress (issue 26, item 3): many concurrent
viewer actions against a cold headless viewer start one Chromium and are
all answered; Chromium killed (SIGKILL) in the middle of actions leaves
every action answered (started again) or refused with a clear E_UNAVAILABLE,
never hanging. A real `pneuma run --mode slide` with no agent and no tab."""

from __future__ import annotations

import os
import random
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.browser.browser_helpers import browser_problems
from tests.browser.conftest import pneuma_server  # noqa: F401 (the fixture)
from tests.headless_viewer.test_headless_viewer import (
    action,
    alive,
    status_of,
    wait_until,
)
from tests.stress.tally import count, record

pytestmark = [pytest.mark.stress, pytest.mark.skipif(bool(browser_problems()), reason="needs Chromium and the shell")]
CONCURRENT = 12
KILLS = 1
IN_FLIGHT = 4
ANSWER_BOUND = 45.0  # seconds: an answer later than this counts as a hang


@pytest.fixture(autouse=True)
def headless_viewer_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The root conftest turns the headless viewer off for every other test."""
    monkeypatch.setenv("PNEUMA_HEADLESS_VIEWER", "1")


def some_action(rng: random.Random) -> tuple[str, dict[str, Any]]:
    return rng.choice([("describe-view", {}), ("checkContentFit", {}), ("capture-screenshot", {}),
                       ("navigate-to", {"file": "slides/02-problem.html"})])


def timed(server: Any, action_id: str, params: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
    started = time.monotonic()
    status, answer = action(server, action_id, params)
    return time.monotonic() - started, status, answer


def clear(status: int, answer: dict[str, Any]) -> bool:
    """Answered by the headless viewer, or refused in the one error shape."""
    if status == 200:
        return answer.get("viewer") == "headless"
    return status == 503 and answer["error"]["code"] == "E_UNAVAILABLE" and bool(answer["message"])


def test_concurrent_actions_on_a_cold_viewer_and_chromium_killed_mid_action(pneuma_server: Any) -> None:
    rng = random.Random(26)
    server = pneuma_server("slide", backend="none")
    with ThreadPoolExecutor(CONCURRENT) as pool:
        answers = list(pool.map(lambda _: timed(server, *some_action(rng)), range(CONCURRENT)))
    slowest = max(seconds for seconds, _, _ in answers)
    assert [(s, a.get("viewer")) for _, s, a in answers] == [(200, "headless")] * CONCURRENT, answers
    assert status_of(server)["starts"] == 1
    record("26.3 headless viewer", f"{count(CONCURRENT)} concurrent first actions: all answered by one "
                                   f"Chromium, slowest {slowest:.1f} s")

    outcomes = {"answered": 0, "refused": 0}
    for _ in range(KILLS):
        pid = status_of(server)["pid"]
        assert pid is not None and alive(pid)
        with ThreadPoolExecutor(IN_FLIGHT) as pool:
            futures = [pool.submit(timed, server, *some_action(rng)) for _ in range(IN_FLIGHT)]
            time.sleep(rng.uniform(0.0, 0.3))
            os.kill(pid, signal.SIGKILL)
            results = [future.result(ANSWER_BOUND + 5) for future in futures]
        for seconds, status, answer in results:
            assert seconds < ANSWER_BOUND, (seconds, answer)
            assert clear(status, answer), (status, answer)
            outcomes["answered" if status == 200 else "refused"] += 1
        wait_until(lambda pid=pid: not alive(pid), 10, "the killed Chromium is gone")
        # The next action is answered by a Chromium started again.
        _, status, answer = timed(server, "describe-view", {})
        assert status == 200 and answer["viewer"] == "headless", answer
    record("26.3 headless viewer", f"{KILLS} Chromium kill{'s' if KILLS != 1 else ''} under {IN_FLIGHT} actions each: "
                                   f"{outcomes['answered']} answered, {outcomes['refused']} refused "
                                   f"(E_UNAVAILABLE), none hung; {status_of(server)['starts']} starts")
