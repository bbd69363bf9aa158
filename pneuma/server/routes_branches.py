"""The conversation's rewind and branches over HTTP (docs/conversations.md,
"Branches"; docs/api.md):

- ``POST /api/conversation/rewind`` ``{"clientMsgId" | "timestamp", "text"?}``:
  back to before that message of the person's, on a new branch; with
  ``text``, that is sent as the branch's first message. 409 ``E_CONFLICT``
  while a turn runs, 404 ``E_NOT_FOUND`` for a message not in the
  conversation shown.
- ``GET /api/conversation/branches``: the versions of the conversation shown.
- ``POST /api/conversation/branches/{id}/switch``: show another version.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from pneuma.core.errors import ToolError
from pneuma.core.json_body import read_bounded_json
from pneuma.server.conversation_rewind import ConversationRewind

MAX_BODY_BYTES = 1_100_000  # an edited message may be as long as a typed one


def branch_routes(feature: ConversationRewind) -> list[web.RouteDef]:
    async def rewind(request: web.Request) -> web.Response:
        body = await read_bounded_json(request, MAX_BODY_BYTES,
                                       too_large="the message is too long",
                                       not_json='the body must be JSON: {"clientMsgId": ...}')
        client_id, stamp, text = _rewind_args(body)
        return web.json_response(await feature.rewind(client_msg_id=client_id,
                                                      timestamp_ms=stamp, text=text))

    async def listing(request: web.Request) -> web.Response:
        return web.json_response(feature.listing())

    async def switch(request: web.Request) -> web.Response:
        return web.json_response(await feature.switch(request.match_info["id"]))

    return [web.post("/api/conversation/rewind", rewind),
            web.get("/api/conversation/branches", listing),
            web.post("/api/conversation/branches/{id}/switch", switch)]


def _rewind_args(body: Any) -> tuple[str | None, float | None, str | None]:
    if not isinstance(body, dict):
        raise ToolError("E_BAD_ARGS", 'the body must be {"clientMsgId": ..., "text"?: ...}')
    client_id, stamp, text = body.get("clientMsgId"), body.get("timestamp"), body.get("text")
    if client_id is not None and (not isinstance(client_id, str) or not client_id):
        raise ToolError("E_BAD_ARGS", "clientMsgId must be a message's id", details={"field": "clientMsgId"})
    if stamp is not None and (isinstance(stamp, bool) or not isinstance(stamp, (int, float))):
        raise ToolError("E_BAD_ARGS", "timestamp must be a time in milliseconds", details={"field": "timestamp"})
    if client_id is None and stamp is None:
        raise ToolError("E_BAD_ARGS", "name the message: clientMsgId or timestamp", details={"field": "clientMsgId"})
    if text is not None and not isinstance(text, str):
        raise ToolError("E_BAD_ARGS", "text must be a string", details={"field": "text"})
    return client_id, float(stamp) if stamp is not None else None, text
