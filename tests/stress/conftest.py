"""The stress suite (issue 14, items 1-5; issue 23's fault injection):
bounded, loopback-only runs of the hardening tests with larger counts,
selected by ``-m stress``.

At the end of a run in which any of them ran, one line per item says what
was tried (rounds, requests, examples) and what got through. Under
pytest-xdist each worker keeps its own tally; it travels to the controller
in ``workeroutput`` when the worker ends, so the summary shows them all.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.stress.tally import TRIED

_OUTPUT_KEY = "pneuma_stress_tried"


def pytest_sessionfinish(session: Any) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the tally over
        workeroutput[_OUTPUT_KEY] = json.dumps(TRIED)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    tried = json.loads(getattr(node, "workeroutput", {}).get(_OUTPUT_KEY, "{}"))
    for item, lines in tried.items():
        TRIED.setdefault(item, []).extend(lines)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TRIED:
        return
    terminalreporter.section("stress: what was tried")
    for item in sorted(TRIED):
        for line in TRIED[item]:
            terminalreporter.write_line(f"item {item}: {line}")
