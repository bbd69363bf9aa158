"""The Export menu's "Share as file" (docs/sharing.md, "Share as one file"):

    GET /api/share/file[?conversation=ID]   the shared file as a download, also
                                            kept as W/exports/<name>-share.html

The conversation shared is the one shown (the session's) unless asked
otherwise; the session's token is scrubbed as any secret is. Built in a
worker thread. Over the size cap: ``E_TOO_LARGE`` naming what is big and
the terminal's options (``pneuma share --no-history``, ``--leave-out``).
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

from aiohttp import web

from pneuma.core.errors import ToolError
from pneuma.share.builder import Shared, ShareOptions, write_share

PATH = "/api/share/file"


def share_routes(pneuma: Any) -> list[web.RouteDef]:
    async def share_file(request: web.Request) -> web.StreamResponse:
        workspace = pneuma.workspace.resolve()
        options = ShareOptions(conversation=request.query.get("conversation") or None,
                               preferred_conversation=pneuma.session.conversation_id,
                               secrets=[pneuma.token], mode=pneuma.mode.name)
        try:
            shared: Shared = await asyncio.to_thread(write_share, workspace, None, options)
        except ToolError as exc:
            exc.message = exc.message.replace(str(workspace), "the workspace")
            raise
        except OSError as exc:
            raise ToolError("E_IO", "could not write the shared file: "
                            f"{exc.strerror or type(exc).__name__}") from None
        name = shared.path.name
        return web.FileResponse(shared.path, headers={
            "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}",
            "Content-Type": "text/html; charset=utf-8",
            "Cache-Control": "no-store",
            "X-Pneuma-Export-Path": shared.path.relative_to(workspace).as_posix(),
        })

    return [web.get(PATH, share_file)]
