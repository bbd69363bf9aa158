"""A turn's changes in slides (issue 28, Pneuma's docs/hooks.md,
``register_change_describers``): slide N added, removed, moved, retitled,
its text or layout changed; the theme or the deck's title changed.

The deck is ``manifest.json`` (``slides: [{file, title}]``, the array order
is the deck order) with one HTML fragment per slide and ``theme.css`` (the
skill's "The workspace"). Slide numbers are positions in the deck after the
turn (a removed slide: its position before). A move is a change of position
that adds and removes do not explain: the slides outside a longest run kept
in the same relative order.

Several changes share ``manifest.json`` (a retitle and a move), and a
retitle shares the slide's file with its other edits, so ``revert`` splits
them: it edits the live manifest (or the heading of the live slide) to undo
only the one change.
"""

from __future__ import annotations

import bisect
import hashlib
import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pneuma.api import Change, ChangeDescriber, TurnFiles, describe_files, text_of

MANIFEST = "manifest.json"
THEME = "theme.css"
_HEADING = re.compile(r"<(h[1-6])\b[^>]*>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")  # comments and scripts are rare in a slide: good enough
_SAFE_ID = re.compile(r"^[A-Za-z0-9:._/@#=+-]{1,160}$")


@dataclass
class _Deck:
    """One state of the deck: the parsed manifest and its slide entries."""

    data: dict[str, Any]
    files: list[str] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)

    def position(self, file: str) -> int:
        return self.files.index(file) + 1


class _BrokenManifest(Exception):
    pass


def _normal(path: str) -> str:
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


def _entry_file(entry: Any) -> str:
    raw = entry if isinstance(entry, str) else entry.get("file") if isinstance(entry, dict) else None
    return _normal(raw) if isinstance(raw, str) else ""


def _parse_deck(content: bytes | None) -> _Deck:
    """The deck of one state; an absent manifest is an empty deck."""
    if content is None:
        return _Deck({"slides": []})
    try:
        data = json.loads(text_of(content) or "")
    except ValueError as exc:
        raise _BrokenManifest(str(exc)) from exc
    if not isinstance(data, dict) or not isinstance(data.get("slides"), list):
        raise _BrokenManifest("manifest.json has no slides array")
    deck = _Deck(data)
    for entry in data["slides"]:
        file = _entry_file(entry)
        if file and file not in deck.titles:
            deck.files.append(file)
            deck.titles[file] = str(entry.get("title") or "") if isinstance(entry, dict) else ""
    return deck


def _moved(before: Sequence[str], after: Sequence[str]) -> set[str]:
    """The slides of both orders that sit outside a longest subsequence kept
    in order: the fewest slides whose moves explain the new order."""
    old = {file: i for i, file in enumerate(before)}
    common = [file for file in after if file in old]
    ranks = [old[file] for file in common]
    tails: list[int] = []  # tails[k]: index in ranks ending the best run of length k+1
    tail_ranks: list[int] = []
    parent = [-1] * len(ranks)
    for i, rank in enumerate(ranks):
        k = bisect.bisect_left(tail_ranks, rank)
        parent[i] = tails[k - 1] if k else -1
        if k == len(tails):
            tails.append(i)
            tail_ranks.append(rank)
        else:
            tails[k] = i
            tail_ranks[k] = rank
    kept: set[str] = set()
    i = tails[-1] if tails else -1
    while i >= 0:
        kept.add(common[i])
        i = parent[i]
    return {file for file in common if file not in kept}


def _text_and_markup(fragment: str) -> tuple[str, list[str]]:
    """A fragment's visible text (whitespace collapsed) and its tags with
    their attributes (whitespace inside a tag collapsed). Regular
    expressions rather than html.parser: a slide is markup the agent wrote,
    and this is about ten times faster on a 50-slide deck."""
    return _plain(fragment), [" ".join(tag.split()) for tag in _TAG.findall(fragment)]


def _heading(content: str) -> re.Match[str] | None:
    return _HEADING.search(content)


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", fragment)).split())


def _label(en: str, zh: str) -> dict[str, str]:
    return {"en": en, "zh-CN": zh}


def _slide_where(number: int) -> dict[str, str]:
    return _label(f"Slide {number}", f"第 {number} 页")


def _id(file: str, what: str) -> str:
    name = f"slide:{file}:{what}"
    if _SAFE_ID.match(name):
        return name
    return f"slide:#{hashlib.sha256(file.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}:{what}"


@dataclass(frozen=True)
class _SlideEdit:
    """How a slide's own file changed: its heading's text, the rest."""

    heading: bool
    text: bool
    layout: bool


def _slide_edit(before: str | None, after: str | None) -> _SlideEdit:
    if before is None or after is None or before == after:
        return _SlideEdit(False, False, False)
    old_head, new_head = _heading(before), _heading(after)
    heading = bool(old_head and new_head and _plain(old_head.group(2)) != _plain(new_head.group(2)))
    if heading and old_head and new_head:
        before = before[:old_head.start(2)] + before[old_head.end(2):]
        after = after[:new_head.start(2)] + after[new_head.end(2):]
    (old_text, old_markup), (new_text, new_markup) = _text_and_markup(before), _text_and_markup(after)
    return _SlideEdit(heading, old_text != new_text, old_markup != new_markup)


def describe(files: TurnFiles) -> list[Change]:
    """The turn's changes in slide order: deck-wide ones first, then each
    slide by its number."""
    changed = {item.path: item.status for item in files.changed}
    try:
        old, new = _parse_deck(files.before(MANIFEST)), _parse_deck(files.after(MANIFEST))
    except _BrokenManifest:
        return describe_files(files)
    ordered: list[tuple[float, Change]] = []
    if THEME in changed:
        ordered.append((0, Change("slide:theme", _label("Theme", "主题"), _label("changed", "已修改"),
                                  "changed", (THEME,), None)))
    ordered.extend((0, c) for c in _deck_fields(old, new))
    moved = _moved(old.files, new.files)
    for file in new.files:
        number = new.position(file)
        if file not in old.titles:
            own = (file,) if changed.get(file) == "added" else ()
            ordered.append((number, Change(_id(file, "added"), _slide_where(number), _label("added", "新增"),
                                           "added", (MANIFEST, *own), {"file": file})))
            continue
        ordered.extend((number, c) for c in _kept_slide(files, file, old, new, file in moved, changed))
    for file in old.files:
        if file not in new.titles:
            number = old.position(file)
            own = (file,) if changed.get(file) == "deleted" else ()
            ordered.append((number + 0.5, Change(_id(file, "removed"), _slide_where(number),
                                                 _label("removed", "删除"), "removed", (MANIFEST, *own))))
    ordered.sort(key=lambda pair: pair[0])
    return [change for _, change in ordered]


def _deck_fields(old: _Deck, new: _Deck) -> list[Change]:
    keys = {key for key in (*old.data, *new.data) if key != "slides"
            and old.data.get(key) != new.data.get(key)}
    changes = []
    if "title" in keys:
        changes.append(Change("slide:deck:title", _label("Deck", "演示文稿"), _label("title changed", "标题已修改"),
                              "changed", (MANIFEST,), None))
    if keys - {"title"}:
        changes.append(Change("slide:deck:settings", _label("Theme", "主题"),
                              _label("settings changed in manifest.json", "manifest.json 中的设置已修改"),
                              "changed", (MANIFEST,), None))
    return changes


def _kept_slide(files: TurnFiles, file: str, old: _Deck, new: _Deck, moved: bool,
                changed: Mapping[str, str]) -> list[Change]:
    number = new.position(file)
    where = _slide_where(number)
    locate = {"file": file}
    edit = _slide_edit(text_of(files.before(file)), text_of(files.after(file))) \
        if changed.get(file) == "modified" else _SlideEdit(False, False, False)
    changes = []
    title_files = ((MANIFEST,) if old.titles[file] != new.titles[file] else ()) + ((file,) if edit.heading else ())
    if title_files:
        changes.append(Change(_id(file, "title"), where, _label("title changed", "标题已修改"), "changed",
                              title_files, locate))
    if edit.text or edit.layout:
        en = "text and layout changed" if edit.text and edit.layout else \
            "text changed" if edit.text else "layout changed"
        zh = "文字和版式已修改" if edit.text and edit.layout else "文字已修改" if edit.text else "版式已修改"
        changes.append(Change(_id(file, "content"), where, _label(en, zh), "changed", (file,), locate))
    elif changed.get(file) == "modified" and not edit.heading:
        # Only whitespace or the source's formatting: nothing shows, but the file changed.
        en, zh = "source reformatted", "源码格式已调整"
        changes.append(Change(_id(file, "content"), where, _label(en, zh), "changed", (file,), locate))
    if moved:
        was = old.position(file)
        changes.append(Change(_id(file, "moved"), where,
                              _label(f"moved from {was} to {number}", f"从第 {was} 页移到第 {number} 页"),
                              "moved", (MANIFEST,), locate))
    return changes


# --- reverting one change -----------------------------------------------------


def revert(files: TurnFiles, change: Change, current: Mapping[str, bytes | None]) -> dict[str, bytes | None]:
    """Each file of ``change`` with only that change undone."""
    if not change.id.startswith("slide:"):  # described per file (a manifest that did not parse)
        return {path: files.before(path) for path in change.files}
    kind = change.id.rsplit(":", 1)[-1]
    if change.id in ("slide:deck:title", "slide:deck:settings"):
        kind = change.id
    slide = next((path for path in change.files if path != MANIFEST), None) or _file_of(files, change)
    answer: dict[str, bytes | None] = {}
    for path in change.files:
        if path == MANIFEST:
            answer[path] = _revert_manifest(files, kind, slide, current.get(path))
        elif kind == "title":
            answer[path] = _swap_heading(current.get(path), files.before(path))
        elif kind == "content":
            answer[path] = _swap_heading(files.before(path), current.get(path)) \
                if _slide_edit(text_of(files.before(path)), text_of(files.after(path))).heading \
                else files.before(path)
        else:  # an added or removed slide's own file
            answer[path] = files.before(path)
    return answer


def _file_of(files: TurnFiles, change: Change) -> str:
    if change.locate and isinstance(change.locate.get("file"), str):
        return str(change.locate["file"])
    for deck in (files.before(MANIFEST), files.after(MANIFEST)):
        for file in _parse_deck(deck).files:
            if change.id == _id(file, change.id.rsplit(":", 1)[-1]):
                return file
    return ""


def _swap_heading(target: bytes | None, source: bytes | None) -> bytes | None:
    """``target`` with its first heading's content taken from ``source``."""
    target_text, source_text = text_of(target), text_of(source)
    if target_text is None or source_text is None:
        return target
    into, take = _heading(target_text), _heading(source_text)
    if into is None or take is None:
        return target
    return (target_text[:into.start(2)] + take.group(2) + target_text[into.end(2):]).encode("utf-8")


def _revert_manifest(files: TurnFiles, kind: str, file: str, live: bytes | None) -> bytes | None:
    try:
        old = _parse_deck(files.before(MANIFEST))
        data = _parse_deck(live).data if live is not None else {"slides": []}
    except _BrokenManifest:  # edited by hand since into something else: the whole file goes back
        return files.before(MANIFEST)
    entries: list[Any] = list(data["slides"])
    if kind == "slide:deck:title":
        _restore_keys(data, old.data, {"title"})
    elif kind == "slide:deck:settings":
        _restore_keys(data, old.data, {k for k in (*data, *old.data) if k not in ("slides", "title")})
    elif kind == "added":
        entries = [e for e in entries if _entry_file(e) != file]
    elif kind == "title":
        for entry in entries:
            if isinstance(entry, dict) and _entry_file(entry) == file:
                entry["title"] = old.titles.get(file, entry.get("title"))
    elif kind in ("removed", "moved"):
        entry = _old_entry(old, file) if kind == "removed" else \
            next((e for e in entries if _entry_file(e) == file), None)
        if entry is not None:
            entries = [e for e in entries if _entry_file(e) != file]
            entries.insert(_old_place(old.files, file, [_entry_file(e) for e in entries]), entry)
    data["slides"] = entries
    return format_manifest(data).encode("utf-8")


def _restore_keys(data: dict[str, Any], old: dict[str, Any], keys: set[str]) -> None:
    for key in keys:
        if key in old:
            data[key] = old[key]
        else:
            data.pop(key, None)


def _old_entry(old: _Deck, file: str) -> Any:
    return next((e for e in old.data["slides"] if _entry_file(e) == file), None)


def _old_place(before: Sequence[str], file: str, now: Sequence[str]) -> int:
    """Where ``file`` goes back in ``now``: after the nearest slide that
    preceded it before the turn and is still in the deck."""
    for earlier in reversed(before[:before.index(file)]):
        if earlier in now:
            return list(now).index(earlier) + 1
    return 0


def format_manifest(data: Mapping[str, Any]) -> str:
    """The manifest as the slide viewer writes it (static/slide-doc.js,
    ``formatManifest``): two-space indent, each flat slide entry on one line,
    so a revert does not reformat the person's file."""
    def flat(value: Any) -> bool:
        return isinstance(value, dict) and all(not isinstance(v, dict | list) for v in value.values())

    lines = ["{"]
    keys = list(data)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = data[key]
        if key == "slides" and isinstance(value, list) and value:
            lines.append(f"  {json.dumps(key)}: [")
            for j, entry in enumerate(value):
                text = json.dumps(entry, ensure_ascii=False) if flat(entry) else \
                    json.dumps(entry, indent=2, ensure_ascii=False).replace("\n", "\n    ")
                lines.append(f"    {text}{',' if j < len(value) - 1 else ''}")
            lines.append(f"  ]{comma}")
        else:
            text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
            lines.append(f"  {json.dumps(key)}: {text}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


DESCRIBER = ChangeDescriber(mode="slide", describe=describe, revert=revert)
