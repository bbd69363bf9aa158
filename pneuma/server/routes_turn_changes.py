"""A turn in the mode's own terms, and reverting one of its changes
(issue 28; docs/checkpoints.md, "A turn in the mode's terms" and
"Reverting one change"):

    GET  /api/checkpoints/{ref}/changes                      the turn's changes, described by the session's mode
    POST /api/checkpoints/{ref}/changes/{change_id}/revert   {overwrite: [paths]}

The logic is pneuma.checkpoints' (described_turns, revert_change), the same
the command line uses; this module maps it onto requests, in worker
threads (both read stored contents, a revert writes files).
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from pneuma.checkpoints import turn_listener
from pneuma.checkpoints.described_turns import DescribedTurns, described_json
from pneuma.checkpoints.revert_change import revert_change
from pneuma.core.errors import ToolError
from pneuma.server.config import SESSION
from pneuma.server.routes_files import read_json_body
from pneuma.server.session import Session

ROUTES = web.RouteTableDef()


def _turns(session: Session) -> tuple[turn_listener.CheckpointTurns, DescribedTurns]:
    turns = turn_listener.subscribed(session.hooks)
    if turns is None:
        raise ToolError("E_UNAVAILABLE", "this server keeps no checkpoints (it saves nothing "
                        "in the workspace)", details={"reason": "no_checkpoints"})
    return turns, turns.described


@ROUTES.get("/api/checkpoints/{ref}/changes")
async def turn_changes(request: web.Request) -> web.Response:
    _, described = _turns(request.app[SESSION])
    ref, turn = await asyncio.to_thread(described.describe, request.match_info["ref"])
    return web.json_response(described_json(ref, turn))


# A change id may hold "/" (``slide:slides/07.html:moved``): raw or as %2F.
@ROUTES.post("/api/checkpoints/{ref}/changes/{change_id:.+}/revert")
async def revert_one_change(request: web.Request) -> web.Response:
    session = request.app[SESSION]
    turns, described = _turns(session)
    body = await read_json_body(request) if request.can_read_body else {}
    overwrite = body.get("overwrite", [])
    if not isinstance(overwrite, list) or not all(isinstance(p, str) for p in overwrite):
        raise ToolError("E_BAD_ARGS", "'overwrite' must be a list of paths",
                        details={"field": "overwrite"})
    if session.status != "idle":
        raise ToolError("E_CONFLICT", "the agent is in the middle of a turn; revert when it "
                        "has finished (or stop it first)",
                        details={"reason": "agent_running", "status": session.status},
                        hint="Wait for the turn to end, or press Stop, then try again.")
    result = await asyncio.to_thread(
        revert_change, turns.store, described, request.match_info["ref"],
        request.match_info["change_id"], overwrite=overwrite, origin="chat")
    # The chat lists the revert with its Undo, as a rewind's.
    await turns.list_restores()
    return web.json_response(result.to_json())


def setup(app: web.Application) -> None:
    app.router.add_routes(ROUTES)
