"""A turn's changes in a LaTeX paper's own terms (issue 28, items 1 and 2).

Each ``.tex`` file is compared line by line (``line_hunks``), and every hunk
is named by the paper's outline at its place: the ``\\section`` /
``\\subsection`` headings above it, numbered as LaTeX numbers them when the
file is part of the document (followed from the root's ``\\input`` and
``\\include``), and the paragraph under its heading: "<section sign>2 Method
› 2.1 Data: paragraph 3 changed". A hunk that adds, removes or retitles a heading says
so. In ``.bib`` files the hunks are named by the entries' keys: "refs.bib:
entry knuth1984 added". Other files (OUTLINE.md, figures) are left to the
host's per-file fallback.

Reverting one change puts back only its lines (``line_hunks.revert_hunk``),
so the turn's other changes in the same file stay; a file the turn added or
removed goes back whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from pneuma.api import Change, ChangeDescriber, FileChange, TurnFiles, text_of
from pneuma_coauthor.line_hunks import (
    Hunk,
    changed_hunks,
    is_blank,
    revert_hunk,
    split_lines,
)

_LEVELS = {"part": -1, "chapter": 0, "section": 1, "subsection": 2, "subsubsection": 3}
_HEADING = re.compile(r"^[ \t]*\\(part|chapter|section|subsection|subsubsection)(\*?)[ \t]*(?:\[[^\]]*\])?[ \t]*\{")
_INPUT = re.compile(r"\\(?:input|include)[ \t]*\{([^}]+)\}")
_BIB_ENTRY = re.compile(r"^[ \t]*@[ \t]*(\w+)[ \t]*[{(][ \t]*([^,\s]+)[ \t]*,", re.M)
_INERT = re.compile(r"^\s*(?:%.*|\\label\{[^}]*\}\s*(?:%.*)?)?$")  # a line that is no paragraph of its own
_COMMAND = re.compile(r"\\([A-Za-z]+)\*?")
_MAX_DEPTH = 8
_COMMENT = re.compile(r"(?<!\\)%")
_APPENDIX = re.compile(r"^\s*\\appendix\b")
SECTION_SIGN = "\u00a7"  # what a top-level section's label starts with (escaped: see tests/test_architecture.py)


@dataclass(frozen=True)
class Heading:
    line: int  # 0-based
    level: int
    number: str | None  # "2.1", or None when unnumbered or outside the document
    title: str


# --- the outline -------------------------------------------------------------------------


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


def _heading_label(heading: Heading) -> str:
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


# --- describing --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Planned:
    change: Change
    path: str
    hunk: Hunk | None  # None: the whole file


def _where(path: str, stack: Sequence[Heading]) -> str:
    return " › ".join(_heading_label(h) for h in stack) if stack else path


def _tex_hunk(path: str, before: list[str], after: list[str], hunk: Hunk,
              outline_before: Sequence[Heading], outline_after: Sequence[Heading]) -> _Planned:
    old_heads = [h for h in outline_before if hunk.i1 <= h.line < hunk.i2]
    new_heads = [h for h in outline_after if hunk.j1 <= h.line < hunk.j2]
    at = min(hunk.j1, max(len(after) - 1, 0))
    locate = {"file": path, "line": _first_text_line(after, hunk)}
    en: str
    zh: str
    kind = "changed"
    if new_heads and not old_heads:
        stack = section_path(outline_after, new_heads[0].line)
        en, zh, kind = ("section added", "新增一节", "added") if len(new_heads) == 1 else \
            (f"{len(new_heads)} sections added", f"新增 {len(new_heads)} 节", "added")
    elif old_heads and not new_heads:
        stack = section_path(outline_after, max(at - 1, 0)) if at else []
        titles = ", ".join(f"“{h.title}”" for h in old_heads)
        en, zh, kind = f"section {titles} removed", f"删除了 {titles}", "removed"
    elif old_heads and new_heads:
        stack = section_path(outline_after, new_heads[0].line)
        only_titles = (hunk.i2 - hunk.i1 == len(old_heads) and hunk.j2 - hunk.j1 == len(new_heads))
        if only_titles and len(old_heads) == 1 and len(new_heads) == 1:
            en, zh, kind = f"retitled (was “{old_heads[0].title}”)", f"改了标题（原为“{old_heads[0].title}”）", "renamed"
        else:
            en, zh = "rewritten", "重写"
    else:
        stack = section_path(outline_after, at)
        en, zh, kind = _paragraph_words(before, after, hunk, outline_after)
    where = _where(path, stack)
    change = Change(id=f"tex:{path}:{hunk.j1 + 1}", where=where, what={"en": en, "zh-CN": zh},
                    kind=kind, files=(path,), locate=locate)  # type: ignore[arg-type]
    return _Planned(change, path, hunk)


def _first_text_line(after: Sequence[str], hunk: Hunk) -> int:
    """The 1-based line to show for a hunk: its first line with text, else
    where its lines were."""
    for index in range(hunk.j1, hunk.j2):
        if not is_blank(after[index]):
            return index + 1
    return min(hunk.j1, max(len(after) - 1, 0)) + 1


def _paragraph_words(before: list[str], after: list[str], hunk: Hunk,
                     outline_after: Sequence[Heading]) -> tuple[str, str, str]:
    old_text = any(not is_blank(line) for line in before[hunk.i1:hunk.i2])
    new_text = any(not is_blank(line) for line in after[hunk.j1:hunk.j2])
    first = paragraph_number(after, outline_after, hunk.j1 if new_text else max(hunk.j1 - 1, 0))
    last = paragraph_number(after, outline_after, max(hunk.j2 - 1, hunk.j1))
    if new_text and not old_text:
        return (f"paragraph {first} added", f"新增第 {first} 段", "added")
    if old_text and not new_text:
        return (f"a paragraph removed after paragraph {first}" if hunk.j1 else "a paragraph removed",
                f"删除了第 {first} 段之后的一段" if hunk.j1 else "删除了一段", "removed")
    if last > first:
        return (f"paragraphs {first}–{last} changed", f"第 {first}–{last} 段修改", "changed")
    return (f"paragraph {first} changed", f"第 {first} 段修改", "changed")


def _bib_entries(lines: Sequence[str]) -> list[tuple[int, str]]:
    """(line, key) of each entry's first line (not @comment, @string, @preamble)."""
    return [(index, match.group(2)) for index, line in enumerate(lines)
            if (match := _BIB_ENTRY.match(line)) and match.group(1).lower() not in ("comment", "string", "preamble")]


def _keys_in(entries: Sequence[tuple[int, str]], start: int, end: int) -> list[str]:
    """Keys of the entries that lines ``start``..``end`` (excluded) touch."""
    keys = []
    for n, (line, key) in enumerate(entries):
        stop = entries[n + 1][0] if n + 1 < len(entries) else 1 << 30
        if line < end and stop > start:
            keys.append(key)
    return keys


def _entry_texts(lines: Sequence[str], entries: Sequence[tuple[int, str]]) -> dict[str, str]:
    """Each entry's text (to the next entry, blank lines trimmed) by key."""
    texts: dict[str, str] = {}
    for n, (line, key) in enumerate(entries):
        stop = entries[n + 1][0] if n + 1 < len(entries) else len(lines)
        texts.setdefault(key, "".join(lines[line:stop]).strip())
    return texts


def _bib_hunk(path: str, before: list[str], after: list[str], hunk: Hunk) -> _Planned:
    old_entries, new_entries = _bib_entries(before), _bib_entries(after)
    old_texts, new_texts = _entry_texts(before, old_entries), _entry_texts(after, new_entries)
    old_keys = {k for _, k in old_entries}
    new_keys = {k for _, k in new_entries}
    touched = dict.fromkeys(_keys_in(old_entries, hunk.i1, hunk.i2) + _keys_in(new_entries, hunk.j1, hunk.j2))
    added = [k for k in touched if k in new_keys and k not in old_keys]
    removed = [k for k in touched if k in old_keys and k not in new_keys]
    changed = [k for k in touched if k in old_keys and k in new_keys and old_texts[k] != new_texts[k]]
    en_parts, zh_parts = [], []
    for keys, word_en, word_zh in ((added, "added", "新增"), (removed, "removed", "删除"), (changed, "changed", "修改")):
        if keys:
            noun = "entry" if len(keys) == 1 else "entries"
            en_parts.append(f"{noun} {', '.join(keys)} {word_en}")
            zh_parts.append(f"{word_zh}条目 {', '.join(keys)}")
    kind = "added" if added and not removed and not changed else "removed" if removed and not added and not changed \
        else "changed"
    change = Change(id=f"bib:{path}:{hunk.j1 + 1}", where=path,
                    what={"en": "; ".join(en_parts) or "changed", "zh-CN": "；".join(zh_parts) or "修改"},
                    kind=kind, files=(path,),  # type: ignore[arg-type]
                    locate={"file": path, "line": _first_text_line(after, hunk)})
    return _Planned(change, path, hunk)


def _whole_file(item: FileChange) -> _Planned:
    word = {"added": ("added", "新增", "added"), "deleted": ("removed", "删除", "removed"),
            "modified": ("changed", "修改", "changed")}[item.status]
    change = Change(id=f"file:{item.path}", where=item.path, what={"en": word[0], "zh-CN": word[1]},
                    kind=word[2], files=(item.path,),  # type: ignore[arg-type]
                    locate={"file": item.path, "line": 1} if item.status != "deleted" else None)
    return _Planned(change, item.path, None)


def _texts(files: TurnFiles, after: bool) -> dict[str, str]:
    paths = files.paths_after() if after else files.paths_before()
    read = files.after if after else files.before
    texts: dict[str, str] = {}
    for path in paths:
        if path.endswith(".tex"):
            text = text_of(read(path))
            if text is not None:
                texts[path] = text
    return texts


def plan(files: TurnFiles) -> list[_Planned]:
    """Every change of the turn with the lines it covers, in the order
    LaTeX reads them."""
    wanted = [item for item in files.changed if item.path.endswith((".tex", ".bib"))]
    if not wanted:
        return []
    before_texts, after_texts = _texts(files, False), _texts(files, True)
    outline_before = numbered_outline(before_texts, list(before_texts))
    outline_after = numbered_outline(after_texts, list(after_texts))
    planned: list[_Planned] = []
    for item in wanted:
        old = text_of(files.before(item.path))
        new = text_of(files.after(item.path))
        if item.status != "modified" or old is None or new is None:
            planned.append(_whole_file(item))
            continue
        before, after = split_lines(old), split_lines(new)
        for hunk in changed_hunks(before, after):
            if item.path.endswith(".bib"):
                planned.append(_bib_hunk(item.path, before, after, hunk))
            else:
                planned.append(_tex_hunk(item.path, before, after, hunk, outline_before.get(item.path, []),
                                         outline_after.get(item.path, [])))
    # where LaTeX reads each change (an \input file's in the middle of
    # main.tex's); files outside the document after it, by path
    reading = {(path, line): n for n, (path, line, _) in enumerate(reading_order(after_texts, list(after_texts)))}
    last = {path: len(split_lines(text)) - 1 for path, text in after_texts.items()}

    def position(item: _Planned) -> tuple[int, str, int]:
        line = item.hunk.j1 if item.hunk is not None else 0
        at = reading.get((item.path, max(min(line, last.get(item.path, 0)), 0)))
        return (at if at is not None else len(reading), item.path, line)

    return sorted(planned, key=position)


def describe(files: TurnFiles) -> Sequence[Change]:
    return [item.change for item in plan(files)]


def revert(files: TurnFiles, change: Change, current: Mapping[str, bytes | None]) -> Mapping[str, bytes | None]:
    """Only ``change`` undone: its lines back in the file as it is now."""
    found = next((item for item in plan(files) if item.change.id == change.id), None)
    if found is None or found.hunk is None:
        return {path: files.before(path) for path in change.files}
    before, after = text_of(files.before(found.path)), text_of(files.after(found.path))
    now = text_of(current.get(found.path))
    if before is None or after is None or now is None:
        raise ValueError(f"{found.path} is no longer a text file: revert the whole file instead")
    return {found.path: revert_hunk(split_lines(before), split_lines(after), found.hunk, now).encode("utf-8")}


DESCRIBER = ChangeDescriber(mode="coauthor", describe=describe, revert=revert)
