"""What changed between two recorded states of the workspace, and one
file's change as a unified text diff (from ``pneuma.tools.diff``'s hunks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pneuma.checkpoints.model import FileMap
from pneuma.tools.diff import line_diff


@dataclass
class Changes:
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.added) + len(self.modified) + len(self.removed)

    def paths(self) -> set[str]:
        return set(self.added) | set(self.modified) | set(self.removed)

    def to_json(self) -> dict[str, Any]:
        return {"added": self.added, "modified": self.modified, "removed": self.removed}

    def summary(self) -> str:
        """"+2 ~1 -0" style, or "no changes"."""
        if not self.count:
            return "no changes"
        return f"+{len(self.added)} ~{len(self.modified)} -{len(self.removed)}"


def differs(old: FileMap, new: FileMap, path: str) -> bool:
    a, b = old.get(path), new.get(path)
    if a is None or b is None:
        return (a is None) != (b is None)
    if a.hash is None and b.hash is None:
        # Neither kept: size and mtime are all there is to go by.
        return (a.size, a.mtime_ns, a.mode) != (b.size, b.mtime_ns, b.mode)
    return not a.same_content(b)


def changes(old: FileMap, new: FileMap) -> Changes:
    result = Changes()
    for path in sorted(old.keys() | new.keys()):
        if path not in old:
            result.added.append(path)
        elif path not in new:
            result.removed.append(path)
        elif differs(old, new, path):
            result.modified.append(path)
    return result


def unified_diff(path: str, old: str | None, new: str | None, context: int = 3) -> str:
    """A unified diff of one file's text (``None``: the file does not exist
    on that side), with ``a/``/``b/`` headers as git prints them."""
    head = [f"--- {'/dev/null' if old is None else 'a/' + path}",
            f"+++ {'/dev/null' if new is None else 'b/' + path}"]
    old_text, new_text = old or "", new or ""
    if old_text == new_text:
        return ""
    old_lines = [] if old is None or old == "" else old.split("\n")
    new_lines = [] if new is None or new == "" else new.split("\n")
    hunks: list[dict[str, Any]] = \
        line_diff(old_text, new_text, context=context)["hunks"] if old_lines and new_lines \
        else [{"startOld": 1 if old_lines else 0, "lenOld": len(old_lines),
               "startNew": 1 if new_lines else 0, "lenNew": len(new_lines),
               "linesOld": old_lines, "linesNew": new_lines, "whole": True}]
    out = list(head)
    for hunk in hunks:
        out.append(_hunk_header(hunk))
        if hunk.get("whole"):
            out.extend("-" + line for line in hunk["linesOld"])
            out.extend("+" + line for line in hunk["linesNew"])
        else:
            out.extend(_hunk_body(hunk["linesOld"], hunk["linesNew"]))
    return "\n".join(out) + "\n"


def _hunk_header(hunk: dict[str, Any]) -> str:
    def span(start: int, length: int) -> str:
        # An empty side is named by the line before it, as diff -u does.
        if length == 0:
            return f"{max(start - 1, 0)},0"
        return str(start) if length == 1 else f"{start},{length}"
    return f"@@ -{span(hunk['startOld'], hunk['lenOld'])} " \
           f"+{span(hunk['startNew'], hunk['lenNew'])} @@"


def _hunk_body(old: list[str], new: list[str]) -> list[str]:
    """The lines of one hunk with context kept as " ", from the two sides'
    lines (``line_diff`` with context gives each hunk both sides whole)."""
    from difflib import SequenceMatcher

    lines: list[str] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            lines.extend(" " + line for line in old[i1:i2])
            continue
        lines.extend("-" + line for line in old[i1:i2])
        lines.extend("+" + line for line in new[j1:j2])
    return lines
