"""``GET``/``PUT /api/review/pins``: the workspace's review pins, the same in
every tab (docs/viewer-contract.md, "Annotate").

``PUT`` replaces the whole list (the page owns its order and numbering) and
broadcasts it as ``review_pins``; every tab, the one that wrote included,
shows what the broadcast holds. A body that is not JSON, or pins that do not
check, are answered ``E_BAD_ARGS``; one over the bounds ``E_TOO_LARGE``
(pneuma/annotations/store.py).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from pneuma.annotations.store import MAX_FILE_BYTES, PinStore
from pneuma.core.errors import ToolError
from pneuma.core.json_body import read_bounded_json

PINS_PATH = "/api/review/pins"
MAX_BODY_BYTES = MAX_FILE_BYTES


async def _body(request: web.Request) -> Any:
    """The request's JSON, read no further than the bound."""
    return await read_bounded_json(request, MAX_BODY_BYTES,
                                   too_large=f"the review pins are over {MAX_BODY_BYTES} bytes",
                                   not_json="the body must be JSON: {\"pins\": [...]}")


def pin_routes(pneuma: Any, store: PinStore) -> list[web.RouteDef]:
    """The two routes, bound to this session's store and broadcast."""

    async def get_pins(request: web.Request) -> web.Response:
        return web.json_response(store.load().as_json())

    async def put_pins(request: web.Request) -> web.Response:
        body = await _body(request)
        if not isinstance(body, dict) or "pins" not in body:
            raise ToolError("E_BAD_ARGS", "the body must be {\"pins\": [...]}", details={"field": "pins"})
        stored = store.save(body["pins"])
        pneuma.broadcast({"type": "review_pins", **stored.as_json()})
        return web.json_response(stored.as_json())

    return [web.get(PINS_PATH, get_pins), web.put(PINS_PATH, put_pins)]
