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
from collections.abc import Awaitable, Callable
from typing import Any

from pneuma.core.errors import ToolError

DEFAULT_ACTION_TIMEOUT = 60.0


class NoBrowserConnected(RuntimeError):
    """No tab could answer. ``hint`` and ``details`` replace the default ones
    of ``no_browser_error`` (e.g. the headless viewer naming what to install)."""

    def __init__(self, message: str, *, hint: str | None = None,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.hint = hint
        self.details = details


class BrowserRequestTimeout(TimeoutError):
    pass


def no_browser_error(exc: NoBrowserConnected) -> ToolError:
    """How a request that found no tab open is answered, over HTTP and to a plugin."""
    return ToolError("E_UNAVAILABLE", str(exc),
                     details={"reason": "no_browser", **(getattr(exc, "details", None) or {})},
                     hint=getattr(exc, "hint", None) or (
                         "Ask the person to open the Pneuma page (the URL `pneuma run` "
                         "printed), then try again."))


class _PendingRequests:
    def __init__(self, broadcast: Callable[[dict[str, Any]], None],
                 connected: Callable[[], int]):
        self._broadcast = broadcast
        self._connected = connected
        self._pending: dict[str, asyncio.Future[Any]] = {}

    async def _ask(self, message: dict[str, Any], timeout: float,
                   send: Callable[[dict[str, Any]], None] | None = None) -> Any:
        """Broadcast ``message`` (or hand it to ``send``: one tab) and wait for its answer."""
        if send is None and self._connected() == 0:
            raise NoBrowserConnected("No browser connected: open the Pneuma page first")
        request_id = message["request_id"]
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            if send is None:
                self._broadcast(message)
            else:
                send(message)
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


NoTabResponder = Callable[[str, dict[str, Any], float], Awaitable[dict[str, Any]]]
"""``(action_id, params, timeout) -> answer``: who answers a viewer action when no tab is open."""


class ViewerActionChannel(_PendingRequests):
    def __init__(self, broadcast: Callable[[dict[str, Any]], None],
                 connected: Callable[[], int]):
        super().__init__(broadcast, connected)
        # Set by a feature that can answer without the person's tab (the
        # headless viewer, docs/viewer-contract.md); None: NoBrowserConnected.
        self.when_no_tab: NoTabResponder | None = None

    async def request(
        self, action_id: str, params: dict[str, Any], timeout: float = DEFAULT_ACTION_TIMEOUT
    ) -> dict[str, Any]:
        if self.when_no_tab is not None and self._connected() == 0:
            return await self.when_no_tab(action_id, params, timeout)
        message = {
            "type": "viewer_action_request",
            "request_id": f"va_{uuid.uuid4().hex[:16]}",
            "action_id": action_id,
            "params": params,
        }
        result: dict[str, Any] = await self._ask(message, timeout)
        return result

    async def request_through(
        self, send: Callable[[dict[str, Any]], None], action_id: str, params: dict[str, Any],
        timeout: float, **fields: Any,
    ) -> dict[str, Any]:
        """Like ``request``, but to the one tab ``send`` writes to, with
        ``fields`` added to the request; its answer arrives like any other."""
        message = {
            "type": "viewer_action_request",
            "request_id": f"va_{uuid.uuid4().hex[:16]}",
            "action_id": action_id,
            "params": params,
            **fields,
        }
        result: dict[str, Any] = await self._ask(message, timeout, send)
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
