"""Review pins as a host plugin: the store and its routes, attached to each
session being served (docs/hooks.md, "register_session_features").

Imported whenever the plugin manager is built, so it imports nothing heavy
until a server is actually built."""

from __future__ import annotations

from typing import Any

from pneuma import hookimpl


@hookimpl
def register_session_features(pneuma: Any) -> list[Any]:
    from pneuma.annotations.routes import pin_routes
    from pneuma.annotations.store import PinStore

    return pin_routes(pneuma, PinStore(pneuma.workspace))
