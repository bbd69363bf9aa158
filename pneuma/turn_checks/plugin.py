"""The checks after every turn as a host plugin (docs/hooks.md,
"register_session_features"): subscribed to the session's hooks when the
served mode declares checks, with its routes under ``/api/turn-checks``.

Imported whenever the plugin manager is built, so it imports nothing heavy
until a server is actually built."""

from __future__ import annotations

from typing import Any

from pneuma import hookimpl


@hookimpl
def register_session_features(pneuma: Any) -> list[Any]:
    from pneuma.host.plugins import get_plugin_manager
    from pneuma.host.turn_checks import checks_for
    from pneuma.turn_checks.feature import FEATURE_NAME, TurnChecks
    from pneuma.turn_checks.routes import turn_check_routes
    from pneuma.turn_checks.state import TurnCheckState

    checks = checks_for(get_plugin_manager(), pneuma.mode.name)
    feature = TurnChecks(pneuma, checks, TurnCheckState(pneuma.workspace))
    if checks:
        pneuma.session.hooks.add(FEATURE_NAME, feature)
        pneuma.on_shutdown(feature.stop)
    return turn_check_routes(pneuma, feature)
