"""The backends that ship with the host."""

from __future__ import annotations

from pneuma import hookimpl
from pneuma.agents.base import BackendSpec


def _no_agent(**_: object) -> None:
    return None


@hookimpl
def register_backends() -> list[BackendSpec]:
    return [
        BackendSpec(
            name="none",
            description="Serve the viewer without an agent; the chat says why.",
            factory=_no_agent,
        ),
    ]
