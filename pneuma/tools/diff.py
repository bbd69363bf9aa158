"""Line diffs in the tool contract's JSON shape (docs/design/tool-contract.md, "Dry runs and diffs").

Text is split on ``"\\n"`` only, so ``"\\n".join(lines)`` gives the text back
exactly: a file ending with a newline has a last, empty line; ``"\\r"`` of
CRLF files stays part of its line. Starts are 1-based positions of the
hunk's first line in the old and the new text (for an insertion,
``startOld`` is the line the new lines go before; ``lenOld`` is 0).
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Any

from pneuma.core.errors import ToolError


def split_lines(text: str) -> list[str]:
    return text.split("\n")


def line_diff(old: str, new: str, context: int = 0) -> dict[str, Any]:
    """``{"type": "line", "hunks": [...]}`` turning ``old`` into ``new``."""
    a, b = split_lines(old), split_lines(new)
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    hunks: list[dict[str, Any]] = []
    groups = matcher.get_grouped_opcodes(context) if context else [
        [op] for op in matcher.get_opcodes() if op[0] != "equal"]
    for group in groups:
        if all(op[0] == "equal" for op in group):
            continue
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        hunks.append({
            "startOld": i1 + 1, "lenOld": i2 - i1,
            "startNew": j1 + 1, "lenNew": j2 - j1,
            "linesOld": a[i1:i2], "linesNew": b[j1:j2],
        })
    return {"type": "line", "hunks": hunks}


_HUNK_NUMBERS = ("startOld", "lenOld", "startNew", "lenNew")


def check_line_diff(diff: Any, field: str = "diff") -> dict[str, Any]:
    """``diff`` if it has the shape ``line_diff`` gives, else ``E_BAD_ARGS``
    naming the first part that does not: a diff from outside (a client of
    ``POST /api/confirmations``) is shown to the person as it is."""
    def bad(where: str, what: str) -> ToolError:
        return ToolError("E_BAD_ARGS", f"{where} {what}", details={"field": where},
                         hint='a diff is {"type": "line", "hunks": [{startOld, lenOld, '
                              'startNew, lenNew, linesOld: [...], linesNew: [...]}]}')

    if not isinstance(diff, dict) or diff.get("type", "line") != "line":
        raise bad(field, "must be {\"type\": \"line\", \"hunks\": [...]}")
    hunks = diff.get("hunks")
    if not isinstance(hunks, list):
        raise bad(f"{field}.hunks", "must be a list")
    for index, hunk in enumerate(hunks):
        where = f"{field}.hunks[{index}]"
        if not isinstance(hunk, dict):
            raise bad(where, "must be an object")
        for key in _HUNK_NUMBERS:
            value = hunk.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise bad(f"{where}.{key}", "must be a whole number of lines, 0 or more")
        for key in ("linesOld", "linesNew"):
            lines = hunk.get(key, [])
            if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
                raise bad(f"{where}.{key}", "must be a list of strings")
    return diff


def changed_lines(diff: dict[str, Any]) -> int:
    """How many lines a diff touches (the larger of removed and added)."""
    removed = sum(h["lenOld"] for h in diff["hunks"])
    added = sum(h["lenNew"] for h in diff["hunks"])
    return max(removed, added)


def apply_line_diff(text: str, diff: dict[str, Any], *, path: str | None = None) -> str:
    """Apply ``diff`` to ``text``. A hunk whose old lines are not at their
    place is looked for nearby (nearest first, like patch's offset); if they
    are nowhere, E_CONFLICT says which hunk and what was found instead."""
    if not isinstance(diff, dict) or diff.get("type") != "line" or not isinstance(
            diff.get("hunks"), list):
        raise ToolError("E_BAD_ARGS", "a diff is {\"type\": \"line\", \"hunks\": [...]}",
                        details={"field": "diff"})
    lines = split_lines(text)
    delta = 0  # how far the text has moved against the old numbering
    for index, hunk in enumerate(diff["hunks"]):
        try:
            start = int(hunk["startOld"]) - 1
            old_lines = list(hunk["linesOld"])
            new_lines = list(hunk["linesNew"])
        except (KeyError, TypeError, ValueError):
            raise ToolError("E_BAD_ARGS", f"hunk {index} is malformed",
                            details={"field": f"diff.hunks[{index}]"}) from None
        expected = start + delta
        at = _locate(lines, old_lines, expected)
        if at is None:
            found = lines[max(expected, 0):max(expected, 0) + len(old_lines)]
            details: dict[str, Any] = {"hunk": index, "expectedLine": expected + 1,
                                       "expectedLines": old_lines, "foundLines": found}
            if path is not None:
                details["path"] = path
            raise ToolError("E_CONFLICT", f"hunk {index} does not apply: the lines it changes "
                            f"are not in the file any more", details=details,
                            hint="Read the file again and make a new diff.")
        lines[at:at + len(old_lines)] = new_lines
        delta = at - start + len(new_lines) - len(old_lines)
    return "\n".join(lines)


def _locate(lines: list[str], needle: list[str], expected: int) -> int | None:
    size = len(needle)
    if size == 0:
        return min(max(expected, 0), len(lines))
    limit = len(lines) - size
    if limit < 0:
        return None
    for offset in range(0, max(expected, limit - expected, 0) + 1):
        for candidate in (expected - offset, expected + offset) if offset else (expected,):
            if 0 <= candidate <= limit and lines[candidate:candidate + size] == needle:
                return candidate
    return None
