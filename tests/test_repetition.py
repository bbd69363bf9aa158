"""The tree does not grow copies again: at most 35 pairs of places share six
or more lines of the same shape, and at most 15 of them are more than
boilerplate (issue 24, "Done when").

The count is the `duplicates` command's (a developer tool on the machines
this project is built on, not a dependency); where it is not installed the
test is skipped, as it is when the command could not read the whole tree in
its time.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MOST_PAIRS = 35
MOST_BEYOND_BOILERPLATE = 15

# "32 pairs of places (539 files read), each sharing runs of 6 or more
# identical or same-shape lines (27 by shape alone, 21 of those marked boilerplate)"
SUMMARY = re.compile(r"^(?P<pairs>\d+) pairs of places .*?(?:(?P<boilerplate>\d+) of those marked boilerplate)?\)?$")


def repetition_report() -> str:
    tool = shutil.which("duplicates")
    if tool is None:
        pytest.skip("the duplicates command is not installed here")
    done = subprocess.run([tool, "--repo", str(REPO), "--most", "200", "--seconds", "120"],
                          capture_output=True, text=True, timeout=180, check=False)
    if "incomplete:" in done.stdout:
        pytest.skip("duplicates could not read the whole tree: " + done.stdout.splitlines()[-1])
    return done.stdout


def test_the_tree_holds_few_repeated_places() -> None:
    report = repetition_report()
    first = report.splitlines()[0] if report else ""
    if first.startswith("no duplicates"):
        return
    summary = SUMMARY.match(first)
    assert summary is not None, f"duplicates said something else: {first!r}"
    pairs = int(summary["pairs"])
    beyond = pairs - int(summary["boilerplate"] or 0)
    rows = "\n".join(line for line in report.splitlines() if line.startswith("D"))
    assert pairs <= MOST_PAIRS, (
        f"{pairs} pairs of repeated places (at most {MOST_PAIRS}): share the logic in one "
        f"function, fixture or table instead of a copy\n{rows}")
    assert beyond <= MOST_BEYOND_BOILERPLATE, (
        f"{beyond} repeated places beyond boilerplate (at most {MOST_BEYOND_BOILERPLATE})\n{rows}")
