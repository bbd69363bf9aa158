"""Edit in place as a host plugin: subscribed to the session's hooks and
answering ``POST /api/edits`` (docs/hooks.md, "register_session_features").

Imported whenever the plugin manager is built, so it imports nothing heavy
until a server is actually built."""

from __future__ import annotations

from typing import Any

from pneuma import hookimpl

FEATURE_NAME = "hand_edits"


@hookimpl
def register_session_features(pneuma: Any) -> list[Any]:
    from pneuma.core.state_files import STATE_DIR
    from pneuma.editing.hand_edits import HandEdits
    from pneuma.editing.route import edit_routes

    # Kept on disk only by the server that owns the workspace's state.
    pending = pneuma.workspace / STATE_DIR / "edits" / "pending.json" if pneuma.config.persist else None
    edits = HandEdits(pending)
    pneuma.session.hooks.add(FEATURE_NAME, edits)
    return edit_routes(pneuma, edits)
