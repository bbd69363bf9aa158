"""The places where a text file changed in a turn, as line ranges, and how
to undo one of them alone (issue 28, items 1 and 2).

A turn's change to a text file (a page, a paper, a bibliography) is split
into hunks: runs of changed lines (neighbouring runs merged when the
caller's ``joins`` says the unchanged lines between them belong to the same
block). Reverting one hunk puts its
old lines back in the file as it is now: found at its place when the file
is still as the turn left it, else by its text and the lines around it, so
the person's other edits (and the turn's other hunks) stay.

On ``pneuma.api`` (``Hunk``, ``changed_hunks``, ``revert_hunk``,
``split_lines``) for any mode's ``ChangeDescriber``: one copy for every mode.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_CONTEXT = (3, 2, 1)  # lines around a hunk used to find it in an edited file


def split_lines(text: str) -> list[str]:
    """``text`` as lines that keep their ``\\n`` (only ``\\n`` breaks a line,
    so joining them gives ``text`` back exactly)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


@dataclass(frozen=True)
class Hunk:
    """Lines ``before[i1:i2]`` became ``after[j1:j2]`` (0-based, end excluded)."""

    i1: int
    i2: int
    j1: int
    j2: int


def is_blank(line: str) -> bool:
    return not line.strip()


def changed_hunks(before: Sequence[str], after: Sequence[str],
                  joins: Callable[[Sequence[str]], bool] | None = None) -> list[Hunk]:
    """The hunks between two versions, in file order. Two neighbouring runs
    of changed lines are one hunk when ``joins(unchanged lines between
    them)`` says so (default: none of them is blank)."""
    join = joins or (lambda gap: not any(is_blank(line) for line in gap))
    hunks: list[Hunk] = []
    # A turn usually changes a few places of a long file: the lines equal at
    # both ends are left out of difflib's work (it is quadratic in the
    # repeated lines, a paper's hundreds of blank ones).
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while (tail < min(len(before), len(after)) - head
           and before[len(before) - 1 - tail] == after[len(after) - 1 - tail]):
        tail += 1
    matcher = difflib.SequenceMatcher(None, before[head:len(before) - tail],
                                      after[head:len(after) - tail], autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        i1, i2, j1, j2 = a1 + head, a2 + head, b1 + head, b2 + head
        if hunks and join(after[hunks[-1].j2:j1]):
            last = hunks.pop()
            hunks.append(Hunk(last.i1, i2, last.j1, j2))
        else:
            hunks.append(Hunk(i1, i2, j1, j2))
    return hunks


def revert_hunk(before: Sequence[str], after: Sequence[str], hunk: Hunk, current: str) -> str:
    """``current`` with only ``hunk`` undone. Raises ValueError when the
    hunk's lines are no longer in the file (edited since the turn)."""
    lines = split_lines(current)
    old = list(before[hunk.i1:hunk.i2])
    if lines == list(after):
        return "".join(lines[:hunk.j1] + old + lines[hunk.j2:])
    new = list(after[hunk.j1:hunk.j2])
    for context in _CONTEXT:
        above = list(after[max(0, hunk.j1 - context):hunk.j1])
        below = list(after[hunk.j2:hunk.j2 + context])
        needle = above + new + below
        if not needle:
            continue
        found = _occurrences(lines, needle)
        if found:
            start = min(found, key=lambda at: abs(at + len(above) - hunk.j1)) + len(above)
            return "".join(lines[:start] + old + lines[start + len(new):])
    if new and len(found := _occurrences(lines, new)) == 1:
        return "".join(lines[:found[0]] + old + lines[found[0] + len(new):])
    raise ValueError("this part of the file was edited since the turn: revert the whole file instead")


def _occurrences(lines: Sequence[str], needle: Sequence[str]) -> list[int]:
    size = len(needle)
    first = needle[0]
    return [at for at in range(len(lines) - size + 1)
            if lines[at] == first and list(lines[at:at + size]) == list(needle)]
