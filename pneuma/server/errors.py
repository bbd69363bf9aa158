"""HTTP answers in the one error shape.

Every route answers a failure as ``{"error": {"code": "E_…", "message": …,
"details": {…}, "recoverable": bool, "hint"?: …}}`` with the status its code
implies (``pneuma.tools.errors.HTTP_STATUS``). A handler either returns
``error_response(ToolError(...))`` or simply raises the ``ToolError``: the
``error_middleware`` answers it the same way.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from aiohttp import web

from pneuma.tools.errors import ToolError

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def error_response(error: ToolError) -> web.Response:
    """The HTTP answer for ``error``: its JSON body with the status its code implies."""
    return web.json_response(error.to_dict(), status=error.http_status, dumps=_dumps)


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A ``ToolError`` raised by any handler becomes its ``error_response``."""
    try:
        return await handler(request)
    except ToolError as error:
        return error_response(error)
