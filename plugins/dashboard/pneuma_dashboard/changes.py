"""A turn's changes in the dashboard's own terms (docs/dashboard.md): one
change per tile added, removed, moved or resized, or changed ("Tile
“Revenue by month”: spec changed"), one for the board's own title, and
one per data file ("data/sales.csv: 12 rows added"). ``locate`` is what
the viewer's ``navigate-to`` takes: the tile, and for a data file the first
tile that reads it.

A tile's change is reverted on its own, in the file's text
(tile_revert.py); a data file's as the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pneuma.api import Change, ChangeDescriber, FileChange, TurnFiles, text_of
from pneuma_dashboard.board import BOARD_FILE, Board, Tile, read_board
from pneuma_dashboard.data import SUFFIXES, DataTable, parse_data
from pneuma_dashboard.tile_revert import change_id, revert

# What a tile holds besides its place, and how a change of it is said.
_CONTENT: dict[str, tuple[str, str]] = {
    "spec": ("spec changed", "图表定义修改"),
    "data": ("data file changed", "数据文件修改"),
    "text": ("text changed", "文字修改"),
    "columns": ("columns changed", "列修改"),
    "limit": ("row limit changed", "行数上限修改"),
    "field": ("field changed", "字段修改"),
    "aggregate": ("aggregate changed", "汇总方式修改"),
    "format": ("format changed", "格式修改"),
    "label": ("label changed", "标签修改"),
    "type": ("type changed", "类型修改"),
}


def _quoted(text: str) -> str:
    return f"“{text}”"


def _tile_where(tile: Tile) -> dict[str, str]:
    return {"en": f"Tile {_quoted(tile.name)}", "zh-CN": f"图块{_quoted(tile.name)}"}


def _board(data: bytes | None) -> Board | None:
    text = text_of(data)
    return read_board(text) if text is not None else None


def _unreadable(board: Board) -> bool:
    return not board.tiles and any(p.path == "" for p in board.problems)


def board_changes(item: FileChange, before: Board | None, after: Board | None) -> list[Change]:
    """The changes of dashboard.json, tile by tile in the order of the board after the turn."""
    where = {"en": "Board", "zh-CN": "看板"}
    files = (BOARD_FILE,)
    if after is None:
        return [Change(id="board", where=where, what={"en": "removed", "zh-CN": "删除"}, kind="removed", files=files)]
    if _unreadable(after):
        line = next((p.line for p in after.problems if p.line), None)
        at_en, at_zh = (f", line {line}", f"，第 {line} 行") if line else ("", "")
        return [Change(id="board", where=where, kind="changed", files=files,
                       what={"en": f"changed (not valid JSON{at_en})", "zh-CN": f"修改（不是有效的 JSON{at_zh}）"},
                       locate={"file": BOARD_FILE, **({"line": line} if line else {})})]
    if before is None or _unreadable(before):
        count = len(after.tiles)
        word_en, word_zh = ("added", "新增") if item.status == "added" else ("readable again", "恢复可读")
        return [Change(id="board", where=where, kind="added" if item.status == "added" else "changed", files=files,
                       what={"en": f"{word_en} ({count} tiles)", "zh-CN": f"{word_zh}（{count} 个图块）"},
                       locate={"file": BOARD_FILE})]
    changes: list[Change] = []
    if before.title != after.title:
        changes.append(Change(id="board:title", where=where, kind="changed", files=files,
                              what={"en": f"retitled {_quoted(after.title)}", "zh-CN": f"标题改为{_quoted(after.title)}"},
                              locate={"file": BOARD_FILE}))
    old = {t.id: t for t in before.tiles}
    for tile in after.tiles:
        change = _tile_change(old.get(tile.id), tile)
        if change is not None:
            changes.append(change)
    new_ids = {t.id for t in after.tiles}
    changes.extend(Change(id=change_id("tile", t.id), where=_tile_where(t), what={"en": "removed", "zh-CN": "删除"},
                          kind="removed", files=files, locate={"file": BOARD_FILE})
                   for t in before.tiles if t.id not in new_ids)
    return changes


def _tile_change(before: Tile | None, after: Tile) -> Change | None:
    locate = {"file": BOARD_FILE, "tile": after.id}
    tile_change_id = change_id("tile", after.id)
    if before is None:
        return Change(id=tile_change_id, where=_tile_where(after), kind="added", files=(BOARD_FILE,), locate=locate,
                      what={"en": f"added ({after.type}, {after.w}×{after.h} at {after.x},{after.y})",
                            "zh-CN": f"新增（{after.type}，{after.w}×{after.h}，位于 {after.x},{after.y}）"})
    said: list[tuple[str, str]] = []
    if before.title != after.title:
        said.append((f"retitled {_quoted(after.title)}", f"标题改为{_quoted(after.title)}"))
    said.extend(words for key, words in _CONTENT.items() if getattr(before, key) != getattr(after, key))
    moved = (before.x, before.y) != (after.x, after.y)
    resized = (before.w, before.h) != (after.w, after.h)
    if moved:
        said.append((f"moved to {after.x},{after.y}", f"移到 {after.x},{after.y}"))
    if resized:
        said.append((f"resized to {after.w}×{after.h}", f"尺寸改为 {after.w}×{after.h}"))
    if not said:
        return None
    only_layout = (moved or resized) and len(said) == moved + resized
    return Change(id=tile_change_id, where=_tile_where(after), kind="moved" if only_layout else "changed",
                  files=(BOARD_FILE,), locate=locate,
                  what={"en": " · ".join(en for en, _ in said), "zh-CN": " · ".join(zh for _, zh in said)})


def data_change(item: FileChange, files: TurnFiles, readers: Mapping[str, str]) -> Change:
    """One data file's change: rows added or removed, fields added or
    removed, values changed."""
    path = item.path
    where = {"en": path, "zh-CN": path}
    locate: dict[str, Any] = {"file": path, **({"tile": readers[path]} if path in readers else {})}
    if item.status == "deleted":
        return Change(id=change_id("data", path), where=where, what={"en": "removed", "zh-CN": "删除"}, kind="removed",
                      files=(path,))
    after = _table(path, files.after(path))
    before = _table(path, files.before(path)) if item.status == "modified" else None
    if after is None:
        what = {"en": "changed (cannot be read)", "zh-CN": "修改（无法读取）"}
    elif before is None:
        what = ({"en": f"added ({len(after.rows)} rows)", "zh-CN": f"新增（{len(after.rows)} 行）"}
                if item.status == "added" else {"en": "readable again", "zh-CN": "恢复可读"})
    else:
        what = _table_difference(before, after)
    return Change(id=change_id("data", path), where=where, what=what,
                  kind="added" if item.status == "added" else "changed", files=(path,), locate=locate)


def _table(path: str, data: bytes | None) -> DataTable | None:
    if data is None:
        return None
    try:
        return parse_data(path, data)
    except Exception:  # noqa: BLE001 - any unreadable file is said as such, never raised
        return None


def _table_difference(before: DataTable, after: DataTable) -> dict[str, str]:
    en: list[str] = []
    zh: list[str] = []
    added = [n for n in after.field_names if n not in before.field_names]
    removed = [n for n in before.field_names if n not in after.field_names]
    if added:
        en.append(f"field{'s' if len(added) > 1 else ''} {', '.join(added)} added")
        zh.append(f"新增字段 {', '.join(added)}")
    if removed:
        en.append(f"field{'s' if len(removed) > 1 else ''} {', '.join(removed)} removed")
        zh.append(f"删除字段 {', '.join(removed)}")
    rows_before, rows_after = len(before.rows), len(after.rows)
    if rows_after > rows_before:
        en.append(f"{rows_after - rows_before} rows added")
        zh.append(f"新增 {rows_after - rows_before} 行")
    elif rows_after < rows_before:
        en.append(f"{rows_before - rows_after} rows removed")
        zh.append(f"删除 {rows_before - rows_after} 行")
    edited = sum(1 for old, new in zip(before.rows, after.rows, strict=False) if dict(old) != dict(new))
    if edited and not added and not removed:
        en.append(f"{edited} rows changed")
        zh.append(f"修改 {edited} 行")
    if not en:
        return {"en": "formatting changed", "zh-CN": "格式修改"}
    return {"en": " · ".join(en), "zh-CN": " · ".join(zh)}


def describe(files: TurnFiles) -> Sequence[Change]:
    """The board's changes first, then the data files', in path order."""
    changes: list[Change] = []
    after_board = _board(files.after(BOARD_FILE))
    readers: dict[str, str] = {}
    for tile in after_board.tiles if after_board else ():
        if tile.data:
            readers.setdefault(tile.data, tile.id)
    for item in files.changed:
        if item.path == BOARD_FILE:
            before = _board(files.before(BOARD_FILE)) if item.status == "modified" else None
            changes.extend(board_changes(item, before, after_board if item.status != "deleted" else None))
    for item in files.changed:
        is_data = item.path.startswith("data/") or item.path in readers
        if item.path != BOARD_FILE and is_data and item.path.lower().endswith(SUFFIXES):
            changes.append(data_change(item, files, readers))
    return changes


DESCRIBER = ChangeDescriber(mode="dashboard", describe=describe, revert=revert)
