"""The preview frames' documents: ``POST /api/webcraft/frames`` stores a page
the viewer built (self-contained: styles, scripts and images inlined) and
answers a URL; ``GET /webcraft/frames/{id}`` serves it to the viewer's frame.

Why a route and not a ``data:`` or ``srcdoc`` frame: those inherit the
shell's Content-Security-Policy (``script-src 'self'``), so the site's own
inline scripts and the viewer's bridge would not run. This document gets
the policy of workspace content instead (docs/security.md): ``sandbox``
without ``allow-same-origin``, an opaque origin whose requests the server
refuses, plus ``frame-ancestors 'self'`` so that only Pneuma's page may
frame it. Both routes sit behind the server's token, Host and Origin checks.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict

from aiohttp import web

from pneuma.api import Pneuma, ToolError

FRAME_POLICY = "sandbox allow-scripts allow-popups allow-modals; frame-ancestors 'self'"
MAX_FRAMES = 24  # a few pages × three widths, with room for reloads in flight
MAX_FRAME_BYTES = 48 * 1024 * 1024


class FrameStore:
    """The last few built pages, oldest dropped first (memory, not disk:
    they are the viewer's scratch copies, rebuilt on every change)."""

    def __init__(self, limit: int = MAX_FRAMES) -> None:
        self.limit = limit
        self.documents: OrderedDict[str, str] = OrderedDict()

    def put(self, html: str) -> str:
        frame_id = secrets.token_urlsafe(12)
        self.documents[frame_id] = html
        while len(self.documents) > self.limit:
            self.documents.popitem(last=False)
        return frame_id

    def get(self, frame_id: str) -> str | None:
        return self.documents.get(frame_id)


def webcraft_routes(pneuma: Pneuma) -> list[web.RouteDef]:
    """The routes of a webcraft session (the ``register_routes`` hook's answer)."""
    store = FrameStore()

    async def store_frame(request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            raise ToolError("E_BAD_ARGS", "the body must be JSON: {\"html\": \"…\"}") from None
        html = body.get("html") if isinstance(body, dict) else None
        if not isinstance(html, str):
            raise ToolError("E_BAD_ARGS", "'html' must be a string", details={"field": "html"})
        if len(html.encode("utf-8")) > MAX_FRAME_BYTES:
            raise ToolError("E_TOO_LARGE", "the built page is too large to preview",
                            details={"limit": MAX_FRAME_BYTES}, hint="make the page's images smaller")
        frame_id = store.put(html)
        return web.json_response({"id": frame_id, "url": f"/webcraft/frames/{frame_id}"})

    async def serve_frame(request: web.Request) -> web.Response:
        html = store.get(request.match_info["frame_id"])
        if html is None:
            raise ToolError("E_NOT_FOUND", "no such preview frame (it was replaced by a newer one)",
                            hint="the viewer rebuilds the page; reload it")
        return web.Response(text=html, content_type="text/html", headers={
            "Content-Security-Policy": FRAME_POLICY,
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
        })

    return [
        web.post("/api/webcraft/frames", store_frame),
        web.get("/webcraft/frames/{frame_id}", serve_frame),
    ]
