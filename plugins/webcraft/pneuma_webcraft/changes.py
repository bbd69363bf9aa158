"""A turn's changes in a web site's own terms (issue 28, items 1 and 2).

Pages (``*.html``) are compared line by line (``line_hunks``) and each run
of changed lines is named by the element around it, in the page as the turn
left it, with the short CSS selector the viewer's own picker makes (bridge.js
``selectorOf``: an id when it is unique, else tag, up to two classes and
``:nth-of-type`` where siblings share them), shown as the person reads it:
"index.html › section#pricing: text changed", a landmark without an id by
its heading ("section “Why people switch”"). Runs in the same element are
one change. Stylesheets name the rules they touch, scripts and assets are
changed, added or removed, and a new or removed page is one change. The
stdlib's ``html.parser`` reads the pages: no browser.

Reverting one element's change puts back only its lines, so the turn's
other changes in the page stay; stylesheets, scripts, assets and whole
pages go back whole.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

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
from pneuma_webcraft.page_tree import (
    INLINE,
    Element,
    first_title,
    innermost,
    parse_page,
    selector_of,
    shown_name,
)

PAGE_SUFFIXES = (".html", ".htm")
STYLE_SUFFIXES = (".css",)
SCRIPT_SUFFIXES = (".js", ".mjs")
ASSET_SUFFIXES = (".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".ico", ".woff", ".woff2",
                  ".ttf", ".otf")
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")
_LISTED = 3


# --- describing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Planned:
    change: Change
    path: str
    hunks: tuple[Hunk, ...] = ()  # none: the whole file(s)


def _kind_of_edit(old: str, new: str) -> tuple[str, str]:
    """What a run of lines did, in words: text, attributes or markup."""
    old_tags, new_tags = _TAG.findall(old), _TAG.findall(new)
    old_text = _SPACE.sub(" ", _TAG.sub(" ", old)).strip()
    new_text = _SPACE.sub(" ", _TAG.sub(" ", new)).strip()
    if old_tags == new_tags:
        return ("text changed", "文字修改") if old_text != new_text else ("spacing changed", "空白修改")
    if old_text == new_text and [t.split()[0] for t in old_tags] == [t.split()[0] for t in new_tags]:
        return ("attributes changed", "属性修改")
    return ("content changed", "内容修改")


def _page_element_changes(path: str, before_text: str, after_text: str) -> list[_Planned]:
    before, after = split_lines(before_text), split_lines(after_text)
    root_before = _LazyTree(before_text)  # needed only where lines were removed
    root_after, ids = parse_page(after_text)
    grouped: dict[str, list[tuple[Hunk, str, str, Element, Element]]] = {}
    for found in changed_hunks(before, after, joins=lambda gap: False):
        hunk = _aligned(found, before, after, root_before, root_after)
        element, words, shown = _hunk_element(hunk, root_before, root_after)
        selector = selector_of(element, ids) or element.tag
        grouped.setdefault(selector, []).append((hunk, *words, element, shown))
    planned: list[_Planned] = []
    for selector, items in grouped.items():
        element, shown = items[0][3], items[0][4]
        words = {(en, zh) for _, en, zh, _, _ in items}
        en, zh = words.pop() if len(words) == 1 else ("changed", "修改")
        kind = "added" if en.endswith(" added") else "removed" if en.endswith(" removed") else "changed"
        name = shown_name(element, ids, selector)
        hunks = tuple(item[0] for item in items)
        locate: dict[str, str] = {"file": path, "page": path}
        if shown.tag not in ("#document", "html", "head", "title"):
            locate["selector"] = selector_of(shown, ids)
        change = Change(id=f"page:{path}:{hunks[0].j1 + 1}", where=f"{path} › {name}",
                        what={"en": en, "zh-CN": zh}, kind=kind, files=(path,),  # type: ignore[arg-type]
                        locate=locate)
        planned.append(_Planned(change, path, hunks))
    return planned


class _LazyTree:
    """A page's tree, parsed on first use."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._root: Element | None = None

    def get(self) -> Element:
        if self._root is None:
            self._root = parse_page(self._text)[0]
        return self._root


def _aligned(hunk: Hunk, before: Sequence[str], after: Sequence[str], root_before: _LazyTree,
             root_after: Element) -> Hunk:
    """A run of lines only added (or only removed) moved up or down over
    equal lines to where it holds whole elements, when it can: difflib may
    report a new card as "<h3>…</article><article>" instead of the card."""
    if hunk.i1 != hunk.i2 and hunk.j1 != hunk.j2:
        return hunk
    lines, first, last, root = (after, hunk.j1, hunk.j2, root_after) if hunk.j2 > hunk.j1 else \
        (before, hunk.i1, hunk.i2, root_before.get())
    size = last - first
    candidates = [0]
    up = 0
    while first - up - 1 >= 0 and lines[first - up - 1] == lines[last - up - 1]:
        up += 1
        candidates.append(-up)
    down = 0
    while last + down < len(lines) and lines[first + down] == lines[last + down]:
        down += 1
        candidates.append(down)
    for shift in candidates:
        start = first + shift
        if _whole_elements(root, start, start + size):
            return Hunk(hunk.i1 + shift, hunk.i2 + shift, hunk.j1 + shift, hunk.j2 + shift)
    return hunk


def _whole_elements(root: Element, first: int, last: int) -> bool:
    """Whether lines ``first``..``last`` (excluded) are exactly whole
    elements, siblings of one parent."""
    inside = _wholly_inside(innermost(root, first, last - 1), first, last)
    return bool(inside) and inside[0].start == first and inside[-1].end == last - 1


def _hunk_element(hunk: Hunk, root_before: _LazyTree,
                  root_after: Element) -> tuple[Element, tuple[str, str], Element]:
    """The element a run of changed lines is named by, what it did (empty
    when the caller must compare the lines), and the element to show."""
    if hunk.j2 > hunk.j1:
        element = innermost(root_after, hunk.j1, hunk.j2 - 1)
        added = _wholly_inside(element, hunk.j1, hunk.j2)
        if hunk.i2 == hunk.i1 and added:
            parent = added[0].parent or element
            tags = ", ".join(dict.fromkeys(c.tag for c in added))
            return _named(parent), (f"{tags} added", f"新增 {tags}"), added[0]
        return _named(element), ("", ""), _named(element)
    # lines removed: named by the element around where they were
    element = _named(innermost(root_after, max(hunk.j1 - 1, 0), hunk.j1))
    old = innermost(root_before.get(), hunk.i1, max(hunk.i2 - 1, hunk.i1))
    gone = _wholly_inside(old, hunk.i1, hunk.i2)
    tags = ", ".join(dict.fromkeys(c.tag for c in gone)) or "lines"
    return element, (f"{tags} removed", f"删除 {tags}"), element


def _wholly_inside(element: Element, first: int, last: int) -> list[Element]:
    """``element`` itself when lines ``first``..``last`` (excluded) hold all
    of it, else its children they hold."""
    if element.tag != "#document" and first <= element.start and element.end < last:
        return [element]
    return [c for c in element.children if first <= c.start and c.end < last]


def _named(element: Element) -> Element:
    """``element``, or the nearest block around it when it is inline."""
    while element.tag in INLINE and element.parent is not None and element.parent.tag != "#document":
        element = element.parent
    return element


def _with_words(planned: list[_Planned], before_text: str, after_text: str) -> list[_Planned]:
    """Fill in what each change did where the element alone did not say."""
    before, after = split_lines(before_text), split_lines(after_text)
    done: list[_Planned] = []
    for item in planned:
        what = item.change.what
        if isinstance(what, Mapping) and what.get("en"):
            done.append(item)
            continue
        kinds = {_kind_of_edit("".join(before[h.i1:h.i2]), "".join(after[h.j1:h.j2])) for h in item.hunks}
        en, zh = kinds.pop() if len(kinds) == 1 else ("changed", "修改")
        change = Change(id=item.change.id, where=item.change.where, what={"en": en, "zh-CN": zh},
                        kind="changed", files=item.change.files, locate=item.change.locate)
        done.append(_Planned(change, item.path, item.hunks))
    return done


def _css_rules(before_text: str, after_text: str) -> list[str]:
    """The selectors of the rules a stylesheet's changed lines are in."""
    before, after = split_lines(before_text), split_lines(after_text)
    rules: dict[str, None] = {}
    for hunk in changed_hunks(before, after, joins=lambda gap: False):
        for lines, first, last in ((after, hunk.j1, hunk.j2), (before, hunk.i1, hunk.i2)):
            for index in range(first, last):
                if "{" in lines[index]:
                    rules.setdefault(lines[index].split("{")[0].strip() or "…")
            above = next((lines[i] for i in range(min(first, len(lines)) - 1, -1, -1) if "{" in lines[i] or "}" in lines[i]), "")
            if "{" in above and "}" not in above.split("{")[-1]:
                rules.setdefault(above.split("{")[0].strip() or "…")
    return [r for r in rules if r]


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names[:_LISTED]) + (f" +{len(names) - _LISTED}" if len(names) > _LISTED else "")


def _file_words(status: str) -> tuple[str, str, str]:
    return {"added": ("added", "新增", "added"), "deleted": ("removed", "删除", "removed"),
            "modified": ("changed", "修改", "changed")}[status]


def _page_changes(files: TurnFiles, item: FileChange) -> list[_Planned]:
    old, new = text_of(files.before(item.path)), text_of(files.after(item.path))
    if item.status == "modified" and old is not None and new is not None:
        planned = _with_words(_page_element_changes(item.path, old, new), old, new)
        if planned:
            return planned
    en, zh, kind = _file_words(item.status)
    title = ""
    if new is not None and item.status == "added":
        root, _ = parse_page(new)
        heading = first_title(root)
        title = f" (“{heading}”)" if heading else ""
    change = Change(id=f"page:{item.path}", where={"en": f"Page {item.path}", "zh-CN": f"页面 {item.path}"},
                    what={"en": en + title, "zh-CN": zh + title}, kind=kind,  # type: ignore[arg-type]
                    files=(item.path,),
                    locate={"file": item.path, "page": item.path} if item.status != "deleted" else None)
    return [_Planned(change, item.path)]


def _style_or_script(files: TurnFiles, item: FileChange) -> _Planned:
    is_style = item.path.endswith(STYLE_SUFFIXES)
    en, zh, kind = _file_words(item.status)
    if is_style and item.status == "modified":
        old, new = text_of(files.before(item.path)), text_of(files.after(item.path))
        rules = _css_rules(old, new) if old is not None and new is not None else []
        if rules:
            noun = "rule" if len(rules) == 1 else "rules"
            en, zh = f"{noun} {_listed(rules)} changed", f"规则 {_listed(rules)} 修改"
    label = ("Stylesheet", "样式表") if is_style else ("Script", "脚本")
    change = Change(id=f"{'style' if is_style else 'script'}:{item.path}",
                    where={"en": f"{label[0]} {item.path}", "zh-CN": f"{label[1]} {item.path}"},
                    what={"en": en, "zh-CN": zh}, kind=kind, files=(item.path,),  # type: ignore[arg-type]
                    locate=_page_using(files, [item.path]) if item.status != "deleted" else None)
    return _Planned(change, item.path)


def _page_using(files: TurnFiles, paths: Sequence[str]) -> dict[str, str]:
    """Where to show a stylesheet, script or asset: the first page (index
    first) that names it, since the viewer shows pages; else the file."""
    pages = sorted((p for p in files.paths_after() if p.lower().endswith(PAGE_SUFFIXES)),
                   key=lambda p: (PurePosixPath(p).name != "index.html", p.count("/"), p))
    names = [PurePosixPath(path).name for path in paths]
    for page in pages[:50]:  # a bounded look: this only picks where to show it
        text = text_of(files.after(page)) or ""
        if any(name in text for name in names):
            return {"file": paths[0], "page": page}
    return {"file": paths[0]}


def _asset_changes(files: TurnFiles, groups: dict[str, list[str]]) -> list[_Planned]:
    planned = []
    for status, paths in groups.items():
        en, zh, kind = _file_words(status)
        names = [PurePosixPath(p).name for p in paths]
        change = Change(id=f"assets:{en}", where={"en": "Assets", "zh-CN": "素材"},
                        what={"en": f"{len(paths)} {en}: {_listed(names)}",
                              "zh-CN": f"{zh} {len(paths)} 个：{_listed(names)}"},
                        kind=kind, files=tuple(paths),  # type: ignore[arg-type]
                        locate=_page_using(files, paths) if status != "deleted" else None)
        planned.append(_Planned(change, paths[0]))
    return planned


def plan(files: TurnFiles) -> list[_Planned]:
    """The turn's changes: pages (in path order, each in page order), then
    stylesheets and scripts, then assets."""
    pages: list[_Planned] = []
    code: list[_Planned] = []
    assets: dict[str, list[str]] = {}
    for item in files.changed:
        path = item.path.lower()
        if path.endswith(PAGE_SUFFIXES):
            pages.extend(_page_changes(files, item))
        elif path.endswith(STYLE_SUFFIXES + SCRIPT_SUFFIXES):
            code.append(_style_or_script(files, item))
        elif path.endswith(ASSET_SUFFIXES):
            assets.setdefault(item.status, []).append(item.path)
    return pages + code + _asset_changes(files, assets)


def describe(files: TurnFiles) -> Sequence[Change]:
    return [item.change for item in plan(files)]


def revert(files: TurnFiles, change: Change, current: Mapping[str, bytes | None]) -> Mapping[str, bytes | None]:
    """Only ``change`` undone: an element's lines back in the page as it is
    now; anything else, its files as they were before the turn."""
    found = next((item for item in plan(files) if item.change.id == change.id), None)
    if found is None or not found.hunks:
        return {path: files.before(path) for path in change.files}
    before, after = text_of(files.before(found.path)), text_of(files.after(found.path))
    now = text_of(current.get(found.path))
    if before is None or after is None or now is None:
        raise ValueError(f"{found.path} is no longer a text file: revert the whole page instead")
    old_lines, new_lines = split_lines(before), split_lines(after)
    # the last run first: the earlier ones keep their line numbers
    for hunk in sorted(found.hunks, key=lambda h: h.j1, reverse=True):
        now = revert_hunk(old_lines, new_lines, hunk, now)
        new_lines = new_lines[:hunk.j1] + old_lines[hunk.i1:hunk.i2] + new_lines[hunk.j2:]
    return {found.path: now.encode("utf-8")}


DESCRIBER = ChangeDescriber(mode="webcraft", describe=describe, revert=revert)
