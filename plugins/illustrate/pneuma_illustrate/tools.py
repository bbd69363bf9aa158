"""The illustrate mode's agent tools: ``generate_image`` and ``vary_image``.

Both call the host's image gateway (``pneuma.api.ImageGateway``, configured
outside the workspace: docs/illustrate.md), then write each image and its
record under ``images/`` and add the ids to their row of ``board.json``;
they never touch ``choices.json`` (the person's marks). Nothing is written
until every image has arrived, and a write that fails takes back the files
written before it, so a failed call leaves the workspace as it was.

When the endpoint takes a seed, each image gets a seed of its own (one
request per image), so its record regenerates exactly that image;
OpenAI's own endpoint has no seed, and its records keep a null seed.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from pneuma.api import (
    ErrorCode,
    GatewayError,
    GeneratedImage,
    ImageGateway,
    ImageSettings,
    ToolContext,
    ToolError,
    load_image_settings,
)
from pneuma_illustrate.records import (
    BOARD_FILE,
    IMAGES_DIR,
    BadFile,
    Board,
    Files,
    ImageRecord,
    Row,
    board_text,
    new_image_id,
    record_path,
    slug,
    valid_id,
)

_SIZE = re.compile(r"[1-9][0-9]{1,4}x[1-9][0-9]{1,4}")
_SEED_LIMIT = 2**31 - 1
# GatewayError.kind -> the E_* code the agent reads
_CODES: dict[str, ErrorCode] = {"not_configured": "E_UNAVAILABLE", "invalid_settings": "E_UNAVAILABLE",
          "auth_failed": "E_UNAUTHORIZED", "content_policy": "E_POLICY_VIOLATION",
          "connection_error": "E_UNAVAILABLE", "timeout": "E_TIMEOUT",
          "invalid_response": "E_PREVIEW_FAIL"}
_HINTS = {"not_configured": "Tell the person what to set (the message says it); do not retry until they have.",
          "invalid_settings": "Tell the person which setting to fix; do not retry until they have.",
          "auth_failed": "Tell the person to check the key variable named in the message.",
          "content_policy": "Rewrite the prompt to stay within the provider's policy, or ask the person.",
          "connection_error": "Tell the person the image server is not reachable; ask before retrying.",
          "timeout": "Try once more with n=1, or ask the person."}


@dataclass(frozen=True)
class Plan:
    """One call's images to make: where they go and how they are asked for."""

    prompt: str
    row_id: str
    row_title: str
    n: int
    size: str | None  # None: the provider's configured size
    seed: int | None
    parent: str | None


def provider_settings(ctx: ToolContext) -> ImageSettings:
    return load_image_settings(ctx.workspace, os.environ)


async def generate_image(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Make 1-4 images of ``prompt`` into ``row`` (created if new)."""
    files = Files(ctx.sandbox)
    board = _board(files)
    prompt = str(args["prompt"]).strip()
    if not prompt:
        raise ToolError("E_BAD_ARGS", "prompt is empty", hint="Describe the image to make")
    parent = _parent_record(files, args.get("parent"))
    row_id = _row_id(args.get("row"), parent, prompt, board)
    existing = board.row(row_id)
    title = str(args.get("title") or (existing.title if existing else "") or args.get("row") or row_id)
    plan = Plan(prompt=prompt, row_id=row_id, row_title=title, n=int(args.get("n") or 1),
                size=_size(args.get("size"), parent), seed=args.get("seed"),
                parent=parent.id if parent else None)
    return await _make(ctx, files, plan)


async def vary_image(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Variants of image ``id`` in its row: its prompt (with ``prompt_change``
    added) and a new seed each, or, with ``same_seed``, its exact prompt and
    seed again (a regeneration)."""
    files = Files(ctx.sandbox)
    board = _board(files)
    parent = _parent_record(files, args["id"])
    assert parent is not None  # id is required by the schema
    change = str(args.get("prompt_change") or "").strip()
    same_seed = bool(args.get("same_seed"))
    if same_seed and change:
        raise ToolError("E_BAD_ARGS", "same_seed regenerates the image exactly: give no prompt_change with it")
    row = board.row(parent.row) or board.row_of(parent.id)
    plan = Plan(prompt=f"{parent.prompt}; {change}" if change else parent.prompt,
                row_id=row.id if row else parent.row, row_title=row.title if row else parent.row,
                n=int(args.get("n") or 1), size=_size(None, parent),
                seed=parent.seed if same_seed else None, parent=parent.id)
    return await _make(ctx, files, plan)


async def _make(ctx: ToolContext, files: Files, plan: Plan) -> dict[str, Any]:
    settings = provider_settings(ctx)
    plan = replace(plan, size=plan.size or settings.size)
    gateway = ImageGateway(settings, os.environ)
    seeds = _seeds(plan, settings.sends_seed(gateway.env))
    try:
        if seeds is None:
            made = await gateway.generate(plan.prompt, n=plan.n, size=plan.size)
        else:
            batches = await asyncio.gather(*(gateway.generate(plan.prompt, n=1, size=plan.size, seed=seed)
                                             for seed in seeds))
            made = [batch[0] for batch in batches]
    except GatewayError as exc:
        raise ToolError(_CODES.get(exc.kind, "E_PREVIEW_FAIL"), f"generate_image: {exc}",
                        details={"kind": exc.kind, "status": exc.status},
                        hint=_HINTS.get(exc.kind)) from None
    provider = settings.provider_name(gateway.env)
    # Two calls at once (parallel tool calls, two `pneuma tool` processes)
    # must not both read board.json before either writes it.
    with ctx.state.lock():
        return _write(files, plan, made, seeds, provider, settings.model)


def _seeds(plan: Plan, endpoint_takes_seed: bool) -> list[int] | None:
    """One seed per image when the endpoint takes seeds; None when it does not."""
    if not endpoint_takes_seed:
        return None
    first = plan.seed if plan.seed is not None else secrets.randbelow(_SEED_LIMIT - 8)
    return [first + index for index in range(plan.n)]


def _write(files: Files, plan: Plan, made: list[GeneratedImage], seeds: list[int] | None,
           provider: str, model: str) -> dict[str, Any]:
    board = _board(files)  # again: the person or the agent may have changed it meanwhile
    taken = set(board.image_ids()) | set(files.record_ids())
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    written: list[str] = []
    answers: list[dict[str, Any]] = []
    try:
        for index, image in enumerate(made):
            image_id = new_image_id(plan.row_id, taken)
            taken.add(image_id)
            record = ImageRecord(id=image_id, prompt=plan.prompt, model=model, provider=provider,
                                 size=str(plan.size), seed=seeds[index] if seeds else None, parent=plan.parent,
                                 row=plan.row_id, created=created, revised_prompt=image.revised_prompt)
            path = f"{IMAGES_DIR}/{image_id}.{image.format}"
            _write_file(files, path, image.data, written)
            _write_file(files, record_path(image_id), _json_bytes(record.to_json()), written)
            answers.append({"id": image_id, "path": path, "record": record_path(image_id),
                            "seed": record.seed, "revised_prompt": record.revised_prompt})
        row = board.row(plan.row_id)
        if row is None:
            row = Row(id=plan.row_id, title=plan.row_title, prompt=plan.prompt)
            board.rows.append(row)
        row.images.extend(answer["id"] for answer in answers)
        _write_file(files, BOARD_FILE, board_text(board).encode("utf-8"), [])
    except BaseException:
        _take_back(files, written)
        raise
    return {"row": plan.row_id, "images": answers, "provider": provider, "model": model,
            "size": plan.size}


def _write_file(files: Files, rel: str, data: bytes, written: list[str]) -> None:
    try:
        files.write(rel, data)
    except ToolError:
        raise
    except OSError as exc:
        raise ToolError("E_IO", f"cannot write {rel}: {exc.strerror or type(exc).__name__}",
                        details={"path": rel}) from None
    written.append(rel)


def _take_back(files: Files, written: list[str]) -> None:
    for rel in reversed(written):
        try:
            files.sandbox.unlink(rel)
        except (OSError, ToolError):
            pass  # already gone: nothing of it is left to take back


def _json_bytes(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _board(files: Files) -> Board:
    try:
        return files.board()
    except BadFile as exc:
        raise ToolError("E_PARSE_FAIL", str(exc), details={"path": BOARD_FILE},
                        hint="Fix board.json first (it must stay valid JSON with a rows list)") from None


def _parent_record(files: Files, image_id: Any) -> ImageRecord | None:
    if image_id is None or image_id == "":
        return None
    image_id = str(image_id)
    if not valid_id(image_id):
        raise ToolError("E_BAD_ARGS", f"{image_id!r} is not an image id (e.g. hero-3f2a)")
    try:
        record = files.record(image_id)
    except BadFile as exc:
        raise ToolError("E_PARSE_FAIL", str(exc), details={"path": record_path(image_id)}) from None
    if record is None:
        raise ToolError("E_NOT_FOUND", f"there is no image {image_id} (no {record_path(image_id)})",
                        details={"id": image_id}, hint="Take the id from board.json")
    return record


def _row_id(row: Any, parent: ImageRecord | None, prompt: str, board: Board) -> str:
    if row:
        return str(row) if board.row(str(row)) is not None else slug(str(row), "row")
    if parent is not None:
        return parent.row
    base = slug(" ".join(prompt.split()[:3]), "row")
    candidate, number = base, 2
    while board.row(candidate) is not None:
        candidate, number = f"{base}-{number}", number + 1
    return candidate


def _size(size: Any, parent: ImageRecord | None) -> str | None:
    if size:
        if not _SIZE.fullmatch(str(size)):
            raise ToolError("E_BAD_ARGS", f"size {size!r} is not WIDTHxHEIGHT (e.g. 1024x1024)")
        return str(size)
    if parent is not None and _SIZE.fullmatch(parent.size):
        return parent.size
    return None
