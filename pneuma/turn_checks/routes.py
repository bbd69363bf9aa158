"""The turn checks' routes (docs/checks.md, "Routes"):

- ``GET /api/turn-checks``: the setting, the mode's checks, the kept results;
- ``PUT /api/turn-checks/settings`` ``{"repair": bool}``: the workspace's
  "repair" setting, broadcast to every tab (``turn_checks_settings``);
- ``POST /api/turn-checks/composer`` ``{"hasText": bool}``: the page says
  the person is typing (a repair waits for an idle, empty composer);
- ``POST /api/turn-checks/repair/{id}/cancel``: the person's Cancel of a
  pending repair turn (``E_NOT_FOUND`` when none is pending by that id).
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from pneuma.core.errors import ToolError
from pneuma.core.json_body import read_bounded_json
from pneuma.turn_checks.feature import TurnChecks

PREFIX = "/api/turn-checks"
MAX_BODY_BYTES = 4096


async def _flag(request: web.Request, name: str) -> bool:
    body = await read_bounded_json(request, MAX_BODY_BYTES,
                                   too_large=f"the body is over {MAX_BODY_BYTES} bytes",
                                   not_json=f'the body must be JSON: {{"{name}": true}}')
    if not isinstance(body, dict) or not isinstance(body.get(name), bool):
        raise ToolError("E_BAD_ARGS", f'the body must be {{"{name}": true or false}}',
                        details={"field": name})
    return bool(body[name])


def turn_check_routes(pneuma: Any, feature: TurnChecks) -> list[web.RouteDef]:
    async def status(request: web.Request) -> web.Response:
        return web.json_response(feature.status())

    async def settings(request: web.Request) -> web.Response:
        repair = await _flag(request, "repair")
        await asyncio.to_thread(feature.state.set_repair, repair)
        if not repair:
            pending = feature.repairs.pending
            if pending is not None:
                feature.repairs.cancel(pending.id)
        pneuma.broadcast({"type": "turn_checks_settings", "repair": repair})
        return web.json_response({"repair": repair})

    async def composer(request: web.Request) -> web.Response:
        feature.repairs.composer.update(await _flag(request, "hasText"))
        return web.json_response({"ok": True})

    async def cancel(request: web.Request) -> web.Response:
        repair_id = request.match_info["repair_id"]
        if not feature.repairs.cancel(repair_id):
            raise ToolError("E_NOT_FOUND", f"no repair turn {repair_id} is waiting to be sent",
                            details={"id": repair_id},
                            hint="It was sent, cancelled or dropped already.")
        return web.json_response({"cancelled": repair_id})

    return [web.get(PREFIX, status), web.put(f"{PREFIX}/settings", settings),
            web.post(f"{PREFIX}/composer", composer),
            web.post(PREFIX + "/repair/{repair_id}/cancel", cancel)]
