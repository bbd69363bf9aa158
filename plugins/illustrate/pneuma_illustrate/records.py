"""The illustrate workspace's files, read in one place (docs/illustrate.md):

- ``images/<id>.<png|jpg|webp>``: an image; ``images/<id>.json`` beside it,
  its record (prompt, model, provider, size, seed, parent, row, created,
  revised_prompt), so any image can be regenerated or varied;
- ``board.json``: the rows the viewer lays out, in order, each with the ids
  of its variants;
- ``choices.json``: the person's picks, rejections, stars and comments
  (written by the page; read here, never written).

Every read goes through the workspace sandbox (no link leads outside);
every write is the host's atomic write, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pneuma.api import Sandbox, ToolError, write_in_workspace

IMAGES_DIR = "images"
BOARD_FILE = "board.json"
CHOICES_FILE = "choices.json"
IMAGE_FORMATS = ("png", "jpg", "webp")
MAX_JSON_BYTES = 4 * 1024 * 1024
MAX_IMAGE_BYTES = 32 * 1024 * 1024
_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


class BadFile(ValueError):
    """A workspace file that cannot be read as what it should be; the message
    names the file and what is wrong, for the person and the agent."""


@dataclass
class ImageRecord:
    """What is kept beside one image. ``provider`` is the configured name,
    never a key; ``parent`` the image this one varies or regenerates."""

    id: str
    prompt: str
    model: str
    provider: str
    size: str
    seed: int | None
    parent: str | None
    row: str
    created: str
    revised_prompt: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any, where: str) -> ImageRecord:
        if not isinstance(data, dict):
            raise BadFile(f"{where} is not a JSON object")
        missing = [name for name in ("id", "prompt", "row") if not isinstance(data.get(name), str)]
        if missing:
            raise BadFile(f"{where} has no {', '.join(missing)} (text)")
        seed = data.get("seed")
        parent = data.get("parent")
        revised = data.get("revised_prompt")
        return cls(id=data["id"], prompt=data["prompt"], model=str(data.get("model") or ""),
                   provider=str(data.get("provider") or ""), size=str(data.get("size") or ""),
                   seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
                   parent=parent if isinstance(parent, str) and parent else None, row=data["row"],
                   created=str(data.get("created") or ""),
                   revised_prompt=revised if isinstance(revised, str) else None)


@dataclass
class Row:
    id: str
    title: str
    prompt: str
    images: list[str] = field(default_factory=list)


@dataclass
class Board:
    title: str = ""
    rows: list[Row] = field(default_factory=list)

    def row(self, row_id: str) -> Row | None:
        return next((row for row in self.rows if row.id == row_id), None)

    def row_of(self, image_id: str) -> Row | None:
        return next((row for row in self.rows if image_id in row.images), None)

    def image_ids(self) -> list[str]:
        return [image for row in self.rows for image in row.images]

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "rows": [asdict(row) for row in self.rows]}


@dataclass(frozen=True)
class Choice:
    """The person's marks on one image (choices.json)."""

    status: str | None = None  # "picked" | "rejected" | None
    starred: bool = False
    comment: str = ""


def parse_board(text: str, where: str = BOARD_FILE) -> Board:
    """``board.json``'s text as a ``Board``, or ``BadFile`` saying what is wrong."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BadFile(f"{where} is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rows", []), list):
        raise BadFile(f'{where} must be an object with "rows": [...]')
    rows: list[Row] = []
    for index, raw in enumerate(data.get("rows", [])):
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
            raise BadFile(f"{where}: row {index + 1} has no id")
        images = raw.get("images", [])
        if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
            raise BadFile(f'{where}: row "{raw["id"]}" has "images" that is not a list of ids')
        rows.append(Row(id=raw["id"], title=str(raw.get("title") or raw["id"]),
                        prompt=str(raw.get("prompt") or ""), images=list(images)))
    return Board(title=str(data.get("title") or ""), rows=rows)


def board_text(board: Board) -> str:
    return json.dumps(board.to_json(), ensure_ascii=False, indent=2) + "\n"


def parse_choices(text: str) -> dict[str, Choice]:
    """``choices.json``'s marks; anything unreadable counts as no mark (the
    page owns the file and rewrites it whole)."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    choices: dict[str, Choice] = {}
    for image, raw in (data.items() if isinstance(data, dict) else []):
        if isinstance(raw, dict):
            status = raw.get("status") if raw.get("status") in ("picked", "rejected") else None
            comment = str(raw["comment"]) if isinstance(raw.get("comment"), str) else ""
            choices[str(image)] = Choice(status, raw.get("starred") is True, comment)
    return choices


class Files:
    """The illustrate files of one workspace, through its sandbox."""

    def __init__(self, root: Path | Sandbox) -> None:
        self.sandbox = root if isinstance(root, Sandbox) else Sandbox(Path(root))

    def read(self, rel: str, limit: int = MAX_JSON_BYTES) -> bytes | None:
        """The file's bytes, or None when there is none (or it is refused)."""
        try:
            data, _ = self.sandbox.read_bytes(rel, limit)
        except (ToolError, OSError):
            return None
        if len(data) > limit:
            raise BadFile(f"{rel} is over {limit // 2**20} MB")
        return data

    def board(self) -> Board:
        """The board (an empty one when there is no board.json yet)."""
        data = self.read(BOARD_FILE)
        if data is None:
            return Board()
        return parse_board(data.decode("utf-8", errors="replace"))

    def choices(self) -> dict[str, Choice]:
        data = self.read(CHOICES_FILE)
        return parse_choices(data.decode("utf-8", errors="replace")) if data is not None else {}

    def record(self, image_id: str) -> ImageRecord | None:
        """The record beside image ``image_id``; None when there is none;
        ``BadFile`` when it is there but unreadable."""
        rel = record_path(image_id)
        data = self.read(rel)
        if data is None:
            return None
        try:
            raw = json.loads(data)
        except ValueError as exc:
            raise BadFile(f"{rel} is not valid JSON ({exc})") from None
        return ImageRecord.from_json(raw, rel)

    def image_path(self, image_id: str) -> str | None:
        """The image file of ``image_id`` (the first format found), or None."""
        for suffix in IMAGE_FORMATS:
            rel = f"{IMAGES_DIR}/{image_id}.{suffix}"
            if self.sandbox.is_allowed(rel) and (self.sandbox.root / rel).is_file():
                return rel
        return None

    def image_bytes(self, image_id: str) -> tuple[str, bytes] | None:
        rel = self.image_path(image_id)
        data = self.read(rel, MAX_IMAGE_BYTES) if rel else None
        return (rel, data) if rel and data is not None else None

    def record_ids(self) -> list[str]:
        """Ids of every record in images/, sorted."""
        folder = self.sandbox.root / IMAGES_DIR
        if not folder.is_dir():
            return []
        return sorted(path.stem for path in folder.glob("*.json") if valid_id(path.stem))

    def write(self, rel: str, data: bytes) -> None:
        write_in_workspace(self.sandbox, rel, data)


def record_path(image_id: str) -> str:
    return f"{IMAGES_DIR}/{image_id}.json"


def valid_id(text: str) -> bool:
    return bool(_ID.fullmatch(text))


def slug(text: str, fallback: str = "image") -> str:
    """A short lower-case id part from ``text`` ("Hero shot!" -> "hero-shot")."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    value = "-".join(words)[:24].strip("-")
    return value or fallback


def new_image_id(row_id: str, taken: Iterable[str]) -> str:
    """A short, unique, stable id: the row's slug and four hex digits."""
    used = set(taken)
    base = slug(row_id)
    while True:
        candidate = f"{base}-{secrets.token_hex(2)}"
        if candidate not in used:
            return candidate


def parent_chain(files: Files, image_id: str, limit: int = 32) -> list[str]:
    """``image_id``'s ancestors, nearest first (a loop or a missing record ends it)."""
    chain: list[str] = []
    current: str | None = image_id
    while current is not None and len(chain) < limit:
        try:
            record = files.record(current)
        except BadFile:
            break
        current = record.parent if record else None
        if current is None or current in chain or current == image_id:
            break
        chain.append(current)
    return chain


def choices_summary(choices: Mapping[str, Choice]) -> dict[str, list[str]]:
    """Ids picked, rejected and starred, and those with a comment."""
    return {"picked": sorted(i for i, c in choices.items() if c.status == "picked"),
            "rejected": sorted(i for i, c in choices.items() if c.status == "rejected"),
            "starred": sorted(i for i, c in choices.items() if c.starred),
            "commented": sorted(i for i, c in choices.items() if c.comment.strip())}
