"""A turn's changes in a video's own terms (issue 30, video): "Scene 2
“Chart”: changed · duration 3 s → 4 s", "Scene 4 “Credits”: added (2 s)",
"Scene 1 “Title”: moved 3 → 1", "Video: size 1280×720 → 1920×1080".

Scenes are matched by their ``id`` in ``video.json`` before and after the
turn; a scene's change gathers what ``video.json`` says about it and its
own file. ``locate`` is the player's ``navigate-to``: the scene and the
time it starts at.

Several changes share ``video.json``, so each is reverted on its own
(``revert``): the scene's entry or the field goes back to what it was, in
the file as it is now, and the rest of the file is left as it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pneuma.api import Change, ChangeDescriber, TurnFiles, text_of
from pneuma_video.composition import (
    COMPOSITION_FILE,
    Composition,
    CompositionError,
    Scene,
    composition_from_text,
)

VIDEO = {"en": "Video", "zh-CN": "视频"}


def _read(content: bytes | None) -> tuple[Composition | None, str | None]:
    """The composition, or None and why not (None, None: no file)."""
    text = text_of(content)
    if text is None:
        return None, None if content is None else "not UTF-8 text"
    try:
        return composition_from_text(text), None
    except CompositionError as exc:
        return None, str(exc)


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _field_changes(before: Composition, after: Composition) -> list[Change]:
    changes: list[Change] = []
    locate = {"time": 0}

    def add(name: str, en: str, zh: str) -> None:
        changes.append(Change(id=f"video:{name}", where=VIDEO, what={"en": en, "zh-CN": zh}, kind="changed",
                              files=(COMPOSITION_FILE,), locate=locate))

    if (before.width, before.height) != (after.width, after.height):
        size = f"{before.width}×{before.height} → {after.width}×{after.height}"
        add("size", f"size {size}", f"尺寸 {size}")
    if before.fps != after.fps:
        add("fps", f"frame rate {before.fps:g} → {after.fps:g} fps", f"帧率 {before.fps:g} → {after.fps:g} fps")
    if before.title != after.title:
        add("title", f"title “{before.title}” → “{after.title}”", f"标题“{before.title}”→“{after.title}”")
    if before.background != after.background:
        add("background", f"background {before.background} → {after.background}",
            f"背景 {before.background} → {after.background}")
    return changes


def _moved(before: Composition, after: Composition) -> set[str]:
    """Ids of scenes kept whose order among the kept scenes changed."""
    kept = {s.id for s in before.scenes} & {s.id for s in after.scenes}
    old = [s.id for s in before.scenes if s.id in kept]
    new = [s.id for s in after.scenes if s.id in kept]
    return {a for a, b in zip(old, new, strict=True) if a != b}


def _scene_items(old: Scene, new: Scene, moved: bool, file_changed: bool) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = []
    if file_changed:
        items.append(("changed", "内容修改"))
    if moved and old.index != new.index:  # "moved 2 → 2" says nothing
        items.append((f"moved {old.index + 1} → {new.index + 1}", f"位置 {old.index + 1} → {new.index + 1}"))
    if old.title != new.title:
        items.append((f"renamed “{old.title}” → “{new.title}”", f"改名“{old.title}”→“{new.title}”"))
    if old.file != new.file:
        items.append((f"file {old.file} → {new.file}", f"文件 {old.file} → {new.file}"))
    if old.duration != new.duration:
        items.append((f"duration {_seconds(old.duration)} → {_seconds(new.duration)}",
                      f"时长 {_seconds(old.duration)} → {_seconds(new.duration)}"))
    return items


def _scene_change(files: TurnFiles, after: Composition, new: Scene, old: Scene | None, moved: bool,
                  json_changed: bool) -> Change | None:
    where = {"en": new.label(), "zh-CN": new.label_zh()}
    locate = {"scene": new.id, "time": after.start_time(new)}
    changed_paths = {item.path for item in files.changed}
    own_file = (new.file,) if new.file in changed_paths else ()
    if old is None:
        return Change(id=f"video:scene:{new.id}", where=where,
                      what={"en": f"added ({_seconds(new.duration)})", "zh-CN": f"新增（{_seconds(new.duration)}）"},
                      kind="added", files=(COMPOSITION_FILE, *own_file), locate=locate)
    items = _scene_items(old, new, moved, bool(own_file))
    if not items:
        return None
    entry_changed = json_changed and len(items) > len(own_file)  # more than its file's content
    kind = "moved" if items[0][0].startswith("moved") and len(items) == 1 else "changed"
    return Change(id=f"video:scene:{new.id}", where=where,
                  what={"en": " · ".join(en for en, _ in items), "zh-CN": " · ".join(zh for _, zh in items)},
                  kind=kind, files=(COMPOSITION_FILE,) * entry_changed + own_file, locate=locate)


def _unreadable(before: bytes | None, why: str) -> Change:
    return Change(id="video:video.json", where=VIDEO,
                  what={"en": f"changed (video.json does not read: {why})", "zh-CN": "修改（video.json 无法读取）"},
                  kind="added" if before is None else "changed", files=(COMPOSITION_FILE,),
                  locate={"file": COMPOSITION_FILE})


def describe(files: TurnFiles) -> Sequence[Change]:
    raw_before, raw_after = files.before(COMPOSITION_FILE), files.after(COMPOSITION_FILE)
    before, _ = _read(raw_before)
    after, why = _read(raw_after)
    if after is None:
        return [_unreadable(raw_before, why)] if why else []  # no composition after: the host lists the files
    json_changed = raw_before != raw_after
    old_scenes = {s.id: s for s in before.scenes} if before else {}
    moved = _moved(before, after) if before else set()
    changes = _field_changes(before, after) if before else []
    for scene in after.scenes:
        change = _scene_change(files, after, scene, old_scenes.get(scene.id), scene.id in moved, json_changed)
        if change is not None:
            changes.append(change)
    kept = {s.id for s in after.scenes}
    for scene in before.scenes if before else ():
        if scene.id not in kept:
            gone = tuple(p for p in (COMPOSITION_FILE, scene.file) if files.after(p) is None or p == COMPOSITION_FILE)
            changes.append(Change(id=f"video:scene:{scene.id}", where={"en": scene.label(), "zh-CN": scene.label_zh()},
                                  what={"en": "removed", "zh-CN": "删除"}, kind="removed", files=gone,
                                  locate={"time": min(scene.start_frame, after.total_frames) / after.fps}))
    return changes


# --- reverting one change in a video.json other changes share ----------------------------

def _entries(data: Any) -> list[Any]:
    scenes = data.get("scenes") if isinstance(data, dict) else None
    if not isinstance(scenes, list):
        raise ValueError("video.json has no scenes list now; revert the file as a whole")
    return scenes


def _revert_json(before: dict[str, Any] | None, current: dict[str, Any], change: Change) -> None:
    name = change.id.removeprefix("video:")
    # "format" says the size and fps in one field (composition.py): it goes back with either
    fields = {"size": ("width", "height", "format"), "fps": ("fps", "format"), "title": ("title",),
              "background": ("background",)}
    if name in fields:
        for key in fields[name]:
            if before is not None and key in before:
                current[key] = before[key]
            else:
                current.pop(key, None)
        return
    scene_id = name.removeprefix("scene:")
    scenes = _entries(current)
    old_list = _entries(before) if before is not None else []
    old = next((e for e in old_list if isinstance(e, dict) and e.get("id") == scene_id), None)
    at = next((i for i, e in enumerate(scenes) if isinstance(e, dict) and e.get("id") == scene_id), None)
    if at is not None:
        scenes.pop(at)
    if old is not None:  # back to its entry, at its place
        scenes.insert(min(old_list.index(old), len(scenes)), old)


def revert(files: TurnFiles, change: Change, current: Mapping[str, bytes | None]) -> Mapping[str, bytes | None]:
    answer: dict[str, bytes | None] = {}
    for path in change.files:
        if path != COMPOSITION_FILE:
            answer[path] = files.before(path)
            continue
        try:
            now = json.loads(current.get(path) or b"")
            before_text = text_of(files.before(path))
            before = json.loads(before_text) if before_text else None
        except json.JSONDecodeError:
            raise ValueError("video.json is not valid JSON; revert the file as a whole") from None
        if change.id == "video:video.json" or not isinstance(now, dict):
            answer[path] = files.before(path)
            continue
        _revert_json(before if isinstance(before, dict) else None, now, change)
        answer[path] = (json.dumps(now, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    return answer


DESCRIBER = ChangeDescriber(mode="video", describe=describe, revert=revert)
