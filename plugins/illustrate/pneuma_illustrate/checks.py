"""The illustrate mode's check after every turn (docs/checks.md): the board
and the images agree, and nothing secret slipped into a record.

- board.json reads (valid JSON, every row with an id);
- every image board.json lists has its image file and its record;
- every record's parent is an image that exists (regeneration follows it);
- every image file the turn wrote decodes (Pillow when installed, else the
  PNG's own structure: chunk checksums and the pixel data's size; the
  signature for JPEG and WebP);
- no record holds a key-shaped string (``sk-…``, ``Bearer …``): a record
  names its provider, never its key.
"""

from __future__ import annotations

import io
import json
import re
import struct
import zlib
from typing import Any

from pneuma.api import CheckRequest, Problem, TurnCheck, image_format
from pneuma_illustrate.records import (
    BOARD_FILE,
    IMAGES_DIR,
    BadFile,
    Board,
    Files,
    ImageRecord,
    record_path,
    valid_id,
)

_KEY_SHAPED = re.compile(r"(?:\bsk-[A-Za-z0-9_-]{16,}|\bBearer\s+[A-Za-z0-9._~+/=-]{12,}|\bAIza[0-9A-Za-z_-]{30,}"
                         r"|\bxox[abp]-[A-Za-z0-9-]{10,}|\bgh[pousr]_[A-Za-z0-9]{30,})")
_KEY_FIELDS = ("api_key", "apiKey", "key", "token", "authorization", "secret")
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # PNG colour type -> samples per pixel


def png_problem(data: bytes) -> str | None:
    """Why ``data`` is not a whole PNG (None: it is): every chunk's CRC, an
    IHDR first, an IEND last, and pixel data of the size the header says."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "it is not a PNG"
    offset, idat, header = 8, b"", None
    while offset + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        crc = data[offset + 8 + length:offset + 12 + length]
        if len(body) < length or len(crc) < 4 or zlib.crc32(kind + body) != struct.unpack(">I", crc)[0]:
            return f"its {kind.decode('latin-1')} chunk is cut off or damaged"
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body[:13])
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        offset += 12 + length
    else:
        return "it ends before its IEND chunk"
    if header is None:
        return "it has no IHDR header"
    width, height, depth, colour, _, _, interlace = header
    try:
        pixels = zlib.decompress(idat)
    except zlib.error:
        return "its pixel data does not decompress"
    if interlace == 0 and colour in _CHANNELS:
        row = (width * _CHANNELS[colour] * depth + 7) // 8 + 1
        if len(pixels) != row * height:
            return f"its pixel data is {len(pixels)} bytes, not the {row * height} a {width}x{height} image needs"
    return None


def decode_problem(data: bytes) -> str | None:
    """Why the image bytes do not decode (None: they do)."""
    kind = image_format(data)
    if kind is None:
        return "it is not a PNG, JPEG or WebP image"
    try:
        from PIL import Image
    except ImportError:
        return png_problem(data) if kind == "png" else None
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
    except Exception as exc:  # Pillow raises many kinds for a broken file
        return f"it does not decode ({type(exc).__name__}: {exc})"[:200]
    return None


def _board(files: Files) -> tuple[Board | None, list[Problem]]:
    try:
        return files.board(), []
    except BadFile as exc:
        return None, [Problem(str(exc), file=BOARD_FILE)]


def _board_problems(files: Files, board: Board) -> list[Problem]:
    problems: list[Problem] = []
    for row in board.rows:
        for image_id in row.images:
            locate = {"row": row.id, "image": image_id}
            if files.image_path(image_id) is None:
                problems.append(Problem(f'board.json row "{row.id}" lists {image_id}, which has no image file '
                                        f"in {IMAGES_DIR}/", file=BOARD_FILE, locate=locate))
            if files.read(record_path(image_id)) is None:
                problems.append(Problem(f"{image_id} has no record {record_path(image_id)} (prompt, model, seed, "
                                        "parent): it cannot be regenerated", file=BOARD_FILE, locate=locate))
    return problems


def _record_problems(files: Files, image_id: str) -> list[Problem]:
    rel = record_path(image_id)
    raw = files.read(rel)
    if raw is None:
        return []
    text = raw.decode("utf-8", errors="replace")
    problems: list[Problem] = []
    if _KEY_SHAPED.search(text):
        problems.append(Problem(f"{rel} holds something shaped like an API key: a record names its provider, "
                                "never its key; remove it (and rotate the key)", file=rel))
    try:
        data = json.loads(text)
        record = ImageRecord.from_json(data, rel)
    except (ValueError, BadFile) as exc:
        return [*problems, Problem(f"{rel} does not read as a record: {exc}", file=rel)]
    problems += _field_problems(rel, data)
    found = [name for name in _KEY_FIELDS if name in data]
    if found:
        problems.append(Problem(f"{rel} has a {found[0]} field: a record never holds credentials", file=rel))
    if record.parent is not None and files.read(record_path(record.parent)) is None:
        problems.append(Problem(f"{rel} names parent {record.parent}, which does not exist",
                                file=rel, locate={"row": record.row, "image": image_id}))
    return problems


def _field_problems(rel: str, data: dict[str, Any]) -> list[Problem]:
    """A parent or seed the record reader would quietly drop: varying or
    regenerating from this record would lose it."""
    problems: list[Problem] = []
    parent, seed = data.get("parent"), data.get("seed")
    if parent is not None and not (isinstance(parent, str) and valid_id(parent)):
        problems.append(Problem(f'{rel}: "parent" is {json.dumps(parent)[:80]}, not an image id or null', file=rel))
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        problems.append(Problem(f'{rel}: "seed" is {json.dumps(seed)[:80]}, not a whole number or null', file=rel))
    return problems


def board_and_images_agree(request: CheckRequest) -> list[Problem]:
    touched = [path for path in request.changed if path == BOARD_FILE or path.startswith(IMAGES_DIR + "/")]
    if not touched:
        return []
    files = Files(request.workspace)
    board, problems = _board(files)
    if board is not None:
        problems += _board_problems(files, board)
    for path in touched:
        stem, _, suffix = path[len(IMAGES_DIR) + 1:].rpartition(".")
        if "/" in stem or not stem:
            continue
        if suffix == "json":
            problems += _record_problems(files, stem)
            continue
        if suffix not in ("png", "jpg", "webp"):
            continue
        data = files.read(path, 64 * 1024 * 1024)
        problem = decode_problem(data) if data is not None else None
        if problem is not None:
            problems.append(Problem(f"{path} does not decode: {problem}", file=path, locate={"image": stem}))
    return problems


CHECKS = [TurnCheck(mode="illustrate", name="images",
                    label={"en": "Images and records agree", "zh-CN": "图片与记录一致"},
                    run=board_and_images_agree)]
