"""Telling a session's tabs that it is being stopped, before its server
closes their sockets (``workspace_stopped``, docs/protocol.md): a tab told
so stops reconnecting to a port nobody will serve, and says what happened
instead of spinning."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

# Who stopped it: the launcher's Stop, the launcher exiting, or the
# terminal of `pneuma run` (Ctrl-C, SIGTERM, SIGHUP).
StopReason = Literal["stopped", "exiting", "terminal"]
TELL_TABS_SECONDS = 0.5  # a tab that cannot take one short message in this long is not waited for


async def tell_tabs_stopped(app: Any, reason: StopReason, launcher_page: str | None) -> None:
    """Send every open tab of the session ``app`` serves why it stops (and
    the launcher's page, without its token, when a launcher served it), and
    let the words leave. An app that serves no session (the launcher's own)
    has nobody to tell."""
    from pneuma.server.config import SESSION

    if app is None or SESSION not in app:
        return
    tabs = [tab for tab in app[SESSION].connections if not tab.closed]
    for tab in tabs:
        tab.send(json.dumps({"type": "workspace_stopped", "reason": reason,
                             "launcher": launcher_page}))
    await asyncio.gather(*(tab.drain(TELL_TABS_SECONDS) for tab in tabs))
