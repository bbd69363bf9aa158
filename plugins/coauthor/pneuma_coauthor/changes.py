"""A turn's changes in a LaTeX paper's own terms (issue 28, items 1 and 2).

Each ``.tex`` file is compared line by line (``line_hunks``), and every hunk
is named by the paper's outline at its place: the ``\\section`` /
``\\subsection`` headings above it, numbered as LaTeX numbers them when the
file is part of the document (followed from the root's ``\\input`` and
``\\include``; outline.py), and the paragraph under its heading: "<section
sign>2 Method › 2.1 Data: paragraph 3 changed". A hunk that adds, removes or
retitles a heading says so. In ``.bib`` files the hunks are named by the
entries' keys: "refs.bib: entry knuth1984 added". Other files (OUTLINE.md,
figures) are left to the host's per-file fallback.

Reverting one change puts back only its lines (``line_hunks.revert_hunk``),
so the turn's other changes in the same file stay; a file the turn added or
removed goes back whole.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pneuma.api import (
    Change,
    ChangeDescriber,
    FileChange,
    Hunk,
    TurnFiles,
    changed_hunks,
    revert_hunk,
    split_lines,
    text_of,
)
from pneuma_coauthor.outline import (
    Heading,
    heading_label,
    is_blank,
    numbered_outline,
    paragraph_number,
    reading_order,
    section_path,
)

_BIB_ENTRY = re.compile(r"^[ \t]*@[ \t]*(\w+)[ \t]*[{(][ \t]*([^,\s]+)[ \t]*,", re.M)


@dataclass(frozen=True)
class _Planned:
    change: Change
    path: str
    hunk: Hunk | None  # None: the whole file


def _where(path: str, stack: Sequence[Heading]) -> str:
    return " › ".join(heading_label(h) for h in stack) if stack else path


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
