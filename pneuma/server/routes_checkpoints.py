"""The per-turn checkpoints over HTTP, for the chat's "what changed" and
"Rewind to here" (docs/checkpoints.md, docs/protocol.md):

    GET  /api/checkpoints                      every checkpoint, as `pneuma checkpoints list --json`
    GET  /api/checkpoints/{ref}                one turn: what it changed
    GET  /api/checkpoints/{ref}/diff?path=P&to=after|now   one file's unified diff
    GET  /api/checkpoints/{ref}/plan           what a restore would change, and the conflicts
    POST /api/checkpoints/{ref}/restore        {overwrite: [paths], keepConflicts: bool}

Everything is pneuma.checkpoints' own logic (the CLI's too); this module only
maps it onto requests. Store work reads and hashes files, so it runs in a
worker thread; the restore takes the store's lock inside ``restore`` as the
CLI does. A restore writes through the store's sandbox; the file watcher
then tells the viewer, and a ``workspace_restored`` message tells the chat.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from aiohttp import web

from pneuma.checkpoints import Checkpoints, plan_restore, restore, turn_listener
from pneuma.core.errors import ToolError
from pneuma.server.config import SESSION
from pneuma.server.routes_files import read_json_body
from pneuma.server.session import Session

# Each handler is routed where it is defined; the order of definition is the
# order of registration.
ROUTES = web.RouteTableDef()


def _store(session: Session) -> Checkpoints:
    turns = turn_listener.subscribed(session.hooks)
    store = turns.store if turns is not None else None
    if store is None:
        raise ToolError("E_UNAVAILABLE", "this server keeps no checkpoints (it saves nothing "
                        "in the workspace)", details={"reason": "no_checkpoints"})
    return store


def listing(store: Checkpoints) -> list[dict[str, Any]]:
    """Each checkpoint kept, oldest first, with what its turn changed."""
    rows = []
    for checkpoint, changed in store.history():
        rows.append({
            "ref": checkpoint.ref, "kind": checkpoint.kind, "seq": checkpoint.seq,
            "timestamp": checkpoint.timestamp_ms,
            "time": datetime.fromtimestamp(checkpoint.timestamp_ms / 1000).astimezone()
            .isoformat(timespec="seconds"),
            "message": checkpoint.message, "files": checkpoint.file_count,
            "restoredTo": checkpoint.restored_to, "conversation": checkpoint.conversation,
            "ended": checkpoint.ended,
            "changes": changed.to_json(),
        })
    return rows


@ROUTES.get("/api/checkpoints")
async def list_checkpoints(request: web.Request) -> web.Response:
    store = _store(request.app[SESSION])
    rows = await asyncio.to_thread(listing, store)
    return web.json_response({"workspace": str(store.workspace), "checkpoints": rows})


@ROUTES.get("/api/checkpoints/{ref}")
async def checkpoint_changes(request: web.Request) -> web.Response:
    store = _store(request.app[SESSION])
    ref = request.match_info["ref"]

    def read() -> dict[str, Any]:
        checkpoint = store.get(ref)
        return {"ref": checkpoint.ref, "kind": checkpoint.kind, "message": checkpoint.message,
                "timestamp": checkpoint.timestamp_ms, "ended": checkpoint.ended,
                "changes": store.changes_of(ref).to_json()}

    return web.json_response(await asyncio.to_thread(read))


@ROUTES.get("/api/checkpoints/{ref}/diff")
async def file_diff(request: web.Request) -> web.Response:
    store = _store(request.app[SESSION])
    ref = request.match_info["ref"]
    path = request.query.get("path")
    if not path:
        raise ToolError("E_BAD_ARGS", "'path' is required: the file to compare",
                        details={"field": "path"})
    to = request.query.get("to", "after")
    diff = await asyncio.to_thread(store.turn_file_diff, ref, path, to)
    return web.json_response({"ref": ref, "path": path, "to": to, "diff": diff})


@ROUTES.get("/api/checkpoints/{ref}/plan")
async def restore_plan(request: web.Request) -> web.Response:
    store = _store(request.app[SESSION])
    plan = await asyncio.to_thread(plan_restore, store, request.match_info["ref"])
    return web.json_response(plan.to_json())


def _not_mid_turn(session: Session) -> None:
    if session.status != "idle":
        raise ToolError("E_CONFLICT", "the agent is in the middle of a turn; rewind when it "
                        "has finished (or stop it first)",
                        details={"reason": "agent_running", "status": session.status},
                        hint="Wait for the turn to end, or press Stop, then try again.")


@ROUTES.post("/api/checkpoints/{ref}/restore")
async def restore_checkpoint(request: web.Request) -> web.Response:
    session = request.app[SESSION]
    store = _store(session)
    ref = request.match_info["ref"]
    body = await read_json_body(request) if request.can_read_body else {}
    overwrite = body.get("overwrite", [])
    if not isinstance(overwrite, list) or not all(isinstance(p, str) for p in overwrite):
        raise ToolError("E_BAD_ARGS", "'overwrite' must be a list of paths",
                        details={"field": "overwrite"})
    keep_conflicts = body.get("keepConflicts", False)
    if not isinstance(keep_conflicts, bool):
        raise ToolError("E_BAD_ARGS", "'keepConflicts' must be true or false",
                        details={"field": "keepConflicts"})
    _not_mid_turn(session)
    result = await asyncio.to_thread(restore, store, ref, overwrite_conflicts=overwrite,
                                     keep_conflicts=keep_conflicts, origin="chat")
    # The chat lists the rewind (and offers its undo); persisted with the
    # conversation, so a reload shows it too.
    turns = turn_listener.subscribed(session.hooks)
    if turns is not None:
        await turns.list_restores()
    return web.json_response(result.to_json())


def setup(app: web.Application) -> None:
    app.router.add_routes(ROUTES)
    # A turn in the mode's terms and reverting one change (issue 28).
    from pneuma.server import routes_turn_changes

    routes_turn_changes.setup(app)
