"""Unified diffs: make, parse and apply them, in memory.

The patch is the exchange format between the agent and the person (docs/design/coauthor.md, "Patches"):
readable in review, storable in the log, and applicable only when its
context still matches, so a patch can never silently overwrite text it was
not computed from. Pure functions on strings; the use cases do the I/O.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

NO_EOL = "\\ No newline at end of file"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    """The text is not a unified diff we can use."""


class PatchConflict(PatchError):
    """A hunk's context does not match the file: applying would overwrite other text."""

    def __init__(self, path: str, hunk: int, line: int, expected: list[str], actual: list[str]):
        self.path, self.hunk, self.line, self.expected, self.actual = path, hunk, line, expected, actual
        super().__init__(f"{path}: hunk {hunk} does not apply at line {line}")


@dataclass
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    # (tag, text-with-its-newline): tag is ' ', '-' or '+'
    lines: list[tuple[str, str]] = field(default_factory=list)

    def old_lines(self) -> list[str]:
        return [t for tag, t in self.lines if tag in " -"]

    def new_lines(self) -> list[str]:
        return [t for tag, t in self.lines if tag in " +"]


@dataclass
class FilePatch:
    path: str  # workspace-relative, without a/ b/
    hunks: list[Hunk]
    creates: bool = False  # diffed from /dev/null
    deletes: bool = False  # diffed to /dev/null

    def changed_lines(self) -> tuple[int, int]:
        return (
            sum(1 for h in self.hunks for tag, _ in h.lines if tag == "+"),
            sum(1 for h in self.hunks for tag, _ in h.lines if tag == "-"),
        )


def _lines(text: str | None) -> list[str]:
    return [] if not text else text.splitlines(keepends=True)


def make_diff(path: str, old: str | None, new: str | None, context: int = 3) -> str:
    """``diff -u`` output with a/ b/ labels; '' when nothing changed."""
    if old == new:
        return ""
    a, b = _lines(old), _lines(new)
    out: list[str] = []
    for line in difflib.unified_diff(
        a,
        b,
        fromfile="/dev/null" if old is None else f"a/{path}",
        tofile="/dev/null" if new is None else f"b/{path}",
        n=context,
    ):
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\n") + "\n")
        elif line.endswith("\n"):
            out.append(line)
        else:  # last line of a file without a final newline
            out.append(line + "\n" + NO_EOL + "\n")
    return "".join(out)


def _strip_prefix(label: str) -> str | None:
    label = label.split("\t", 1)[0].strip()
    if label == "/dev/null":
        return None
    if label.startswith(("a/", "b/")):
        return label[2:]
    return label


def parse_patch(text: str, default_path: str | None = None) -> list[FilePatch]:
    """Parse one or more files' diffs. Lines before the first ``---`` (the
    ``# coauthor-patch`` header, ``diff``/``index`` lines) are ignored. A diff
    with bare hunks and no file labels applies to ``default_path``."""
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        bare = line.rstrip("\r\n")
        if bare.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old = _strip_prefix(bare[4:])
            new = _strip_prefix(lines[i + 1].rstrip("\r\n")[4:])
            path = new or old
            if path is None:
                raise PatchError("a diff between /dev/null and /dev/null")
            current = FilePatch(path=path, hunks=[], creates=old is None, deletes=new is None)
            patches.append(current)
            hunk = None
            i += 2
            continue
        match = _HUNK.match(bare)
        if match:
            if current is None:
                if default_path is None:
                    raise PatchError("hunk without a file header (--- a/PATH / +++ b/PATH)")
                current = FilePatch(path=default_path, hunks=[])
                patches.append(current)
            a, alen, b, blen = match.groups()
            hunk = Hunk(int(a), int(alen) if alen is not None else 1, int(b), int(blen) if blen is not None else 1)
            current.hunks.append(hunk)
            i += 1
            continue
        if hunk is not None and bare.startswith("\\"):
            if hunk.lines:  # the previous line has no newline at end of file
                tag, t = hunk.lines[-1]
                hunk.lines[-1] = (tag, t.rstrip("\n"))
            i += 1
            continue
        if hunk is not None and line[:1] in (" ", "-", "+") and not _hunk_full(hunk):
            body = line[1:]
            if not body.endswith("\n"):
                body += "\n"
            hunk.lines.append((line[0], body))
        elif hunk is not None and bare == "" and not _hunk_full(hunk):
            hunk.lines.append((" ", "\n"))  # an editor stripped the context line's leading space
        i += 1
    for fp in patches:
        for n, h in enumerate(fp.hunks, 1):
            if len(h.old_lines()) != h.old_len or len(h.new_lines()) != h.new_len:
                raise PatchError(
                    f"{fp.path}: hunk {n} says -{h.old_len} +{h.new_len} lines but has "
                    f"-{len(h.old_lines())} +{len(h.new_lines())}"
                )
    if not patches or not any(fp.hunks or fp.creates or fp.deletes for fp in patches):
        raise PatchError("no hunks found: expected a unified diff (diff -u)")
    return patches


def _hunk_full(h: Hunk) -> bool:
    return len(h.old_lines()) >= h.old_len and len(h.new_lines()) >= h.new_len


def apply_file_patch(text: str | None, fp: FilePatch, max_offset: int = 0) -> str | None:
    """Apply one file's hunks, returning the new text (None: the file is deleted).

    Every context and removed line must match exactly; with ``max_offset`` a
    hunk may also match that many lines above or below its stated position
    (``patch``'s offset, never its fuzz). A mismatch raises PatchConflict and
    nothing is written by anyone.
    """
    if fp.creates and text is not None and text != "":
        raise PatchConflict(fp.path, 1, 1, [], _lines(text)[:3])
    source = _lines(text)
    result: list[str] = []
    cursor = 0  # index in source up to which lines were copied
    for n, h in enumerate(fp.hunks, 1):
        old = h.old_lines()
        want = h.old_start - 1 if h.old_len else h.old_start  # pure insertion: after line old_start
        at = _find(source, old, want, cursor, max_offset)
        if at is None:
            actual = source[max(want, 0) : max(want, 0) + max(len(old), 1)]
            raise PatchConflict(fp.path, n, h.old_start, old, actual)
        result.extend(source[cursor:at])
        result.extend(h.new_lines())
        cursor = at + len(old)
    result.extend(source[cursor:])
    if fp.deletes:
        if result:
            raise PatchConflict(fp.path, len(fp.hunks), 1, [], result[:3])
        return None
    return "".join(result)


def _find(source: list[str], old: list[str], want: int, floor: int, max_offset: int) -> int | None:
    for delta in range(0, max_offset + 1):
        for at in ((want,) if delta == 0 else (want - delta, want + delta)):
            if at < floor or at + len(old) > len(source):
                continue
            if source[at : at + len(old)] == old:
                return at
    return None


def summarize(patches: list[FilePatch]) -> str:
    parts = []
    for fp in patches:
        added, removed = fp.changed_lines()
        parts.append(f"{fp.path} +{added} -{removed}")
    return ", ".join(parts)
