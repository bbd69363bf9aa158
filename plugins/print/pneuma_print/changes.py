"""A turn's changes in pages (docs/hooks.md, ``register_change_describers``):
page N added, removed, moved, retitled, its text or layout changed; the
paper, the margins, the page numbers, the title, the stylesheet.

Page numbers are positions in ``print.json``'s ``pages`` after the turn (a
removed page: its position before). A move is a change of position that
adds and removes do not explain: the pages outside a longest run kept in
the same order. Each page's change carries ``locate`` ``{"page": n,
"file": …}``, what the viewer's ``navigate-to`` takes.

Several changes share ``print.json`` (a move and a retitle), so ``revert``
undoes one of them in the live file and leaves the others.
"""

from __future__ import annotations

import bisect
import hashlib
import html
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pneuma.api import Change, ChangeDescriber, TurnFiles, describe_files, text_of
from pneuma_print.paper import (
    PRINT_JSON,
    STYLESHEET,
    PrintDocument,
    PrintFileError,
    parse_document,
)

ChangeKind = Literal["added", "removed", "changed", "moved", "renamed"]
_TAG = re.compile(r"<[^>]*>")
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:._/@#=+-]{0,160}$")


def _label(en: str, zh: str) -> dict[str, str]:
    return {"en": en, "zh-CN": zh}


def _page(number: int) -> dict[str, str]:
    return _label(f"Page {number}", f"第 {number} 页")


def _id(file: str, what: str) -> str:
    candidate = f"print:{file}:{what}"
    if _SAFE_ID.match(candidate):
        return candidate
    return f"print:#{hashlib.sha256(file.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}:{what}"


def _state(content: bytes | None) -> PrintDocument | None:
    """One state of print.json; None when there was none (every page new)."""
    return None if content is None else parse_document(content)


def _files(doc: PrintDocument | None) -> list[str]:
    return [page.file for page in doc.pages] if doc else []


def _titles(doc: PrintDocument | None) -> dict[str, str]:
    return {page.file: page.title for page in doc.pages} if doc else {}


def kept_in_order(before: Sequence[str], after: Sequence[str]) -> set[str]:
    """The pages of ``after`` in a longest run that keeps their order of
    ``before``: the others (present in both) moved."""
    rank = {file: i for i, file in enumerate(before)}
    common = [file for file in after if file in rank]
    tails: list[int] = []  # tails[k]: the smallest rank ending a run of length k+1
    ends: list[int] = []  # ends[k]: where in common that run ends
    previous = [-1] * len(common)
    for i, file in enumerate(common):
        k = bisect.bisect_left(tails, rank[file])
        previous[i] = ends[k - 1] if k else -1
        if k == len(tails):
            tails.append(rank[file])
            ends.append(i)
        else:
            tails[k], ends[k] = rank[file], i
    kept: set[str] = set()
    i = ends[-1] if ends else -1
    while i >= 0:
        kept.add(common[i])
        i = previous[i]
    return kept


def _visible_text(fragment: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", fragment)).split())


def _markup(fragment: str) -> list[str]:
    return [" ".join(tag.split()) for tag in _TAG.findall(fragment)]


def _edit(before: bytes | None, after: bytes | None) -> tuple[str, str] | None:
    """What changed in a page's file, as (en, zh), or None when nothing did."""
    old, new = text_of(before), text_of(after)
    if old is None or new is None or old == new:
        return None
    text, layout = _visible_text(old) != _visible_text(new), _markup(old) != _markup(new)
    if text and layout:
        return "text and layout changed", "文字和版式已修改"
    if text:
        return "text changed", "文字已修改"
    if layout:
        return "layout changed", "版式已修改"
    return "source reformatted", "源码格式已调整"


def describe(files: TurnFiles) -> list[Change]:
    """Document-wide changes first, then each page in page order."""
    status = {item.path: item.status for item in files.changed}
    try:
        old, new = _state(files.before(PRINT_JSON)), _state(files.after(PRINT_JSON))
    except PrintFileError:
        return describe_files(files)  # a print.json that does not parse: said per file
    ordered: list[tuple[float, Change]] = [(0, c) for c in _document_changes(old, new, status)]
    before, after = _files(old), _files(new)
    kept = kept_in_order(before, after)
    old_titles, new_titles = _titles(old), _titles(new)
    for number, file in enumerate(after, start=1):
        locate = {"page": number, "file": file}
        if file not in old_titles:
            own = (file,) if status.get(file) == "added" else ()
            ordered.append((number, Change(_id(file, "added"), _page(number), _label("added", "新增"), "added",
                                           (PRINT_JSON, *own), locate)))
            continue
        if old_titles[file] != new_titles[file]:
            ordered.append((number, Change(_id(file, "title"), _page(number),
                                           _label(f"title changed to “{new_titles[file]}”",
                                                  f"标题改为“{new_titles[file]}”"),
                                           "changed", (PRINT_JSON,), locate)))
        edit = _edit(files.before(file), files.after(file)) if status.get(file) == "modified" else None
        if edit:
            ordered.append((number, Change(_id(file, "content"), _page(number), _label(*edit), "changed",
                                           (file,), locate)))
        if file not in kept:
            was = before.index(file) + 1
            ordered.append((number, Change(_id(file, "moved"), _page(number),
                                           _label(f"moved from {was} to {number}", f"从第 {was} 页移到第 {number} 页"),
                                           "moved", (PRINT_JSON,), locate)))
    for number, file in enumerate(before, start=1):
        if file not in new_titles:
            own = (file,) if status.get(file) == "deleted" else ()
            ordered.append((number + 0.5, Change(_id(file, "removed"), _page(number), _label("removed", "删除"),
                                                 "removed", (PRINT_JSON, *own))))
    ordered.sort(key=lambda pair: pair[0])
    return [change for _, change in ordered]


def _document_changes(old: PrintDocument | None, new: PrintDocument | None,
                      status: Mapping[str, str]) -> list[Change]:
    changes = []
    first = {"page": 1}
    if old and new and (old.paper_label, old.width_mm, old.height_mm) != (new.paper_label, new.width_mm,
                                                                          new.height_mm):
        changes.append(Change("print:document:paper", _label("Paper", "纸张"),
                              _label(f"changed {old.paper_label} → {new.paper_label}",
                                     f"已修改 {old.paper_label} → {new.paper_label}"),
                              "changed", (PRINT_JSON,), first))
    if old and new and old.margins != new.margins:
        changes.append(Change("print:document:margins", _label("Margins", "页边距"), _label("changed", "已修改"),
                              "changed", (PRINT_JSON,), first))
    if old and new and old.page_numbers != new.page_numbers:
        changes.append(Change("print:document:pageNumbers", _label("Page numbers", "页码"),
                              _label("changed", "已修改"), "changed", (PRINT_JSON,), first))
    if old and new and old.title != new.title:
        changes.append(Change("print:document:title", _label("Document", "文档"),
                              _label("title changed", "标题已修改"), "changed", (PRINT_JSON,), first))
    if STYLESHEET in status:
        kind: ChangeKind
        if status[STYLESHEET] == "added":
            what, kind = _label("added", "新增"), "added"
        elif status[STYLESHEET] == "deleted":
            what, kind = _label("removed", "删除"), "removed"
        else:
            what, kind = _label("changed", "已修改"), "changed"
        changes.append(Change("print:stylesheet", _label("Stylesheet", "样式表"), what, kind,
                              (STYLESHEET,), first))
    return changes


# --- reverting one change that shares print.json -----------------------------------

# The keys of print.json each document-wide change owns.
_DOCUMENT_KEYS = {"print:document:paper": ("paper", "orientation"), "print:document:margins": ("margin_mm",),
                  "print:document:pageNumbers": ("pageNumbers",), "print:document:title": ("title",)}


def revert(files: TurnFiles, change: Change, current: Mapping[str, bytes | None]) -> dict[str, bytes | None]:
    """Each file of ``change`` with only that change undone."""
    answer: dict[str, bytes | None] = {path: files.before(path) for path in change.files}
    if PRINT_JSON not in change.files or not change.id.startswith("print:"):
        return answer
    try:
        before = json.loads(text_of(files.before(PRINT_JSON)) or "{}")
        live = json.loads(text_of(current.get(PRINT_JSON)) or "{}")
    except ValueError:
        return answer  # hand-edited into something else since: the file goes back whole
    if not isinstance(before, dict) or not isinstance(live, dict):
        return answer
    if change.id in _DOCUMENT_KEYS:
        for key in _DOCUMENT_KEYS[change.id]:
            if key in before:
                live[key] = before[key]
            else:
                live.pop(key, None)
    else:
        file = str((change.locate or {}).get("file") or _file_in_id(change.id, before))
        live["pages"] = _revert_page(change.id.rsplit(":", 1)[-1], file, _entries(before), _entries(live))
    answer[PRINT_JSON] = (json.dumps(live, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    return answer


def _entries(data: dict[str, Any]) -> list[Any]:
    pages = data.get("pages")
    return list(pages) if isinstance(pages, list) else []


def _entry_file(entry: Any) -> str:
    raw = entry.get("file") if isinstance(entry, dict) else entry
    return raw.strip().removeprefix("./") if isinstance(raw, str) else ""


def _file_in_id(change_id: str, before: dict[str, Any]) -> str:
    for entry in _entries(before):
        file = _entry_file(entry)
        if change_id.rsplit(":", 1)[0] == _id(file, "x").rsplit(":", 1)[0]:
            return file
    return ""


def _revert_page(kind: str, file: str, before: list[Any], live: list[Any]) -> list[Any]:
    old_entry = next((e for e in before if _entry_file(e) == file), None)
    if kind == "added":
        return [e for e in live if _entry_file(e) != file]
    if kind == "title" and isinstance(old_entry, dict):
        return [{**e, "title": old_entry.get("title")} if _entry_file(e) == file and isinstance(e, dict) else e
                for e in live]
    if kind in ("removed", "moved") and old_entry is not None:
        entry = old_entry if kind == "removed" else next((e for e in live if _entry_file(e) == file), old_entry)
        rest = [e for e in live if _entry_file(e) != file]
        return rest[:_place(before, file, rest)] + [entry] + rest[_place(before, file, rest):]
    return live


def _place(before: list[Any], file: str, rest: list[Any]) -> int:
    """After the nearest page that came before ``file`` and is still there."""
    order = [_entry_file(e) for e in before]
    now = [_entry_file(e) for e in rest]
    for earlier in reversed(order[:order.index(file)]):
        if earlier in now:
            return now.index(earlier) + 1
    return 0


DESCRIBER = ChangeDescriber(mode="print", describe=describe, revert=revert)
