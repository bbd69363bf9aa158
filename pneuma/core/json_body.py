"""A request's JSON body, read no further than a bound.

aiohttp's ``request.json()`` reads the whole body before parsing it; a
route that keeps a small file of the person's (preferences, review pins)
refuses a larger body as it arrives, in the one error shape
(docs/errors.md): ``E_TOO_LARGE`` over the bound, ``E_BAD_ARGS`` for text
that is not JSON or is nested deeper than the parser goes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pneuma.core.errors import ToolError

if TYPE_CHECKING:
    from aiohttp import web

CHUNK_BYTES = 64 * 1024


async def read_bounded_json(request: web.Request, limit: int, *, too_large: str,
                            not_json: str) -> Any:
    """The parsed body; ``too_large`` and ``not_json`` are the errors' messages."""

    def over() -> ToolError:
        return ToolError("E_TOO_LARGE", too_large, details={"limit": limit})

    if request.content_length is not None and request.content_length > limit:
        raise over()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(CHUNK_BYTES):
        size += len(chunk)
        if size > limit:
            raise over()
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ToolError("E_BAD_ARGS", not_json) from None
    except RecursionError:
        raise ToolError("E_BAD_ARGS", "the request body is nested too deeply") from None
