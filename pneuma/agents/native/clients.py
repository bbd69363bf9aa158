"""Connected browser clients and what their browsers look like.

``ExtensionRegistry`` knows every client that ever connected in this run:
its id, kind (``browser``: carries out browser actions; ``viewer``: a tab
of the Pneuma shell, which answers viewer actions), metadata (name,
version, user agent, capabilities, mode), whether it is online, and which
browser client each session selected. ``TwinStore`` keeps the
authoritative copy ("twin") of each client's windows, tabs, groups and
active tab, updated from ``full_state_sync`` and ``tab_event`` messages;
both report changes through a callback (the backend turns them into
``extension_update`` and ``twin_update`` messages for the web UI).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Send = Callable[[dict[str, Any]], Awaitable[bool]]


@dataclass
class ClientInfo:
    id: str
    name: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    online: bool = False
    connected_at: float = 0.0
    last_seen: float = 0.0
    send: Send | None = None  # how to reach it while online
    kind: str = "browser"  # browser | viewer

    def to_json(self) -> dict[str, Any]:
        data = {
            "clientId": self.id,
            "name": self.name or self.id,
            "kind": self.kind,
            "online": self.online,
            "connectedAt": self.connected_at,
            "lastSeen": self.last_seen,
            "metadata": self.metadata,
        }
        if self.kind == "viewer":
            data["mode"] = self.metadata.get("mode")
        return data


class ExtensionRegistry:
    def __init__(self, on_change: Callable[[list[dict[str, Any]]], None] | None = None,
                 on_offline: Callable[[str], None] | None = None) -> None:
        self.clients: dict[str, ClientInfo] = {}
        self.bindings: dict[str, str] = {}  # session id -> selected client id
        self._on_change = on_change
        self._on_offline = on_offline

    def connect(self, client_id: str, send: Send, *, name: str = "",
                metadata: dict[str, Any] | None = None, kind: str = "browser") -> ClientInfo:
        now = time.time()
        info = self.clients.get(client_id) or ClientInfo(id=client_id)
        info.kind = kind
        info.name = name or info.name
        info.metadata = dict(metadata or info.metadata)
        info.online = True
        info.connected_at = now
        info.last_seen = now
        info.send = send
        self.clients[client_id] = info
        self._changed()
        return info

    def disconnect(self, client_id: str, send: Send | None = None) -> None:
        """Mark a client offline (only if ``send`` is still its connection:
        a client that reconnected quickly keeps its new one)."""
        info = self.clients.get(client_id)
        if info is None or (send is not None and info.send is not send):
            return
        info.online = False
        info.send = None
        info.last_seen = time.time()
        self._changed()
        if self._on_offline is not None:
            self._on_offline(client_id)

    def seen(self, client_id: str) -> None:
        info = self.clients.get(client_id)
        if info is not None:
            info.last_seen = time.time()

    def get(self, client_id: str | None) -> ClientInfo | None:
        return self.clients.get(client_id) if client_id else None

    def is_online(self, client_id: str | None) -> bool:
        info = self.get(client_id)
        return bool(info and info.online)

    def listing(self) -> list[dict[str, Any]]:
        """Every known client of any kind, online ones first (the extension list)."""
        ordered = sorted(self.clients.values(), key=lambda c: (not c.online, -c.connected_at))
        return [c.to_json() for c in ordered]

    def candidates(self) -> list[dict[str, Any]]:
        """Every known browser client, online ones first (the web UI's picker)."""
        return [c for c in self.listing() if c["kind"] == "browser"]

    def online(self, kind: str | None = None) -> list[ClientInfo]:
        return [c for c in self.clients.values() if c.online and kind in (None, c.kind)]

    def forget(self, client_id: str) -> None:
        if self.clients.pop(client_id, None) is not None:
            self._changed()

    def bind(self, session_id: str, client_id: str | None) -> None:
        if client_id is None:
            self.bindings.pop(session_id, None)
        else:
            self.bindings[session_id] = client_id
        self._changed()

    def selected(self, session_id: str) -> str | None:
        return self.bindings.get(session_id)

    async def send(self, client_id: str, message: dict[str, Any]) -> bool:
        info = self.clients.get(client_id)
        if info is None or not info.online or info.send is None:
            return False
        return await info.send(message)

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self.candidates())


def _empty_twin() -> dict[str, Any]:
    return {"windows": [], "tabs": [], "groups": [], "activeTabId": None, "updatedAt": 0.0}


class TwinStore:
    """``{client id: {windows, tabs, groups, activeTabId, updatedAt}}``."""

    def __init__(self, on_change: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        self.twins: dict[str, dict[str, Any]] = {}
        self._on_change = on_change

    def get(self, client_id: str) -> dict[str, Any]:
        return self.twins.get(client_id) or _empty_twin()

    def full_state_sync(self, client_id: str, state: dict[str, Any]) -> dict[str, Any]:
        twin = _empty_twin()
        for key in ("windows", "tabs", "groups"):
            value = state.get(key)
            twin[key] = [dict(v) for v in value if isinstance(v, dict)] if isinstance(value, list) else []
        twin["activeTabId"] = state.get("activeTabId")
        return self._store(client_id, twin)

    def tab_event(self, client_id: str, event: dict[str, Any]) -> dict[str, Any]:
        """``event``: ``{event: created|updated|removed|activated, tab: {id, ...}}``
        (``tabId`` instead of ``tab`` is enough for removed/activated)."""
        twin = self.twins.get(client_id) or _empty_twin()
        twin = {**twin, "tabs": [dict(t) for t in twin["tabs"]]}
        kind = event.get("event")
        tab = event.get("tab") if isinstance(event.get("tab"), dict) else {}
        tab_id = tab.get("id", event.get("tabId"))
        tabs = twin["tabs"]
        index = next((i for i, t in enumerate(tabs) if t.get("id") == tab_id), None)
        if kind in ("created", "updated"):
            if index is None:
                tabs.append(dict(tab))
            else:
                tabs[index] = {**tabs[index], **tab}
            if tab.get("active"):
                twin["activeTabId"] = tab_id
        elif kind == "removed":
            if index is not None:
                tabs.pop(index)
            if twin.get("activeTabId") == tab_id:
                twin["activeTabId"] = tabs[-1]["id"] if tabs else None
        elif kind == "activated":
            twin["activeTabId"] = tab_id
        if isinstance(event.get("groups"), list):
            twin["groups"] = event["groups"]
        if isinstance(event.get("windows"), list):
            twin["windows"] = event["windows"]
        for t in tabs:
            t["active"] = t.get("id") == twin["activeTabId"]
        return self._store(client_id, twin)

    def forget(self, client_id: str) -> None:
        if self.twins.pop(client_id, None) is not None and self._on_change is not None:
            self._on_change(client_id, _empty_twin())

    def _store(self, client_id: str, twin: dict[str, Any]) -> dict[str, Any]:
        twin["updatedAt"] = time.time()
        self.twins[client_id] = twin
        if self._on_change is not None:
            self._on_change(client_id, twin)
        return twin
