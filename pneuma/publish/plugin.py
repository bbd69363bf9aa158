"""Publishing as a host plugin: the two built-in publishers through
``register_publishers``, the Export menu's "Publish" through
``register_session_features`` (routes under ``/api/publish``).

Imported whenever the plugin manager is built, so it imports nothing
heavy until a hook is called."""

from __future__ import annotations

from typing import Any

from pneuma import hookimpl


@hookimpl
def register_publishers() -> list[Any]:
    from pneuma.publish.folder import FOLDER_PUBLISHER
    from pneuma.publish.git_branch import GIT_PUBLISHER

    return [GIT_PUBLISHER, FOLDER_PUBLISHER]


@hookimpl
def register_session_features(pneuma: Any) -> list[Any]:
    from pneuma.publish.routes import publish_routes

    return publish_routes(pneuma)
