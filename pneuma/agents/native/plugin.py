"""The native backend as a plugin: it offers itself through
``register_backends`` exactly as a third-party backend package would (the
host lists this module in ``DEFAULT_PLUGINS`` instead of an entry point).

The runtime is imported only when a session chooses ``--backend native``,
so listing backends stays cheap.
"""

from __future__ import annotations

from typing import Any

from pneuma.api import AgentBackend, AgentEventSink, BackendOptions, BackendSpec, Pneuma, hookimpl


def _native(options: BackendOptions, sink: AgentEventSink) -> AgentBackend:
    from .backend import NativeBackend

    return NativeBackend(options, sink)


def _native_routes(pneuma: Pneuma) -> list[Any]:
    from .routes import native_routes

    return native_routes(pneuma)


NATIVE = BackendSpec(
    name="native",
    description=(
        "Pneuma's own runtime: drives the Anthropic Messages API itself, with the "
        "mode's tools, the viewer's actions and connected browser clients "
        "(`pneuma browser-client`). Needs ANTHROPIC_API_KEY."
    ),
    factory=_native,
    routes=_native_routes,
)


@hookimpl
def register_backends() -> list[BackendSpec]:
    return [NATIVE]
