"""Workspace files over HTTP, all through the sandbox.

``GET /api/files`` the watched files with content; ``GET /api/files/read``
one file; ``GET /api/files/tree`` the whole tree; ``POST /api/files`` write
(text, or binary as a ``data:`` URL); ``DELETE /api/files``; ``GET
/content/{path}`` raw bytes with Range support for the viewer's frames,
images and media. A failure is raised as a ``ToolError`` (the sandbox's
own included); ``pneuma.server.errors.error_middleware`` answers it.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.server.config import FILE_FILTER, SANDBOX, SELF_WRITES
from pneuma.server.watcher import is_text_path, list_watched_files, read_for_update
from pneuma.tools.errors import ToolError
# One atomic write for the whole host (temp file, fsync, rename, fsync dir).
from pneuma.tools.files import atomic_write_bytes as atomic_write

MAX_WRITE_BYTES = 50 * 1024 * 1024
MAX_READ_BYTES = 10 * 1024 * 1024
_DATA_URL = re.compile(r"^data:(?P<type>[\w.+-]+/[\w.+-]+)?(?P<params>(;[\w-]+=[^;,]*)*)(?P<b64>;base64)?,",
                       re.S)


def _path_param(request: web.Request) -> str:
    path = request.query.get("path")
    if path is None:
        raise ToolError("E_BAD_ARGS", "the query parameter 'path' is required",
                        details={"field": "path"})
    return path


async def list_files(request: web.Request) -> web.Response:
    sandbox = request.app[SANDBOX]
    files = []
    for rel in list_watched_files(sandbox.root, request.app[FILE_FILTER]):
        if not sandbox.is_allowed(rel):
            continue
        stat = (sandbox.root / rel).stat()
        if stat.st_nlink > 1:
            continue  # a hard link: not read through the API (Sandbox.check_readable)
        content = read_for_update(sandbox.root, rel)
        entry: dict[str, Any] = {"path": rel, "content": content, "size": stat.st_size,
                                 "mtime": stat.st_mtime}
        if content is None:
            entry["binary"] = True
        files.append(entry)
    return web.json_response({"files": files})


async def read_file(request: web.Request) -> web.Response:
    rel = _path_param(request)
    sandbox = request.app[SANDBOX]
    path = sandbox.resolve(rel)
    if not path.is_file():
        raise ToolError("E_NOT_FOUND", f"File not found: {rel}", details={"path": rel})
    sandbox.check_readable(path, sandbox.normalize(rel))
    size = path.stat().st_size
    if size > MAX_READ_BYTES:
        raise ToolError("E_TOO_LARGE", f"{rel} is {size} bytes; read it from /content/",
                        details={"path": rel, "size": size},
                        hint=f"GET /content/{rel} answers the raw bytes, with Range support")
    try:
        content = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ToolError("E_ENCODING", f"{rel} is not UTF-8 text; fetch /content/{rel}",
                        details={"path": rel}) from None
    return web.json_response({"path": request.app[SANDBOX].normalize(rel), "content": content,
                              "size": size})


def _tree(root: Path, directory: Path, forbidden: tuple[str, ...]) -> list[dict[str, Any]]:
    from pneuma.tools.sandbox import _segment_forbidden

    entries = []
    try:
        children = sorted(directory.iterdir(), key=lambda p: (not p.is_dir(), p.name.lower()))
    except OSError:
        return entries
    for child in children:
        if _segment_forbidden(child.name, forbidden) or child.name in (".claude",):
            continue
        if child.is_symlink():
            real = Path(os.path.realpath(child))
            if real != root and root not in real.parents:
                continue
        rel = child.relative_to(root).as_posix()
        if child.is_dir():
            entries.append({"name": child.name, "path": rel, "type": "dir",
                            "children": _tree(root, child, forbidden)})
        elif child.is_file():
            entries.append({"name": child.name, "path": rel, "type": "file",
                            "size": child.stat().st_size})
    return entries


async def file_tree(request: web.Request) -> web.Response:
    sandbox = request.app[SANDBOX]
    return web.json_response({"root": sandbox.root.name,
                              "children": _tree(sandbox.root, sandbox.root, sandbox.forbidden)})


def decode_content(content: Any) -> bytes:
    if not isinstance(content, str):
        raise ToolError("E_BAD_ARGS", "'content' must be a string (text, or a data: URL)",
                        details={"field": "content"})
    match = _DATA_URL.match(content)
    if match is None:
        return content.encode("utf-8")
    payload = content[match.end():]
    if match.group("b64"):
        try:
            return base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise ToolError("E_BAD_ARGS", "the data: URL is not valid base64",
                            details={"field": "content"}) from None
    from urllib.parse import unquote_to_bytes

    return unquote_to_bytes(payload)


def too_deep() -> ToolError:
    """A JSON body nested deeper than Python's parser goes."""
    return ToolError("E_BAD_ARGS", "the request body is nested too deeply to be read",
                     details={"field": "(root)", "reason": "too_deep"})


async def read_json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ToolError("E_BAD_ARGS", "the request body must be JSON") from None
    except RecursionError:
        raise too_deep() from None
    if not isinstance(body, dict):
        raise ToolError("E_BAD_ARGS", "the request body must be a JSON object")
    return body


async def write_file(request: web.Request) -> web.Response:
    body = await read_json_body(request)
    rel = body.get("path")
    sandbox = request.app[SANDBOX]
    path = sandbox.resolve_writable(rel)
    canonical = sandbox.normalize(rel)
    data = decode_content(body.get("content"))
    if len(data) > MAX_WRITE_BYTES:
        raise ToolError("E_TOO_LARGE", f"content is {len(data)} bytes; the limit is "
                        f"{MAX_WRITE_BYTES}", details={"size": len(data)})
    if path.is_dir():
        raise ToolError("E_BAD_ARGS", f"{canonical} is a directory", details={"path": rel})
    request.app[SELF_WRITES].mark(canonical)
    try:
        atomic_write(path, data)
    except OSError as exc:
        raise ToolError("E_IO", f"could not write {canonical}: {exc.strerror}",
                        details={"path": canonical}) from None
    return web.json_response({"ok": True, "path": canonical, "size": len(data)})


async def delete_file(request: web.Request) -> web.Response:
    rel = _path_param(request)
    sandbox = request.app[SANDBOX]
    path = sandbox.resolve_writable(rel)
    canonical = sandbox.normalize(rel)
    if not path.is_file() and not path.is_symlink():
        raise ToolError("E_NOT_FOUND", f"File not found: {canonical}",
                        details={"path": canonical})
    request.app[SELF_WRITES].mark(canonical)
    path.unlink()
    return web.json_response({"ok": True, "path": canonical, "deleted": True})


async def content(request: web.Request) -> web.StreamResponse:
    rel = request.match_info["path"]
    sandbox = request.app[SANDBOX]
    path = sandbox.resolve(rel)
    if not path.is_file():
        raise ToolError("E_NOT_FOUND", f"File not found: {rel}", details={"path": rel})
    sandbox.check_readable(path, sandbox.normalize(rel))
    response = web.FileResponse(path, headers={"Cache-Control": "no-cache"})
    if is_text_path(rel) and path.suffix.lower() in (".html", ".htm", ".css", ".js", ".mjs",
                                                     ".svg", ".md", ".txt", ".json"):
        # Files are served as the agent wrote them; the charset keeps
        # non-ASCII text readable in viewer frames.
        response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def setup(app: web.Application) -> None:
    app.router.add_get("/api/files", list_files)
    app.router.add_get("/api/files/read", read_file)
    app.router.add_get("/api/files/tree", file_tree)
    app.router.add_post("/api/files", write_file)
    app.router.add_delete("/api/files", delete_file)
    app.router.add_get("/content/{path:.+}", content)

