"""A turn's changes in drawing elements (issue 28, Pneuma's docs/hooks.md,
``register_change_describers``): in each ``.excalidraw`` file, elements
added, removed, moved, resized, restyled (grouped by type: "3 rectangles
added") and each text that changed.

Elements are matched by their ``id``; a deleted one (``isDeleted``) counts as
absent. Bookkeeping fields Excalidraw rewrites on every edit (version,
seed, z-index key, bindings) are not a change a person made. A label bound
to a moved shape moves with it and is not listed again.

Reverting one change edits the live drawing: it takes out the elements a
group added, puts back the ones it removed where they were in the stacking
order, or sets only the moved, resized, restyled or retyped fields back.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pneuma.api import Change, ChangeDescriber, TurnFiles, text_of

SUFFIX = ".excalidraw"
_BOOKKEEPING = {"version", "versionNonce", "updated", "seed", "index", "boundElements", "isDeleted"}
_POSITION = ("x", "y")
_SIZE = ("width", "height", "points", "angle", "scale")
_TEXT = ("text", "originalText")
_SAFE = re.compile(r"^[A-Za-z0-9:._/@#=+-]{1,200}$")
_ORDER = ("added", "removed", "moved", "resized", "text", "styled")
_NOUNS = {  # type: (one, several, 中文量词+名词)
    "rectangle": ("rectangle", "rectangles", "个矩形"), "ellipse": ("ellipse", "ellipses", "个椭圆"),
    "diamond": ("diamond", "diamonds", "个菱形"), "arrow": ("arrow", "arrows", "个箭头"),
    "line": ("line", "lines", "条线"), "text": ("text", "texts", "段文字"),
    "freedraw": ("freehand stroke", "freehand strokes", "笔手绘"), "image": ("image", "images", "张图片"),
    "frame": ("frame", "frames", "个框架"), "embeddable": ("embed", "embeds", "个嵌入内容"),
}
_WHAT = {"added": ("added", "新增"), "removed": ("removed", "删除"), "moved": ("moved", "移动"),
         "resized": ("resized", "改变大小"), "styled": ("restyled", "改变样式")}
_KIND = {"added": "added", "removed": "removed", "moved": "moved"}


@dataclass(frozen=True)
class _Group:
    """Elements of one type that changed the same way, or one text."""

    id: str
    category: str
    type: str
    element_ids: tuple[str, ...]
    keys: tuple[str, ...] = ()
    old_text: str = ""
    new_text: str = ""


def _elements(content: bytes | None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]] | None:
    """The drawing and its live elements by id, or None when it does not parse."""
    try:
        data = json.loads(text_of(content) or "")
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("elements"), list):
        return None
    live = {e["id"]: e for e in data["elements"]
            if isinstance(e, dict) and isinstance(e.get("id"), str) and not e.get("isDeleted")}
    return data, live


def _safe(text: str) -> str:
    if _SAFE.match(text) and len(text) < 120:
        return text
    return "#" + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _differs(old: Mapping[str, Any], new: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    return any(old.get(key) != new.get(key) for key in keys)


def _groups(path: str, old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> list[_Group]:
    """The changes of one drawing, in reading order."""
    buckets: dict[tuple[str, str], list[str]] = {}
    texts: list[_Group] = []
    styled_keys: dict[tuple[str, str], set[str]] = {}
    for eid, element in new.items():
        kind = str(element.get("type") or "element")
        if eid not in old:
            buckets.setdefault(("added", kind), []).append(eid)
            continue
        was = old[eid]
        text_changed = _differs(was, element, _TEXT)
        if _differs(was, element, _POSITION) and not _moves_with_container(element, old, new):
            buckets.setdefault(("moved", kind), []).append(eid)
        if _differs(was, element, _SIZE) and not text_changed:
            buckets.setdefault(("resized", kind), []).append(eid)
        if text_changed:
            texts.append(_Group(f"draw:{_safe(path)}:text:{_safe(eid)}", "text", kind, (eid,),
                                _TEXT + ("width", "height"), str(was.get("text") or ""), str(element.get("text") or "")))
        style = {key for key in (*was, *element) if key not in _BOOKKEEPING
                 and key not in _POSITION + _SIZE + _TEXT and was.get(key) != element.get(key)}
        if style:
            buckets.setdefault(("styled", kind), []).append(eid)
            styled_keys.setdefault(("styled", kind), set()).update(style)
    for eid, element in old.items():
        if eid not in new:
            buckets.setdefault(("removed", str(element.get("type") or "element")), []).append(eid)
    groups = [_Group(f"draw:{_safe(path)}:{category}:{_safe(kind)}", category, kind, tuple(ids),
                     _POSITION if category == "moved" else _SIZE if category == "resized"
                     else tuple(sorted(styled_keys.get((category, kind), ()))))
              for (category, kind), ids in buckets.items()]
    groups.extend(texts)
    return sorted(groups, key=lambda g: (_ORDER.index(g.category), g.type, g.id))


def _moves_with_container(element: Mapping[str, Any], old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    container = element.get("containerId")
    return isinstance(container, str) and container in old and container in new \
        and _differs(old[container], new[container], _POSITION)


def _what(group: _Group) -> dict[str, str]:
    if group.category == "text":
        return {"en": f"text “{_short(group.old_text)}” → “{_short(group.new_text)}”",
                "zh-CN": f"文字“{_short(group.old_text)}”改为“{_short(group.new_text)}”"}
    one, several, zh_noun = _NOUNS.get(group.type, (group.type, group.type + "s", f"个{group.type}"))
    count = len(group.element_ids)
    en_verb, zh_verb = _WHAT[group.category]
    return {"en": f"{count} {one if count == 1 else several} {en_verb}", "zh-CN": f"{zh_verb} {count} {zh_noun}"}


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:39] + "…"


def describe(files: TurnFiles) -> list[Change]:
    changes: list[Change] = []
    for item in files.changed:
        path = item.path
        if not path.endswith(SUFFIX):
            continue
        if item.status != "modified":
            added = item.status == "added"
            changes.append(Change(f"draw:{_safe(path)}", path,
                                  {"en": "drawing added", "zh-CN": "新增画板"} if added
                                  else {"en": "drawing removed", "zh-CN": "删除画板"},
                                  "added" if added else "removed", (path,), {"file": path} if added else None))
            continue
        old, new = _elements(files.before(path)), _elements(files.after(path))
        if old is None or new is None:
            continue  # the host describes a file that does not parse as a file
        groups = _groups(path, old[1], new[1])
        if not groups:  # the canvas (appState, images), or only Excalidraw's bookkeeping
            settings = {k: v for k, v in old[0].items() if k != "elements"} != \
                {k: v for k, v in new[0].items() if k != "elements"}
            what = {"en": "canvas settings changed", "zh-CN": "画布设置已修改"} if settings else \
                {"en": "changed", "zh-CN": "已修改"}
            changes.append(Change(f"draw:{_safe(path)}", path, what, "changed", (path,), {"file": path}))
        for group in groups:
            locate = {"file": path} if group.category == "removed" else \
                {"file": path, "elementIds": list(group.element_ids)}
            changes.append(Change(group.id, path, _what(group), _KIND.get(group.category, "changed"),  # type: ignore[arg-type]
                                  (path,), locate))
    return changes


def revert(files: TurnFiles, change: Change, current: Mapping[str, bytes | None]) -> dict[str, bytes | None]:
    path = change.files[0]
    before, after, live = (_elements(files.before(path)), _elements(files.after(path)),
                           _elements(current.get(path)))
    group = None
    if before is not None and after is not None:
        group = next((g for g in _groups(path, before[1], after[1]) if g.id == change.id), None)
    if group is None or before is None or live is None:
        return {path: files.before(path)}
    data, _ = live
    elements: list[Any] = list(data["elements"])
    ids = set(group.element_ids)
    if group.category == "added":
        elements = [e for e in elements if not (isinstance(e, dict) and e.get("id") in ids)]
    elif group.category == "removed":
        order = [e.get("id") for e in before[0]["elements"] if isinstance(e, dict)]
        for eid in group.element_ids:
            elements = [e for e in elements if not (isinstance(e, dict) and e.get("id") == eid)]
            elements.insert(_old_place(order, eid, elements), before[1][eid])
    else:
        for element in elements:
            if isinstance(element, dict) and element.get("id") in ids:
                _set_back(element, before[1][element["id"]], group.keys)
    data["elements"] = elements
    return {path: (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")}


def _set_back(element: dict[str, Any], old: Mapping[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if key in old:
            element[key] = old[key]
        else:
            element.pop(key, None)
    if isinstance(element.get("version"), int):
        element["version"] += 1  # Excalidraw keeps the higher version when it reconciles


def _old_place(order: list[Any], eid: str, now: list[Any]) -> int:
    """Where a removed element goes back: just above the nearest element
    that was below it before the turn and is still there."""
    ids = [e.get("id") if isinstance(e, dict) else None for e in now]
    for earlier in reversed(order[:order.index(eid)]):
        if earlier in ids:
            return ids.index(earlier) + 1
    return 0


DESCRIBER = ChangeDescriber(mode="draw", describe=describe, revert=revert)
