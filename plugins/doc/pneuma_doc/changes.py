"""A turn's changes in sections (issue 28, Pneuma's docs/hooks.md,
``register_change_describers``): in each Markdown file, a section added,
removed, renamed, edited or rewritten, named by its heading path
("Setup › Install"); a file added or removed as a whole.

A section is a heading and the lines up to the next heading of any level, so
an edit in "Install" does not also mark "Setup". Sections are matched across
the two states by level and title (the n-th "Notes" matches the n-th
"Notes"), so renaming a parent leaves its children matched. Headings are
ATX lines (``# Title``) outside fenced code and front matter: a small line
scanner is enough for that, and it costs microseconds per line.

Reverting one section puts its old lines back in the live file when the
rest of the file is as the turn left it; otherwise the whole file goes back.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pneuma.api import Change, ChangeDescriber, TurnFiles, text_of

MARKDOWN = (".md", ".markdown", ".mdx")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SAFE = re.compile(r"^[A-Za-z0-9:._/@#=+-]{1,200}$")
_SLUG = re.compile(r"[^a-z0-9]+")
_MARKS = ("#", "`", "~")
SEPARATOR = " › "


@dataclass(frozen=True)
class Section:
    """One heading and its own lines (up to the next heading), ``key``
    matching it across states; the preamble before the first heading has
    level 0 and an empty title."""

    key: tuple[int, str, int]
    path: tuple[str, ...]
    start: int
    lines: tuple[str, ...]

    @property
    def title(self) -> str:
        return self.key[1]


def sections(text: str) -> list[Section]:
    """The sections of a Markdown text, in document order."""
    lines = text.splitlines(keepends=True)
    starts: list[tuple[int, int, str]] = []  # (line index, level, title)
    fence = ""
    for index, line in enumerate(_after_front_matter(lines)):
        if line[:4].lstrip(" ")[:1] not in _MARKS:
            continue  # most lines: neither a heading nor a fence (saves the regexes)
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not line.strip()[len(opened.group(1)):].strip():
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        heading = _ATX.match(line.rstrip("\r\n"))
        if heading:
            starts.append((index, len(heading.group(1)), " ".join((heading.group(2) or "").split())))
    found: list[Section] = []
    if not starts or starts[0][0] > 0:
        end = starts[0][0] if starts else len(lines)
        found.append(Section((0, "", 0), (), 0, tuple(lines[:end])))
    seen: dict[tuple[int, str], int] = {}
    trail: list[tuple[int, str]] = []
    for n, (index, level, title) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        while trail and trail[-1][0] >= level:
            trail.pop()
        trail.append((level, title))
        count = seen.get((level, title), 0)
        seen[(level, title)] = count + 1
        found.append(Section((level, title, count), tuple(t for _, t in trail), index, tuple(lines[index:end])))
    return found


def _after_front_matter(lines: list[str]) -> list[str]:
    """The lines with YAML front matter blanked (its ``# comments`` are not headings)."""
    if not lines or lines[0].strip() != "---":
        return lines
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            return [""] * (end + 1) + lines[end + 1:]
    return lines


def _label(en: str, zh: str) -> dict[str, str]:
    return {"en": en, "zh-CN": zh}


def _where(path: str, section: Section, sole_title: bool) -> str:
    """"guide.md › Setup › Install": the file, then the heading path without
    the document's title when it has one ``#`` heading over everything."""
    if not section.path:
        return f"{path} (top)" if section.key[0] == 0 else path
    trail = section.path[1:] if sole_title and section.key[0] > 1 and len(section.path) > 1 else section.path
    return SEPARATOR.join((path, *trail))


def _sole_title(found: list[Section]) -> bool:
    return sum(1 for s in found if s.key[0] == 1) == 1


def _file_id(path: str) -> str:
    name = f"doc:{path}"
    if _SAFE.match(name) and len(name) < 150:
        return name
    return "doc:#" + hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def section_id(path: str, key: tuple[int, str, int]) -> str:
    slug = _SLUG.sub("-", key[1].lower()).strip("-")[:60]
    if not slug or slug.encode("ascii", "ignore").decode() != slug:
        slug = hashlib.sha256(key[1].encode("utf-8")).hexdigest()[:12] if key[1] else "top"
    return f"{_file_id(path)}#h{key[0]}-{slug}" + (f"-{key[2] + 1}" if key[2] else "")


def _locate(path: str, section: Section) -> dict[str, object]:
    return {"file": path, "heading": section.title} if section.title else {"file": path, "line": section.start + 1}


def _extent(old: Sequence[str], new: Sequence[str]) -> tuple[str, str]:
    """"edited" when most lines survive, "rewritten" when most are new."""
    body_old, body_new = set(old[1:]) - {"\n", ""}, [line for line in new[1:] if line.strip()]
    kept = sum(line in body_old for line in body_new)
    if body_new and kept * 2 < len(body_new) and len(body_old) > 0:
        return "rewritten", "已重写"
    return "edited", "已修改"


def describe(files: TurnFiles) -> list[Change]:
    changes: list[Change] = []
    for item in files.changed:
        if not item.path.lower().endswith(MARKDOWN):
            continue  # images and other files: the host's per-file changes
        if item.status != "modified":
            added = item.status == "added"
            changes.append(Change(_file_id(item.path), item.path,
                                  _label("file added", "新增文件") if added else _label("file removed", "删除文件"),
                                  "added" if added else "removed", (item.path,),
                                  {"file": item.path} if added else None))
            continue
        old, new = text_of(files.before(item.path)), text_of(files.after(item.path))
        if old is None or new is None:
            continue
        changes.extend(_describe_file(item.path, old, new))
    return changes


def _describe_file(path: str, old: str, new: str) -> list[Change]:
    before, after = sections(old), sections(new)
    if len(before) <= 1 and len(after) <= 1 and all(s.key[0] == 0 for s in (*before, *after)):
        return [Change(_file_id(path), path, _label("changed", "已修改"), "changed", (path,), {"file": path})]
    old_by_key = {s.key: s for s in before}
    new_keys = {s.key for s in after}
    unmatched_old = [s for s in before if s.key not in new_keys]
    renamed = _renames(unmatched_old, [s for s in after if s.key not in old_by_key])
    ordered: list[tuple[float, Change]] = []
    for position, section in enumerate(after):
        change_id = section_id(path, section.key)
        where = _where(path, section, _sole_title(after))
        if section.key in renamed:
            was = renamed[section.key]
            ordered.append((position, Change(change_id, where,
                                             _label(f"renamed from “{was.title}”", f"由“{was.title}”改名"),
                                             "renamed", (path,), _locate(path, section))))
        elif section.key not in old_by_key:
            ordered.append((position, Change(change_id, where, _label("added", "新增"), "added", (path,),
                                             _locate(path, section))))
        elif old_by_key[section.key].lines != section.lines:
            en, zh = _extent(old_by_key[section.key].lines, section.lines)
            ordered.append((position, Change(change_id, where, _label(en, zh), "changed", (path,),
                                             _locate(path, section))))
    gone = {was.key for was in renamed.values()}
    for section in unmatched_old:
        if section.key in gone:
            continue
        place = _place_after(before, section, after)
        ordered.append((place - 0.5, Change(section_id(path, section.key), _where(path, section, _sole_title(before)),
                                            _label("removed", "删除"), "removed", (path,), {"file": path})))
    ordered.sort(key=lambda pair: pair[0])
    return [change for _, change in ordered]


def _renames(old: list[Section], new: list[Section]) -> dict[tuple[int, str, int], Section]:
    """New sections that are an old one with another heading line (same
    level, same body): each new key with the old section it renames."""
    bodies: dict[tuple[int, tuple[str, ...]], Section] = {}
    for section in old:
        if section.key[0]:
            bodies.setdefault((section.key[0], section.lines[1:]), section)
    found = {}
    for section in new:
        match = bodies.pop((section.key[0], section.lines[1:]), None)
        if match is not None and section.key[0] and any(line.strip() for line in section.lines[1:]):
            found[section.key] = match
    return found


def _place_after(before: list[Section], section: Section, after: list[Section]) -> int:
    """The index in ``after`` just past the nearest section that preceded
    ``section`` before the turn and still exists (0: the start)."""
    keys = [s.key for s in after]
    for earlier in reversed(before[:before.index(section)]):
        if earlier.key in keys:
            return keys.index(earlier.key) + 1
    return 0


# --- reverting one section ----------------------------------------------------


def revert(files: TurnFiles, change: Change, current: Mapping[str, bytes | None]) -> dict[str, bytes | None]:
    """The file with only this section as it was before the turn, when the
    rest of the live file is as the turn left it; else the whole file as it
    was before."""
    path = change.files[0]
    whole = {path: files.before(path)}
    old, new, live = (text_of(files.before(path)), text_of(files.after(path)), text_of(current.get(path)))
    if change.id == _file_id(path) or old is None or new is None or live is None:
        return whole
    before, after, now = sections(old), sections(new), sections(live)
    target = next((s for s in after if section_id(path, s.key) == change.id), None)
    source = next((s for s in before if section_id(path, s.key) == change.id), None)
    if change.kind == "renamed" and target is not None:
        source = _renames([s for s in before if s.key not in {a.key for a in after}],
                          [s for s in after if s.key not in {b.key for b in before}]).get(target.key)
    if target is None and source is None:
        return whole
    others = [(s.key, s.lines) for s in after if s is not target]
    live_target = next((s for s in now if target is not None and s.key == target.key), None)
    if [(s.key, s.lines) for s in now if s is not live_target] != others:
        return whole  # the rest of the file moved on since the turn
    parts = [list(s.lines) for s in now]
    if live_target is not None:
        parts[now.index(live_target)] = list(source.lines) if source is not None else []
    elif source is not None:
        parts.insert(_place_after(before, source, now), list(source.lines))
    return {path: _join(parts).encode("utf-8")}


def _join(parts: list[list[str]]) -> str:
    """The parts' lines as one text, each non-empty part but the last ending
    with a newline (a section that was last may have had none)."""
    kept = [part for part in parts if part]
    for part in kept[:-1]:
        if not part[-1].endswith("\n"):
            part[-1] += "\n"
    return "".join(line for part in kept for line in part)


DESCRIBER = ChangeDescriber(mode="doc", describe=describe, revert=revert)
