"""The headless viewer as a host plugin (docs/hooks.md,
"register_session_features"): it answers the session's viewer actions that
find no tab open, subscribes to the session's tabs, closes with the server
and serves its state at ``GET /api/headless-viewer``.

Imported whenever the plugin manager is built, so it imports nothing heavy
until a server is actually built."""

from __future__ import annotations

from typing import Any

from pneuma import hookimpl

FEATURE_NAME = "headless_viewer"


@hookimpl
def register_session_features(pneuma: Any) -> list[Any]:
    from aiohttp import web

    from pneuma.headless_viewer.settings import Settings
    from pneuma.headless_viewer.viewer import HeadlessViewer

    settings = Settings.from_environment()
    if not settings.enabled:
        return []

    def page_url() -> str:
        return f"{pneuma.api_url}/?session={pneuma.session_id}&token={pneuma.token}&client=headless"

    viewer = HeadlessViewer(pneuma.session.viewer_actions, page_url, settings)
    pneuma.session.viewer_actions.when_no_tab = viewer.answer
    pneuma.session.hooks.add(FEATURE_NAME, viewer)
    pneuma.on_shutdown(viewer.stop)

    async def status(request: web.Request) -> web.Response:
        return web.json_response(viewer.status())

    return [web.get("/api/headless-viewer", status)]
