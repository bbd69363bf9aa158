"""``GET /api/slide/export?format=html|pdf``: the export as a download (the
viewer's Export button). Added by ``register_routes`` for slide sessions
only, behind the server's token, Host and Origin checks."""

from __future__ import annotations

import asyncio

from aiohttp import web

from pneuma.server.config import CONFIG
from pneuma.server.security import json_error
from pneuma_slide.export import FORMATS, ExportError, export_deck


async def export_route(request: web.Request) -> web.StreamResponse:
    config = request.app[CONFIG]
    fmt = request.query.get("format", "pdf")
    if fmt not in FORMATS:
        return json_error(400, "bad_request", f"'format' must be one of {', '.join(FORMATS)}")
    try:
        result = await asyncio.to_thread(export_deck, config.workspace, fmt, None,
                                         dict(config.params))
    except ExportError as exc:
        return json_error(409, "export_failed", str(exc))
    except Exception as exc:  # Chromium missing or crashed: say so, do not 500 blindly
        return json_error(500, "export_failed", f"{type(exc).__name__}: {exc}")
    rel = result.path.relative_to(config.workspace.resolve()).as_posix()
    media = "application/pdf" if fmt == "pdf" else "text/html; charset=utf-8"
    return web.FileResponse(
        result.path,
        headers={
            "Content-Type": media,
            "Content-Disposition": f'attachment; filename="{result.path.name}"',
            "Cache-Control": "no-store",
            "X-Pneuma-Export-Path": rel,
        },
    )
