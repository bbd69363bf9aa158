"""The stress suite (issue 14, items 1-5): bounded, loopback-only runs of
the hardening tests with larger counts, selected by ``-m stress``.

At the end of a run in which any of them ran, one line per item says what
was tried (rounds, requests, examples) and what got through.
"""

from __future__ import annotations

from typing import Any

from tests.stress.tally import TRIED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TRIED:
        return
    terminalreporter.section("stress: what was tried")
    for item in sorted(TRIED):
        for line in TRIED[item]:
            terminalreporter.write_line(f"item {item}: {line}")
