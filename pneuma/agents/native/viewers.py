"""The shell's viewer tabs as clients of the ``ExtensionRegistry``.

Every browser tab showing the Pneuma page (a subscribed ``/ws/browser``
socket) is registered as a client of kind ``viewer``: it appears in
``GET /api/extension/extension-list`` with its online state and the mode
it shows, and goes offline when the tab closes. The model's viewer-action
tools go through ``ViewerRouter.request``: it picks the viewer client that
connected (or re-subscribed) last among the online ones and sends the
``viewer_action_request`` to that tab only; the tab answers with the usual
``viewer_action_response``, which the session hands back here
(``resolve``). A tab that closes with a request open fails it at once.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from pneuma.api import BrowserRequestTimeout, NoBrowserConnected

from .clients import ExtensionRegistry

DEFAULT_ACTION_TIMEOUT = 60.0  # seconds a viewer tab has to answer an action
KEEP_OFFLINE_VIEWERS = 8  # closed tabs listed (offline) before the oldest are forgotten


# Who answers when no tab is open (the session channel's ``when_no_tab``, set
# by the headless viewer), asked at each request since it may come later.
NoTabResponder = Callable[[str, dict[str, Any], float], Awaitable[dict[str, Any]]]


class ViewerRouter:
    def __init__(self, registry: ExtensionRegistry, mode: str, mode_label: str = "",
                 no_tab: Callable[[], NoTabResponder | None] | None = None) -> None:
        self.registry = registry
        self._no_tab = no_tab
        self.mode = mode
        self.mode_label = mode_label or mode
        self._ids: dict[Any, str] = {}  # connection -> its viewer client id
        self._sends: dict[str, Any] = {}  # viewer client id -> its send callable
        self._counter = 0
        self._pending: dict[str, tuple[str, asyncio.Future[dict[str, Any]]]] = {}

    # -- tabs coming and going ----------------------------------------------------

    def attach(self, connection: Any) -> str:
        """A tab subscribed (again): register it, or mark it the freshest."""
        client_id = self._ids.get(connection)
        if client_id is not None and self.registry.is_online(client_id):
            self.registry.seen(client_id)
            self.registry.clients[client_id].connected_at = self.registry.clients[client_id].last_seen
            return client_id
        self._counter += 1
        client_id = client_id or f"viewer-{uuid.uuid4().hex[:10]}"
        self._ids[connection] = client_id

        async def send(message: dict[str, Any]) -> bool:
            if getattr(connection, "closed", False):
                return False
            connection.send(json.dumps(message, ensure_ascii=False, separators=(",", ":")))
            return True

        self._sends[client_id] = send
        metadata = {"mode": self.mode, "tab": self._counter}
        user_agent = _user_agent(connection)
        if user_agent:
            metadata["userAgent"] = user_agent
        self.registry.connect(client_id, send, kind="viewer", metadata=metadata,
                              name=f"{self.mode_label} viewer, tab {self._counter}")
        return client_id

    def detach(self, connection: Any) -> None:
        client_id = self._ids.pop(connection, None)
        if client_id is None:
            return
        self.registry.disconnect(client_id, self._sends.pop(client_id, None))
        for _request_id, (target, future) in list(self._pending.items()):
            if target == client_id and not future.done():
                future.set_exception(NoBrowserConnected(
                    "the viewer tab closed before it answered"))
        offline = sorted((c for c in self.registry.clients.values()
                          if c.kind == "viewer" and not c.online), key=lambda c: c.last_seen)
        for stale in offline[:-KEEP_OFFLINE_VIEWERS]:
            self.registry.forget(stale.id)

    def online(self) -> list[str]:
        return [c.id for c in self.registry.online("viewer")]

    # -- viewer actions -------------------------------------------------------------

    def pick(self) -> str | None:
        """The viewer that takes the next action: the freshest online tab."""
        viewers = self.registry.online("viewer")
        if not viewers:
            return None
        return max(viewers, key=lambda c: c.connected_at).id

    async def request(self, action_id: str, params: dict[str, Any],
                      timeout: float = DEFAULT_ACTION_TIMEOUT) -> dict[str, Any]:
        """Like ``ViewerActionChannel.request``, but to one registered viewer."""
        client_id = self.pick()
        if client_id is None:
            responder = self._no_tab() if self._no_tab is not None else None
            if responder is not None:
                return await responder(action_id, params, timeout)
            raise NoBrowserConnected("No viewer is open: open the Pneuma page first")
        request_id = f"va_{uuid.uuid4().hex[:16]}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (client_id, future)
        try:
            sent = await self.registry.send(client_id, {
                "type": "viewer_action_request", "request_id": request_id,
                "action_id": action_id, "params": params, "viewer_client_id": client_id})
            if not sent:
                raise NoBrowserConnected(f"the viewer {client_id} went away")
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise BrowserRequestTimeout(
                f"the viewer did not answer within {timeout:g} s") from None
        finally:
            self._pending.pop(request_id, None)

    def resolve(self, request_id: str, result: dict[str, Any]) -> bool:
        """A ``viewer_action_response`` for one of our requests; later ones are ignored."""
        entry = self._pending.get(request_id)
        if entry is None or entry[1].done():
            return False
        entry[1].set_result(result)
        return True

    def cancel_all(self, reason: str) -> None:
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(NoBrowserConnected(reason))


def _user_agent(connection: Any) -> str:
    ws = getattr(connection, "ws", None)
    headers = getattr(getattr(ws, "_req", None), "headers", None)
    try:
        return str(headers.get("User-Agent", "")) if headers is not None else ""
    except Exception:
        return ""
