"""The stress suite's closing summary, as a pytest plugin the repository's
root conftest.py loads (so the xdist controller, which collects no tests
and so never loads tests/stress/conftest.py, has it too).

Each stress test records what it tried (``tests.stress.tally.record``).
Under pytest-xdist every worker keeps its own tally; it travels to the
controller in ``workeroutput`` when the worker ends, and the controller
prints one line per item after the run.
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
