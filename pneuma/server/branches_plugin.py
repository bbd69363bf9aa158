"""The conversation's rewind and branches as a host plugin, attached to each
session being served (docs/hooks.md, "register_session_features").

Imported whenever the plugin manager is built, so it imports nothing heavy
until a server is actually built."""

from __future__ import annotations

from typing import Any

from pneuma import hookimpl


@hookimpl
def register_session_features(pneuma: Any) -> list[Any]:
    from pneuma.server.conversation_rewind import FEATURE, ConversationRewind
    from pneuma.server.routes_branches import branch_routes

    feature = ConversationRewind(pneuma.session)
    pneuma.session.hooks.add(FEATURE, feature)
    return branch_routes(feature)
