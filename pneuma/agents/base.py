"""What every agent backend provides to a session."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BackendSpec:
    """A backend a plugin offers for ``pneuma run --backend NAME``.

    ``factory`` is called with keyword arguments describing the session
    (see ``pneuma.agents.session_backend_kwargs``) and returns the backend.
    """

    name: str
    description: str
    factory: Callable[..., Any]
