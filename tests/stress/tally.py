"""What the stress tests tried, kept for the run's closing summary.

Each stress test adds one line per item (``record``); conftest.py's
``pytest_terminal_summary`` prints them, so CI's log shows the counts.
"""

from __future__ import annotations

TRIED: dict[str, list[str]] = {}


def record(item: str, line: str) -> None:
    TRIED.setdefault(item, []).append(line)


def count(n: int) -> str:
    """A count the way the summary shows it: 4,532."""
    return f"{n:,}"
