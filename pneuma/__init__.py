"""Pneuma: a person and a code agent make things together, seen live in the browser."""

from __future__ import annotations

import sys

if sys.argv and sys.argv[0].rsplit("/", 1)[-1] == "pneuma":
    # The `pneuma` command is still loading: Ctrl-C ends it quietly, as
    # nothing is written yet (pneuma.cli.main hands Ctrl-C back to the commands).
    import signal

    def _stop_while_loading(signum: int, frame: object) -> None:
        raise SystemExit(130)

    signal.signal(signal.SIGINT, _stop_while_loading)

from typing import TYPE_CHECKING, Any  # noqa: E402 (after the Ctrl-C guard)

__version__ = "0.1.0"

if TYPE_CHECKING:
    import pluggy

    hookimpl: pluggy.HookimplMarker
    """Decorator marking a function or method as an implementation of a Pneuma hook."""


def __getattr__(name: str) -> Any:
    # ``hookimpl`` is made on first use: `pneuma run` prints its ready line
    # before any plugin (and so pluggy) is imported.
    if name == "hookimpl":
        import pluggy

        marker = pluggy.HookimplMarker("pneuma")
        globals()["hookimpl"] = marker
        return marker
    raise AttributeError(f"module 'pneuma' has no attribute {name!r}")


__all__ = ["__version__", "hookimpl"]
