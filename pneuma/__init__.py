"""Pneuma: a person and a code agent make things together, seen live in the browser."""

import pluggy

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("pneuma")
"""Decorator marking a function or method as an implementation of a Pneuma hook."""

__all__ = ["__version__", "hookimpl"]
