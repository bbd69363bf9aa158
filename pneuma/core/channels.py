"""Requests the server sends to the browser and waits on.

``ViewerActionChannel``: the agent's ``POST /api/viewer/action`` becomes a
``viewer_action_request`` to every browser; the first
``viewer_action_response`` answers the HTTP request (docs/design/browser-protocol.md, "Viewer actions").
``ConfirmationChannel``: things that need the person's yes (scaffolding a
workspace) become a ``confirmation_request``; the first answer decides.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from pneuma.core.errors import ToolError

DEFAULT_ACTION_TIMEOUT = 60.0


class NoBrowserConnected(RuntimeError):
    pass


class BrowserRequestTimeout(TimeoutError):
    pass


def no_browser_error(exc: NoBrowserConnected) -> ToolError:
    """How a request that found no tab open is answered, over HTTP and to a plugin."""
    return ToolError("E_UNAVAILABLE", str(exc), details={"reason": "no_browser"},
                     hint="Ask the person to open the Pneuma page (the URL `pneuma run` "
                          "printed), then try again.")


class _PendingRequests:
    def __init__(self, broadcast: Callable[[dict[str, Any]], None],
                 connected: Callable[[], int]):
        self._broadcast = broadcast
        self._connected = connected
        self._pending: dict[str, asyncio.Future[Any]] = {}

    async def _ask(self, message: dict[str, Any], timeout: float) -> Any:
        if self._connected() == 0:
            raise NoBrowserConnected("No browser connected: open the Pneuma page first")
        request_id = message["request_id"]
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self._broadcast(message)
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise BrowserRequestTimeout(
                f"the browser did not answer within {timeout:g} s"
            ) from None
        finally:
            self._pending.pop(request_id, None)

    def resolve(self, request_id: str, value: Any) -> bool:
        """Deliver an answer; later answers to the same request are ignored."""
        future = self._pending.get(request_id)
        if future is None or future.done():
            return False
        future.set_result(value)
        return True

    def cancel_all(self, reason: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(NoBrowserConnected(reason))

    @property
    def pending_count(self) -> int:
        return len(self._pending)


class ViewerActionChannel(_PendingRequests):
    async def request(
        self, action_id: str, params: dict[str, Any], timeout: float = DEFAULT_ACTION_TIMEOUT
    ) -> dict[str, Any]:
        message = {
            "type": "viewer_action_request",
            "request_id": f"va_{uuid.uuid4().hex[:16]}",
            "action_id": action_id,
            "params": params,
        }
        result: dict[str, Any] = await self._ask(message, timeout)
        return result


class ConfirmationChannel(_PendingRequests):
    """Questions for the person; open ones are re-sent to a tab that reloads
    (``open_requests``) and closed in every tab once answered."""

    def __init__(self, broadcast: Callable[[dict[str, Any]], None],
                 connected: Callable[[], int]):
        super().__init__(broadcast, connected)
        self.open_requests: dict[str, dict[str, Any]] = {}

    async def request(
        self, kind: str, summary: str, details: dict[str, Any], timeout: float = 300.0
    ) -> tuple[bool, str | None]:
        request_id = f"cf_{uuid.uuid4().hex[:16]}"
        message = {
            "type": "confirmation_request",
            "request_id": request_id,
            "kind": kind,
            "summary": summary,
            "details": details,
        }
        self.open_requests[request_id] = message
        try:
            answer: tuple[bool, str | None] = await self._ask(message, timeout)
            return answer
        finally:
            self.open_requests.pop(request_id, None)
            self._broadcast({"type": "confirmation_cancelled", "request_id": request_id})
