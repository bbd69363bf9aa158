"""``POST /api/edits {path, content, base_sha256}``: the person's in-place
edit of a workspace text file (docs/viewer-contract.md, "Edit in place").

The write goes through the one sandbox (as ``POST /api/files``) and only if
the file on disk still hashes to ``base_sha256``, the text the edit started
from. Otherwise the agent (or another tab) wrote meanwhile: the answer is
``409 E_CONFLICT`` with the file's current text, and the person's text is
kept under ``.pneuma/edits/conflicts/`` so that neither version is lost.
The check and the write run with no ``await`` between them, so two edits
with the same base cannot both win.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from aiohttp import web

from pneuma.core.errors import ToolError
from pneuma.core.files import write_in_workspace
from pneuma.editing.conflicts import keep_conflicting_text
from pneuma.editing.hand_edits import HandEdits
from pneuma.server.routes_files import read_json_body

# An edit is text a person typed into a document: far below a file write's limit.
MAX_EDIT_BYTES = 10 * 1024 * 1024
# JSON may spell one character as six (\uXXXX): a body beyond this is refused unread.
MAX_BODY_BYTES = 6 * MAX_EDIT_BYTES + 64 * 1024
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _string_field(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise ToolError("E_BAD_ARGS", f"'{name}' must be a string", details={"field": name})
    return value


def _base_field(body: dict[str, Any]) -> str:
    base = body.get("base_sha256")
    if not isinstance(base, str) or not _SHA256.match(base):
        raise ToolError("E_BAD_ARGS", "'base_sha256' must be the 64 lowercase hex digits of the "
                        "SHA-256 of the text the edit started from",
                        details={"field": "base_sha256"})
    return base


def _read_current(pneuma: Any, rel: str) -> bytes:
    try:
        fd, info = pneuma.sandbox.open_file(rel)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise ToolError("E_NOT_FOUND", f"File not found: {rel}; an in-place edit changes an "
                        "existing file", details={"path": rel}) from None
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > MAX_EDIT_BYTES:
            raise ToolError("E_TOO_LARGE", f"{rel} is {info.st_size} bytes; in-place edits "
                            f"stop at {MAX_EDIT_BYTES}", details={"path": rel,
                                                                  "size": info.st_size})
        return handle.read(MAX_EDIT_BYTES + 1)


def _conflict(pneuma: Any, rel: str, current: bytes, mine: bytes) -> ToolError:
    kept = keep_conflicting_text(pneuma.workspace, rel, mine)
    return ToolError(
        "E_CONFLICT", f"{rel} changed since the edit started (the agent or another tab "
        "wrote it); nothing was written",
        details={"path": rel, "current": current.decode("utf-8", "replace"),
                 "current_sha256": sha256_hex(current), "kept": kept},
        hint="show both versions; send the edit again with base_sha256 of the current text "
             "to keep the person's")


def apply_edit(pneuma: Any, edits: HandEdits, body: dict[str, Any]) -> dict[str, Any]:
    """Check and write one edit (no awaits: see the module's text)."""
    sandbox = pneuma.sandbox
    rel = body.get("path")
    sandbox.resolve_writable(rel)  # E_DENY_PATH before anything is read
    canonical = sandbox.normalize(rel)
    try:
        mine = _string_field(body, "content").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 file holds it
        raise ToolError("E_BAD_ARGS", "'content' is not valid Unicode text",
                        details={"field": "content"}) from None
    base = _base_field(body)
    if len(mine) > MAX_EDIT_BYTES:
        raise ToolError("E_TOO_LARGE", f"the edit is {len(mine)} bytes; in-place edits stop "
                        f"at {MAX_EDIT_BYTES}", details={"size": len(mine)})
    current = _read_current(pneuma, canonical)
    if sha256_hex(current) != base:
        raise _conflict(pneuma, canonical, current, mine)
    if mine != current:
        pneuma.mark_own_write(canonical)
        try:
            write_in_workspace(sandbox, canonical, mine)
        except OSError as exc:
            raise ToolError("E_IO", f"could not write {canonical}: {exc.strerror}",
                            details={"path": canonical}) from None
        edits.record(canonical)
    return {"ok": True, "path": canonical, "size": len(mine), "sha256": sha256_hex(mine),
            "changed": mine != current}


def edit_routes(pneuma: Any, edits: HandEdits) -> list[web.RouteDef]:
    async def post_edit(request: web.Request) -> web.Response:
        if (request.content_length or 0) > MAX_BODY_BYTES:
            raise ToolError("E_TOO_LARGE", f"the request is {request.content_length} bytes; "
                            f"in-place edits stop at {MAX_EDIT_BYTES}",
                            details={"size": request.content_length})
        body = await read_json_body(request)
        return web.json_response(apply_edit(pneuma, edits, body))

    return [web.post("/api/edits", post_edit)]
