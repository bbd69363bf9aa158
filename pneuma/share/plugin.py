"""The Export menu's "Share as file" as a host plugin (docs/hooks.md,
"register_session_features"): its one route, for every mode.

Imported whenever the plugin manager is built, so it imports nothing heavy
until a server is actually built."""

from __future__ import annotations

from typing import Any

from pneuma import hookimpl


@hookimpl
def register_session_features(pneuma: Any) -> list[Any]:
    from pneuma.share.routes import share_routes

    return share_routes(pneuma)
