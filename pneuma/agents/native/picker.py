"""The chat's browser picker for native sessions: the ``select_browser``
message, subscribed to the session's hooks (pneuma.server.session_hooks)
while the native backend runs. A session without it answers the message
with the refusal its catalogue entry names (docs/native.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

FEATURE_NAME = "browser_picker"


class _Tabs(Protocol):
    def error_to(self, connection: Any, message: str, code: str = ...) -> None: ...


class BrowserPicker:
    """Hands the person's pick to ``select`` (the backend's
    ``select_browser``), which answers None or ``{code, message}``."""

    message_types = ("select_browser",)

    def __init__(self, session: _Tabs, select: Callable[[str], dict[str, str] | None]) -> None:
        self._session = session
        self._select = select

    async def handle_message(self, connection: Any, msg: Any) -> None:
        problem = self._select(msg.clientId)
        if problem:
            self._session.error_to(connection, problem["message"], problem["code"])


def subscribe(sink: object, picker_of: Callable[[_Tabs], BrowserPicker]) -> Callable[[], None]:
    """Subscribe the picker to ``sink``'s hooks, when it has any (a
    session; a bare event sink in a test has none); return how to
    unsubscribe it."""
    hooks = getattr(sink, "hooks", None)
    if hooks is None:
        return lambda: None
    picker = picker_of(sink)  # type: ignore[arg-type]
    hooks.add(FEATURE_NAME, picker)
    return lambda: hooks.remove(FEATURE_NAME, picker)
