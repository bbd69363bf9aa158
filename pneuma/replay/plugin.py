"""Replay as a host plugin: its route, attached to each session being
served (docs/hooks.md, "register_session_features").

Imported whenever the plugin manager is built, so it imports nothing heavy
until a server is actually built."""

from __future__ import annotations

from typing import Any

from pneuma import hookimpl


@hookimpl
def register_session_features(pneuma: Any) -> list[Any]:
    from pneuma.replay.routes import replay_routes

    return replay_routes(pneuma.session)
