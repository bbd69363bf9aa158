"""``GET /api/replay``: the conversation shown, turn by turn, with each
turn's checkpoint (docs/sharing.md, "Replay"; docs/api.md). The workspace
after turn N is ``GET /api/checkpoints/{ref}/state/after/…`` of that turn's
ref, as Compare reads it."""

from __future__ import annotations

import sqlite3
from typing import Any

from aiohttp import web

from pneuma.core.errors import ToolError
from pneuma.replay.turns import conversation_turns


def replay_routes(session: Any) -> list[web.RouteDef]:
    async def replay(request: web.Request) -> web.Response:
        log = session.conversation
        if log is None:
            raise ToolError("E_UNAVAILABLE", "this session keeps no conversation log, so it "
                            "has nothing to replay", details={"reason": "no_log"})
        current = session.conversation_id
        try:
            turns, imported = log.run(lambda db: (conversation_turns(db, current),
                                                  _imported(db, current)))
        except sqlite3.Error as exc:
            raise ToolError("E_IO", f"the conversation log could not be read: {exc}") from exc
        return web.json_response({"conversation": current, "imported": imported,
                                  "turns": [turn.to_json() for turn in turns]})

    return [web.get("/api/replay", replay)]


def _imported(db: sqlite3.Connection, conversation_id: str) -> str | None:
    """The shared file the conversation came from (pneuma open FILE.html), if any."""
    from pneuma.share.imported import imported_source

    return imported_source(db, conversation_id)
