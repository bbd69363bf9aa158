"""The ``CheckPage`` a check with ``needs_page`` gets: the session's viewer
actions (the person's tab, else the headless viewer the agent uses without
a tab; docs/viewer-contract.md, "Headless viewer"), callable from the
check's worker thread."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

# A viewer action's own timeout when the check names none: within the
# check's budget (pneuma.turn_checks.runner.BUDGET_S).
ACTION_TIMEOUT_S = 15.0


class SessionCheckPage:
    """A ``pneuma.api.CheckPage`` over the running session ``pneuma``."""

    def __init__(self, pneuma: Any, loop: asyncio.AbstractEventLoop,
                 content_url: str | None = None) -> None:
        self._pneuma = pneuma
        self._loop = loop
        self.api_url: str = pneuma.api_url
        self.token: str = pneuma.token
        self.content_url = content_url

    def viewer_action(self, action_id: str, params: Mapping[str, Any] | None = None,
                      timeout: float | None = None) -> dict[str, Any]:
        wait = timeout or ACTION_TIMEOUT_S
        asked = asyncio.run_coroutine_threadsafe(
            self._pneuma.viewer_action(action_id, dict(params or {}), wait), self._loop)
        try:
            answer: dict[str, Any] = asked.result(wait + 1.0)
        except BaseException:
            asked.cancel()
            raise
        return answer
