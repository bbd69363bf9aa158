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
import mimetypes
import os
import re
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.core.errors import ToolError

# One atomic write for the whole host (temp file, fsync, rename, fsync dir),
# here by the parent directory's fd.
from pneuma.core.files import atomic_write_bytes as atomic_write  # noqa: F401 (routes_api)
from pneuma.core.files import write_in_workspace
from pneuma.core.sandbox import Sandbox, _segment_forbidden
from pneuma.server.config import FILE_FILTER, SANDBOX, SELF_WRITES
from pneuma.server.watcher import MAX_INLINE_BYTES, is_text_path, list_watched_files

MAX_WRITE_BYTES = 50 * 1024 * 1024
MAX_READ_BYTES = 10 * 1024 * 1024
_DATA_URL = re.compile(r"^data:(?P<type>[\w.+-]+/[\w.+-]+)?(?P<params>(;[\w-]+=[^;,]*)*)(?P<b64>;base64)?,",
                       re.S)


# Each handler is routed where it is defined; the order of definition is the
# order of registration.
ROUTES = web.RouteTableDef()


def _path_param(request: web.Request) -> str:
    path = request.query.get("path")
    if path is None:
        raise ToolError("E_BAD_ARGS", "the query parameter 'path' is required",
                        details={"field": "path"})
    return path


def _open_or_404(request: web.Request, rel: str) -> tuple[int, os.stat_result]:
    """An fd on the regular file ``rel``, walked by fd from the workspace
    root (Sandbox.open_file: no symlink swapped meanwhile leads out, the
    hard-link check is on this fd), or E_NOT_FOUND."""
    try:
        return request.app[SANDBOX].open_file(rel)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise ToolError("E_NOT_FOUND", f"File not found: {rel}", details={"path": rel}) from None


@ROUTES.get("/api/files")
async def list_files(request: web.Request) -> web.Response:
    sandbox = request.app[SANDBOX]
    files = []
    for rel in list_watched_files(sandbox.root, request.app[FILE_FILTER]):
        try:
            fd, info = sandbox.open_file(rel)
        except (OSError, ToolError):
            continue  # gone, refused, or a hard link (not read through the API)
        with os.fdopen(fd, "rb") as handle:
            content: str | None = None
            if request.app[FILE_FILTER].is_text(rel) and info.st_size <= MAX_INLINE_BYTES:
                try:
                    content = handle.read(MAX_INLINE_BYTES + 1).decode("utf-8")
                except (OSError, UnicodeDecodeError):
                    content = None
        entry: dict[str, Any] = {"path": rel, "content": content, "size": info.st_size,
                                 "mtime": info.st_mtime}
        if content is None:
            entry["binary"] = True
        files.append(entry)
    return web.json_response({"files": files})


@ROUTES.get("/api/files/read")
async def read_file(request: web.Request) -> web.Response:
    rel = _path_param(request)
    sandbox = request.app[SANDBOX]
    canonical = sandbox.normalize(rel)
    fd, info = _open_or_404(request, rel)
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > MAX_READ_BYTES:
            raise ToolError("E_TOO_LARGE", f"{rel} is {info.st_size} bytes; read it from "
                            "/content/", details={"path": rel, "size": info.st_size},
                            hint=f"GET /content/{rel} answers the raw bytes, with Range support")
        data = handle.read(MAX_READ_BYTES + 1)
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError("E_ENCODING", f"{rel} is not UTF-8 text; fetch /content/{rel}",
                        details={"path": rel}) from None
    return web.json_response({"path": canonical, "content": content, "size": len(data)})


def _tree(sandbox: Sandbox, dir_fd: int, prefix: str) -> list[dict[str, Any]]:
    """The entries below the open directory ``dir_fd`` (workspace path
    ``prefix``), listed and descended by fd so a symlink swapped meanwhile
    cannot show a directory outside. Symlinks are shown when they lead to a
    place inside; directories are descended only as real directories."""
    entries: list[dict[str, Any]] = []
    try:
        with os.scandir(dir_fd) as listing:
            children = list(listing)
    except OSError:
        return entries
    kinds: list[tuple[bool, str, os.DirEntry[str]]] = []
    for child in children:
        if _segment_forbidden(child.name, sandbox.forbidden) or child.name in (".claude",):
            continue
        rel = f"{prefix}/{child.name}" if prefix else child.name
        try:
            is_link = child.is_symlink()
            if is_link and not sandbox.is_allowed(rel):
                continue  # leads outside, or into a forbidden place
            kinds.append((child.is_dir(), rel, child))
        except OSError:
            continue
    for is_dir, rel, child in sorted(kinds, key=lambda k: (not k[0], k[2].name.lower())):
        if is_dir:
            try:
                sub = sandbox.open_dir(rel)
            except (OSError, ToolError):
                continue
            try:
                entries.append({"name": child.name, "path": rel, "type": "dir",
                                "children": _tree(sandbox, sub, rel)})
            finally:
                os.close(sub)
        else:
            try:
                fd, info = sandbox.open_file(rel)
            except (OSError, ToolError):
                continue
            os.close(fd)
            entries.append({"name": child.name, "path": rel, "type": "file",
                            "size": info.st_size})
    return entries


@ROUTES.get("/api/files/tree")
async def file_tree(request: web.Request) -> web.Response:
    sandbox = request.app[SANDBOX]
    root_fd = sandbox.open_dir("")
    try:
        children = _tree(sandbox, root_fd, "")
    finally:
        os.close(root_fd)
    return web.json_response({"root": sandbox.root.name, "children": children})


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


@ROUTES.post("/api/files")
async def write_file(request: web.Request) -> web.Response:
    body = await read_json_body(request)
    rel = body.get("path")
    sandbox = request.app[SANDBOX]
    sandbox.resolve_writable(rel)  # refused before the body is decoded
    canonical = sandbox.normalize(rel)
    data = decode_content(body.get("content"))
    if len(data) > MAX_WRITE_BYTES:
        raise ToolError("E_TOO_LARGE", f"content is {len(data)} bytes; the limit is "
                        f"{MAX_WRITE_BYTES}", details={"size": len(data)})
    request.app[SELF_WRITES].mark(canonical)
    try:
        write_in_workspace(sandbox, canonical, data)
    except IsADirectoryError:
        raise ToolError("E_BAD_ARGS", f"{canonical} is a directory", details={"path": rel}) \
            from None
    except OSError as exc:
        raise ToolError("E_IO", f"could not write {canonical}: {exc.strerror}",
                        details={"path": canonical}) from None
    return web.json_response({"ok": True, "path": canonical, "size": len(data)})


@ROUTES.delete("/api/files")
async def delete_file(request: web.Request) -> web.Response:
    rel = _path_param(request)
    sandbox = request.app[SANDBOX]
    canonical = sandbox.normalize(rel)
    request.app[SELF_WRITES].mark(canonical)
    try:
        sandbox.unlink(rel)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise ToolError("E_NOT_FOUND", f"File not found: {canonical}",
                        details={"path": canonical}) from None
    return web.json_response({"ok": True, "path": canonical, "deleted": True})


_CHUNK = 256 * 1024
_TEXT_SUFFIXES = (".html", ".htm", ".css", ".js", ".mjs", ".svg", ".md", ".txt", ".json")


def content_type_of(rel: str) -> str:
    """The media type of a workspace file by its suffix alone: guessing from
    the whole name would read ``0:.html`` as a URL with scheme ``0``."""
    return mimetypes.guess_type("file" + Path(rel).suffix.lower())[0] or "application/octet-stream"


def _byte_range(request: web.Request, size: int) -> tuple[int, int] | None:
    """``(start, end)`` (end exclusive) the Range header asks for, None for
    the whole file, ``(-1, -1)`` for a range the file does not have (416)."""
    if "Range" not in request.headers:
        return None
    try:
        wanted = request.http_range
    except ValueError:
        return None  # a malformed Range is ignored, as RFC 9110 allows
    start, stop = wanted.start, wanted.stop
    if start is None and stop is None:
        return None
    if start is None:
        start = 0
    if start < 0:  # bytes=-N: the last N bytes
        start = max(size + start, 0)
        stop = size
    stop = size if stop is None else min(stop, size)
    if start >= size or start >= stop:
        return -1, -1
    return start, stop


@ROUTES.get("/content/{path:.+}")
async def content(request: web.Request) -> web.StreamResponse:
    """The raw bytes, streamed from the fd this handler opened (never
    re-opened by path), with single-range support for media."""
    rel = request.match_info["path"]
    fd, info = _open_or_404(request, rel)
    with os.fdopen(fd, "rb") as handle:
        size = info.st_size
        span = _byte_range(request, size)
        if span == (-1, -1):
            # Answered as is, not as an error: 416 with the size is what a
            # media element expects.
            return web.Response(status=416, headers={"Content-Range": f"bytes */{size}"})
        start, stop = span if span is not None else (0, size)
        response = web.StreamResponse(status=206 if span is not None else 200)
        response.headers["Cache-Control"] = "no-cache"
        response.headers["Accept-Ranges"] = "bytes"
        response.content_type = content_type_of(rel)
        if span is not None:
            response.headers["Content-Range"] = f"bytes {start}-{stop - 1}/{size}"
        response.content_length = stop - start
        response.last_modified = info.st_mtime
        if is_text_path(rel) and Path(rel).suffix.lower() in _TEXT_SUFFIXES:
            # Files are served as the agent wrote them; the charset keeps
            # non-ASCII text readable in viewer frames.
            response.charset = "utf-8"
            response.headers["X-Content-Type-Options"] = "nosniff"
        await response.prepare(request)
        if request.method == "HEAD":
            return response
        await write_span(response, handle.fileno(), start, stop)
        await response.write_eof()
    return response


async def write_span(response: web.StreamResponse, fd: int, start: int, stop: int) -> None:
    """Bytes ``[start, stop)`` of the open file ``fd`` to a prepared
    response, read by position (never re-opened by path), in chunks. A file
    truncated meanwhile gives a short body."""
    position = start
    while position < stop:
        chunk = os.pread(fd, min(_CHUNK, stop - position), position)
        if not chunk:
            break
        await response.write(chunk)
        position += len(chunk)


def setup(app: web.Application) -> None:
    app.router.add_routes(ROUTES)

