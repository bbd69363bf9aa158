"""A turn's changes in the illustrate mode's terms: "Row “Hero”: 3 images
generated", "Image hero-3f2a: varied from hero-1a2b", "Row “Hero”: row
added", read from board.json and the image records before and after the
turn (never the live workspace); marks the person made in the page while
the turn ran read "Image fox-1: picked · starred". ``locate`` is the
viewer's ``navigate-to`` params: ``{row, image}``.

New images share board.json with every other change of the turn, so
reverting one change takes its own ids out of the current board (and the
row it added, once empty) and deletes its image files and records, leaving
the rest of the turn in place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pneuma.api import Change, ChangeDescriber, TurnFiles
from pneuma_illustrate.records import (
    BOARD_FILE,
    CHOICES_FILE,
    IMAGE_FORMATS,
    IMAGES_DIR,
    BadFile,
    Board,
    ImageRecord,
    board_text,
    parse_board,
    parse_choices,
)


@dataclass(frozen=True)
class NewImage:
    id: str
    files: tuple[str, ...]
    record: ImageRecord | None

    @property
    def parent(self) -> str | None:
        return self.record.parent if self.record is not None else None


def _board(data: bytes | None) -> Board | None:
    if data is None:
        return None
    try:
        return parse_board(data.decode("utf-8", errors="replace"))
    except BadFile:
        return None


def _image_id(path: str) -> str | None:
    folder, _, name = path.partition("/")
    stem, dot, suffix = name.rpartition(".")
    if folder != IMAGES_DIR or "/" in name or not dot or suffix not in (*IMAGE_FORMATS, "json"):
        return None
    return stem


def _new_images(files: TurnFiles) -> dict[str, NewImage]:
    """Images whose files the turn added, by id, with their records."""
    paths: dict[str, list[str]] = {}
    for item in files.changed:
        image_id = _image_id(item.path)
        if image_id is not None and item.status == "added":
            paths.setdefault(image_id, []).append(item.path)
    found: dict[str, NewImage] = {}
    for image_id, image_paths in paths.items():
        record = None
        raw = files.after(f"{IMAGES_DIR}/{image_id}.json")
        if raw is not None:
            try:
                record = ImageRecord.from_json(json.loads(raw), image_id)
            except (ValueError, BadFile):
                record = None
        found[image_id] = NewImage(image_id, tuple(sorted(image_paths)), record)
    return found


def _label(en: str, zh: str) -> dict[str, str]:
    return {"en": en, "zh-CN": zh}


def _row_where(title: str) -> dict[str, str]:
    return _label(f"Row “{title}”", f"行“{title}”")


def _plural(count: int) -> str:
    return "image" if count == 1 else "images"


def _row_changes(row_id: str, title: str, added_row: bool, fresh: list[NewImage]) -> list[Change]:
    files = tuple(path for image in fresh for path in image.files) + (BOARD_FILE,)
    locate = {"row": row_id, **({"image": fresh[0].id} if fresh else {})}
    if added_row:
        en = f"row added, {len(fresh)} {_plural(len(fresh))} generated" if fresh else "row added"
        zh = f"新增一行，生成 {len(fresh)} 张图" if fresh else "新增一行"
        return [Change(id=f"illustrate:row:{row_id}:added", where=_row_where(title), what=_label(en, zh),
                       kind="added", files=files, locate=locate)]
    if not fresh:
        return []
    return [Change(id=f"illustrate:row:{row_id}:generated", where=_row_where(title),
                   what=_label(f"{len(fresh)} {_plural(len(fresh))} generated", f"生成 {len(fresh)} 张图"),
                   kind="added", files=files, locate=locate)]


def _varied(image: NewImage, row_id: str, parent: ImageRecord | None) -> Change:
    record = image.record
    assert record is not None and record.parent is not None
    again = parent is not None and parent.prompt == record.prompt and parent.seed == record.seed
    en, zh = (("regenerated from", "重新生成自") if again else ("varied from", "变体，来自"))
    return Change(id=f"illustrate:image:{image.id}:varied", where=_label(f"Image {image.id}", f"图片 {image.id}"),
                  what=_label(f"{en} {record.parent}", f"{zh} {record.parent}"), kind="added",
                  files=(*image.files, BOARD_FILE), locate={"row": row_id, "image": image.id})


def _parent(files: TurnFiles, image_id: str) -> ImageRecord | None:
    raw = files.after(f"{IMAGES_DIR}/{image_id}.json") or files.before(f"{IMAGES_DIR}/{image_id}.json")
    try:
        return ImageRecord.from_json(json.loads(raw), image_id) if raw is not None else None
    except (ValueError, BadFile):
        return None


def _edits(row_id: str, before: Board, after: Board) -> list[Change]:
    """A row retitled, re-prompted, or with images taken out; a row removed."""
    old, new = before.row(row_id), after.row(row_id)
    if old is None:
        return []
    if new is None:
        return [Change(id=f"illustrate:row:{row_id}:removed", where=_row_where(old.title),
                       what=_label("row removed", "删除一行"), kind="removed", files=(BOARD_FILE,))]
    items_en: list[str] = []
    items_zh: list[str] = []
    if old.title != new.title:
        items_en.append(f"retitled “{new.title}”")
        items_zh.append(f"改名为“{new.title}”")
    if old.prompt != new.prompt:
        items_en.append("prompt changed")
        items_zh.append("提示词修改")
    gone = [image for image in old.images if image not in new.images]
    if gone:
        items_en.append(f"{len(gone)} {_plural(len(gone))} taken out")
        items_zh.append(f"移出 {len(gone)} 张图")
    if not items_en:
        return []
    return [Change(id=f"illustrate:row:{row_id}:edited", where=_row_where(new.title),
                   what=_label(" · ".join(items_en), " · ".join(items_zh)),
                   kind="removed" if gone and len(items_en) == 1 else "changed",
                   files=(BOARD_FILE,), locate={"row": row_id})]


def describe(files: TurnFiles) -> Sequence[Change]:
    before = _board(files.before(BOARD_FILE)) or Board()
    after = _board(files.after(BOARD_FILE))
    if after is None:
        return []  # no board after the turn (or a broken one): the per-file changes say it
    new = _new_images(files)
    changes: list[Change] = []
    for row in after.rows:
        added = [new[i] for i in row.images if i in new]
        fresh = [image for image in added if image.parent is None]
        changes += _row_changes(row.id, row.title, before.row(row.id) is None, fresh)
        changes += [_varied(image, row.id, _parent(files, image.parent))
                    for image in added if image.parent is not None]
        changes += _edits(row.id, before, after)
    changes += [change for row in before.rows if after.row(row.id) is None
                for change in _edits(row.id, before, after)]
    return changes + _choice_changes(files, after)


def _marks(text: bytes | None) -> dict[str, dict[str, object]]:
    """choices.json as plain marks per image (no mark: absent)."""
    choices = parse_choices(text.decode("utf-8", errors="replace")) if text is not None else {}
    return {image: {"status": c.status, "starred": c.starred, "comment": c.comment}
            for image, c in choices.items() if c.status or c.starred or c.comment}


_MARK_WORDS = {"picked": ("picked", "选中"), "rejected": ("rejected", "否决"), None: ("unmarked", "取消标记")}


def _choice_changes(files: TurnFiles, board: Board) -> list[Change]:
    """The person's marks that changed while the turn ran (the page writes
    choices.json): one change per image, reverted alone."""
    if not any(item.path == CHOICES_FILE for item in files.changed):
        return []
    old, new = _marks(files.before(CHOICES_FILE)), _marks(files.after(CHOICES_FILE))
    changes: list[Change] = []
    for image in sorted(set(old) | set(new)):
        was = old.get(image, {"status": None, "starred": False, "comment": ""})
        now = new.get(image, {"status": None, "starred": False, "comment": ""})
        words: list[tuple[str, str]] = []
        if was["status"] != now["status"]:
            words.append(_MARK_WORDS.get(now["status"], _MARK_WORDS[None]))  # type: ignore[arg-type]
        if was["starred"] != now["starred"]:
            words.append(("starred", "加星") if now["starred"] else ("unstarred", "取消星标"))
        if was["comment"] != now["comment"]:
            words.append(("comment changed", "评论修改"))
        if not words:
            continue
        row = board.row_of(image)
        changes.append(Change(id=f"illustrate:choice:{image}", where=_label(f"Image {image}", f"图片 {image}"),
                              what=_label(" · ".join(w[0] for w in words), " · ".join(w[1] for w in words)),
                              kind="changed", files=(CHOICES_FILE,),
                              locate={"image": image, **({"row": row.id} if row else {})}))
    return changes


def _revert_choice(files: TurnFiles, image: str, current: bytes | None) -> bytes:
    """choices.json as it is now, with ``image``'s marks as before the turn."""
    try:
        data = json.loads(current or b"{}")
    except ValueError:
        data = {}
    data = data if isinstance(data, dict) else {}
    before = _marks(files.before(CHOICES_FILE)).get(image)
    if before is None:
        data.pop(image, None)
    else:
        data[image] = before
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def revert(files: TurnFiles, change: Change, current: Mapping[str, bytes | None]) -> Mapping[str, bytes | None]:
    """Undo one change: a generation deletes its images and records and takes
    their ids (and a row it added, once empty) out of the current board; a
    mark puts that image's marks back in the current choices.json; any other
    change puts board.json back as it was before the turn."""
    if change.id.startswith("illustrate:choice:"):
        image = change.id.removeprefix("illustrate:choice:")
        return {CHOICES_FILE: _revert_choice(files, image, current.get(CHOICES_FILE))}
    answer: dict[str, bytes | None] = {}
    removed_ids = {image_id for path in change.files if (image_id := _image_id(path)) is not None}
    if not removed_ids:
        return {path: files.before(path) for path in change.files}
    for path in change.files:
        if path != BOARD_FILE:
            answer[path] = None
    board = _board(current.get(BOARD_FILE))
    if board is not None:
        added_row = change.id.endswith(":added") and change.id.startswith("illustrate:row:")
        for row in board.rows:
            row.images = [image for image in row.images if image not in removed_ids]
        board.rows = [row for row in board.rows
                      if row.images or not (added_row and change.locate and row.id == change.locate.get("row"))]
        answer[BOARD_FILE] = board_text(board).encode("utf-8")
    return answer


DESCRIBER = ChangeDescriber(mode="illustrate", describe=describe, revert=revert)
