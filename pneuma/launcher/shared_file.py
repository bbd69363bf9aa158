"""A shared file dropped on the launcher's page (docs/sharing.md, "Open a
shared file"): the page sends the file's bytes (a browser does not tell a
page where a dropped file lives), the launcher reads them no further than a
bound, makes a new workspace of them as ``pneuma open FILE.html`` does, and
serves it."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from pneuma.core.errors import ToolError
from pneuma.launcher.folders import folder_from_request
from pneuma.share.model import ShareData, parse_share_html
from pneuma.share.open import folder_name

MAX_DROPPED_BYTES = 64 * 1024 * 1024  # above the builder's default cap of 50 MB


async def read_dropped_share(request: web.Request) -> tuple[ShareData, str]:
    """The shared file in the request's body, and its name (``?name=``)."""
    name = Path(request.query.get("name") or "shared.html").name[:200] or "shared.html"
    chunks: list[bytes] = []
    size = 0
    while chunk := await request.content.readany():
        size += len(chunk)
        if size > MAX_DROPPED_BYTES:
            raise ToolError("E_TOO_LARGE", f"{name} is larger than {MAX_DROPPED_BYTES} bytes; "
                            "open it with `pneuma open FILE.html` instead",
                            details={"limit": MAX_DROPPED_BYTES})
        chunks.append(chunk)
    try:
        text = b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError("E_PARSE_FAIL", f"{name} is not UTF-8 text, so not a shared file") from exc
    return parse_share_html(text), name


def dropped_share_folder(raw: str | None, data: ShareData, name: str,
                         home: Path | None = None) -> Path:
    """The folder the person chose, else ``~/Pneuma/<title>`` (``-2``, ``-3``…
    when that exists)."""
    if raw:
        return folder_from_request(raw)
    base = (home or Path.home()) / "Pneuma"
    stem = folder_name(data, Path(name).stem or "shared")
    candidate, n = base / stem, 2
    while candidate.exists() and n < 1000:
        candidate, n = base / f"{stem}-{n}", n + 1
    return candidate
