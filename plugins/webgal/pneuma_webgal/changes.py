"""A turn's changes in a WebGAL game's own terms (issue 28, item 1).

Scenes (``<game>/scene/*.txt``) are compared line by line, since the engine
reads one sentence per physical line (``script.split_lines``): a scene is
added or removed, or gets "3 lines added, 1 changed" with the first changed
line's number and the command on it (read by the plugin's own parser, which
agrees with the real webgal-parser). Resources the scripts use (the
folders of ``resources.FOLDERS`` other than ``scene``) are grouped per folder
and status: "Backgrounds: 2 added". Anything else (config.txt, a template)
is left to the host's per-file fallback.

Each change is one file or one group of whole files, so reverting it is the
host's default: each file back as it was before the turn.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from pneuma.api import Change, ChangeDescriber, FileChange, TurnFiles, text_of
from pneuma_webgal.resources import FOLDERS
from pneuma_webgal.script import parse_line, split_lines

# Resource folders as a person names them.
_FOLDER_NAMES: dict[str, dict[str, str]] = {
    "background": {"en": "Backgrounds", "zh-CN": "背景"},
    "figure": {"en": "Figures", "zh-CN": "立绘"},
    "bgm": {"en": "Music", "zh-CN": "背景音乐"},
    "vocal": {"en": "Voices", "zh-CN": "语音"},
    "video": {"en": "Videos", "zh-CN": "视频"},
    "animation": {"en": "Animations", "zh-CN": "动画"},
    "tex": {"en": "Textures", "zh-CN": "纹理"},
}
_STATUS_WHAT = {"added": ("added", "新增"), "deleted": ("removed", "删除"), "modified": ("changed", "修改")}
_STATUS_KIND = {"added": "added", "deleted": "removed", "modified": "changed"}
_LISTED_NAMES = 3


@dataclass(frozen=True)
class LineCounts:
    """How a scene's lines changed, and where the first change is (1-based,
    in the scene after the turn)."""

    added: int
    changed: int
    removed: int
    first_line: int

    @property
    def any(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def scene_lines_changed(before: str, after: str) -> LineCounts:
    """Lines added, changed and removed between two versions of a scene."""
    old, new = split_lines(before), split_lines(after)
    added = changed = removed = 0
    first: int | None = None
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if first is None:
            first = min(j1, max(len(new) - 1, 0)) + 1
        both = min(i2 - i1, j2 - j1)
        changed += both
        added += (j2 - j1) - both
        removed += (i2 - i1) - both
    return LineCounts(added, changed, removed, first or 1)


def _scene_name(path: str) -> str | None:
    """The scene's name relative to its scene/ folder, or None when the
    file is not a scene (a scene is ``<x>/scene/<name>.txt``)."""
    parts = PurePosixPath(path).parts
    if not path.endswith(".txt") or "scene" not in parts[:-1]:
        return None
    at = len(parts) - 2 - parts[:-1][::-1].index("scene")
    return "/".join(parts[at + 1:])


def _resource_folder(path: str) -> tuple[str, str] | None:
    """(game folder, resource folder) of a resource file, or None."""
    parts = PurePosixPath(path).parts
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] in FOLDERS and parts[i] != "scene":
            return "/".join(parts[:i]), parts[i]
    return None


def _counts_label(counts: LineCounts, command: str | None) -> dict[str, str]:
    en: list[str] = []
    zh: list[str] = []
    for number, word_en, word_zh in ((counts.added, "added", "新增"), (counts.changed, "changed", "修改"),
                                     (counts.removed, "removed", "删除")):
        if number:
            # "3 lines added, 1 changed": the first figure says what is counted
            noun = "" if en else (" line" if number == 1 else " lines")
            en.append(f"{number}{noun} {word_en}")
            zh.append(f"{word_zh} {number} 行")
    at_en = f" (from line {counts.first_line}{f', {command}' if command else ''})"
    at_zh = f"（自第 {counts.first_line} 行{f'，{command}' if command else ''}）"
    return {"en": ", ".join(en) + at_en, "zh-CN": "，".join(zh) + at_zh}


def _scene_change(files: TurnFiles, item: FileChange, name: str) -> Change:
    where = {"en": f"Scene {name}", "zh-CN": f"场景 {name}"}
    change_id = f"scene:{item.path}"
    if item.status == "deleted":
        return Change(id=change_id, where=where, what={"en": "removed", "zh-CN": "删除"}, kind="removed",
                      files=(item.path,))
    after = text_of(files.after(item.path))
    if item.status == "added":
        count = len(split_lines(after)) if after is not None else 0
        return Change(id=change_id, where=where,
                      what={"en": f"added ({count} lines)", "zh-CN": f"新增（{count} 行）"}, kind="added",
                      files=(item.path,), locate={"file": item.path, "line": 1})
    before = text_of(files.before(item.path))
    if before is None or after is None:
        return Change(id=change_id, where=where, what={"en": "changed", "zh-CN": "修改"}, kind="changed",
                      files=(item.path,), locate={"file": item.path})
    counts = scene_lines_changed(before, after)
    if not counts.any:  # only line endings or a byte-order mark differ
        return Change(id=change_id, where=where, what={"en": "line endings changed", "zh-CN": "换行符修改"},
                      kind="changed", files=(item.path,), locate={"file": item.path, "line": 1})
    lines = split_lines(after)
    command = None
    if counts.first_line <= len(lines) and (counts.changed or counts.added):
        command = parse_line(lines[counts.first_line - 1], counts.first_line - 1).command
    return Change(id=change_id, where=where, what=_counts_label(counts, command), kind="changed",
                  files=(item.path,), locate={"file": item.path, "line": counts.first_line})


def _resource_changes(groups: dict[tuple[str, str, str], list[str]]) -> list[Change]:
    changes: list[Change] = []
    for (game, folder, status), paths in groups.items():
        names = [PurePosixPath(p).name for p in paths]
        shown = ", ".join(names[:_LISTED_NAMES]) + (f" +{len(names) - _LISTED_NAMES}" if len(names) > _LISTED_NAMES else "")
        en_word, zh_word = _STATUS_WHAT[status]
        label = _FOLDER_NAMES.get(folder, {"en": folder, "zh-CN": folder})
        prefix = f"{game}/" if game not in ("game", "") else ""
        changes.append(Change(
            id=f"resources:{game or '.'}/{folder}:{en_word}",
            where={"en": prefix + label["en"], "zh-CN": prefix + label["zh-CN"]},
            what={"en": f"{len(paths)} {en_word}: {shown}", "zh-CN": f"{zh_word} {len(paths)} 个：{shown}"},
            kind=_STATUS_KIND[status],  # type: ignore[arg-type]
            files=tuple(paths),
            locate={"file": paths[0]} if status != "deleted" else None))
    return changes


def describe(files: TurnFiles) -> Sequence[Change]:
    """Scenes first (in path order), then resources per folder."""
    scenes: list[Change] = []
    groups: dict[tuple[str, str, str], list[str]] = {}
    for item in files.changed:
        name = _scene_name(item.path)
        if name is not None:
            scenes.append(_scene_change(files, item, name))
            continue
        folder = _resource_folder(item.path)
        if folder is not None:
            groups.setdefault((folder[0], folder[1], item.status), []).append(item.path)
    return scenes + _resource_changes(groups)


DESCRIBER = ChangeDescriber(mode="webgal", describe=describe)
