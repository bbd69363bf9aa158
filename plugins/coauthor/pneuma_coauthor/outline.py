"""A LaTeX paper's outline: its headings in the order LaTeX reads them
(from the root through ``\\input`` and ``\\include``), numbered as LaTeX
numbers them, and which section and paragraph a line is in. What the change
list of a turn (changes.py) names its changes by.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from pneuma.api import split_lines


def is_blank(line: str) -> bool:
    return not line.strip()


_LEVELS = {"part": -1, "chapter": 0, "section": 1, "subsection": 2, "subsubsection": 3}
_HEADING = re.compile(r"^[ \t]*\\(part|chapter|section|subsection|subsubsection)(\*?)[ \t]*(?:\[[^\]]*\])?[ \t]*\{")
_INPUT = re.compile(r"\\(?:input|include)[ \t]*\{([^}]+)\}")
_COMMAND = re.compile(r"\\([A-Za-z]+)\*?")
_MAX_DEPTH = 8
_COMMENT = re.compile(r"(?<!\\)%")
_INERT = re.compile(r"^\s*(?:%.*|\\label\{[^}]*\}\s*(?:%.*)?)?$")  # a line that is no paragraph of its own
_APPENDIX = re.compile(r"^\s*\\appendix\b")
SECTION_SIGN = "\u00a7"  # what a top-level section's label starts with (escaped: see tests/test_architecture.py)


@dataclass(frozen=True)
class Heading:
    line: int  # 0-based
    level: int
    number: str | None  # "2.1", or None when unnumbered or outside the document
    title: str


def _braced(text: str, start: int) -> str:
    """The text inside the braces that open at ``text[start - 1]``."""
    depth = 1
    for at in range(start, len(text)):
        if text[at] == "{" and text[at - 1] != "\\":
            depth += 1
        elif text[at] == "}" and text[at - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start:at]
    return text[start:]


def plain_title(latex: str) -> str:
    """A heading's title as a person reads it (commands dropped, their
    arguments kept: ``\\emph{live} \\LaTeX{}`` → ``live LaTeX``)."""
    text = re.sub(r"\\(LaTeX|TeX)\b\{?\}?", r"\1", latex)
    text = _COMMAND.sub("", text)
    return re.sub(r"\s+", " ", text.replace("{", "").replace("}", "").replace("~", " ")).strip()


def _uncommented(line: str) -> str:
    return _COMMENT.split(line, maxsplit=1)[0] if "%" in line else line


def _heading_of(line: str) -> tuple[str, bool, str] | None:
    """(kind, starred, title) when ``line`` starts a heading."""
    match = _HEADING.match(line)
    if match and "\\" + match.group(1) in _uncommented(line):
        return match.group(1), bool(match.group(2)), plain_title(_braced(line, match.end()))
    return None


def _root(read: Mapping[str, str], paths: Sequence[str]) -> str | None:
    """The document's root: ``main.tex``, else the first file with ``\\documentclass``."""
    roots = [p for p in paths if p.endswith(".tex") and "\\documentclass" in read.get(p, "")]
    return next((p for p in roots if PurePosixPath(p).name == "main.tex"), roots[0] if roots else None)


def reading_order(read: Mapping[str, str], paths: Sequence[str]) -> Iterator[tuple[str, int, str]]:
    """(file, 0-based line, text) of every line of the document in the
    order LaTeX reads them: the root's lines, each ``\\input`` and
    ``\\include`` read where it stands (relative to the root's folder)."""
    root = _root(read, paths)
    if root is None:
        return
    base = PurePosixPath(root).parent
    seen: set[str] = set()

    def walk(path: str, depth: int) -> Iterator[tuple[str, int, str]]:
        if path in seen or depth > _MAX_DEPTH or path not in read:
            return
        seen.add(path)
        for index, line in enumerate(split_lines(read[path])):
            yield path, index, line
            if "\\in" not in line:  # neither \\input nor \\include: most lines
                continue
            for name in _INPUT.findall(_uncommented(line)):
                target = name.strip()
                target = target if target.endswith(".tex") else target + ".tex"
                yield from walk((base / target).as_posix(), depth + 1)

    yield from walk(root, 0)


def document_order(read: Mapping[str, str], paths: Sequence[str]) -> list[str]:
    """The ``.tex`` files of the document in the order LaTeX first reads them."""
    return list(dict.fromkeys(path for path, _, _ in reading_order(read, paths)))


class _Numbering:
    """LaTeX's heading counters (chapter to subsubsection; the top level in
    letters after ``\\appendix``)."""

    def __init__(self, has_chapters: bool) -> None:
        self.first = 0 if has_chapters else 1
        self.counters = [0, 0, 0, 0]
        self.in_appendix = False

    def appendix(self) -> None:
        self.in_appendix = True
        self.counters = [0, 0, 0, 0]

    def number(self, level: int, starred: bool) -> str | None:
        if starred or level < self.first:
            return None
        self.counters[level] += 1
        self.counters[level + 1:] = [0] * (3 - level)
        parts = [str(n) for n in self.counters[self.first:level + 1]]
        if self.in_appendix:
            parts[0] = _letter(self.counters[self.first])
        return ".".join(parts)


def numbered_outline(read: Mapping[str, str], paths: Sequence[str]) -> dict[str, list[Heading]]:
    """Every ``.tex`` file's headings; numbered as LaTeX numbers them when
    the file is part of the document."""
    found: list[tuple[str, int, tuple[str, bool, str] | None]] = []
    for path, index, line in reading_order(read, paths):
        if "\\appendix" in line and _APPENDIX.match(_uncommented(line)):
            found.append((path, index, None))
        elif heading := _heading_of(line):
            found.append((path, index, heading))
    numbering = _Numbering(any(h is not None and h[0] == "chapter" for _, _, h in found))
    outline: dict[str, list[Heading]] = {}
    for path, index, heading in found:
        if heading is None:
            numbering.appendix()
            continue
        kind, starred, title = heading
        level = _LEVELS[kind]
        outline.setdefault(path, []).append(Heading(index, level, numbering.number(level, starred), title))
    for path in paths:  # files outside the document: their headings, unnumbered
        if path.endswith(".tex") and path in read and path not in outline:
            outline[path] = [Heading(i, _LEVELS[h[0]], None, h[2])
                             for i, line in enumerate(split_lines(read[path])) if (h := _heading_of(line))]
    return outline


def _letter(number: int) -> str:
    return chr(ord("A") + number - 1) if 1 <= number <= 26 else str(number)


def heading_label(heading: Heading) -> str:
    if heading.level <= 1:
        return f"{SECTION_SIGN}{heading.number} {heading.title}" if heading.number else f"{SECTION_SIGN} {heading.title}"
    return f"{heading.number} {heading.title}" if heading.number else heading.title


def section_path(headings: Sequence[Heading], line: int) -> list[Heading]:
    """The headings in effect at ``line``, outermost first."""
    stack: list[Heading] = []
    for heading in headings:
        if heading.line > line:
            break
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
    return stack


def paragraph_number(lines: Sequence[str], headings: Sequence[Heading], line: int) -> int:
    """Which paragraph under its heading ``line`` is in (1-based; blocks of
    only comments and labels do not count)."""
    start = max((h.line + 1 for h in headings if h.line < line), default=0)
    number = 0
    in_block = False
    block_counts = False
    for index in range(start, min(line + 1, len(lines))):
        if is_blank(lines[index]):
            in_block = False
            continue
        if not in_block:
            in_block, block_counts = True, False
        if not block_counts and not _INERT.match(lines[index]):
            block_counts = True
            number += 1
    return max(number, 1)
