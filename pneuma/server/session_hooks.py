"""The session's lifecycle, which features subscribe to instead of being
called by name (docs/architecture.md, "Session hooks").

A feature is any object registered under a name with ``SessionHooks.add``;
it implements the hooks it cares about, each optional:

- ``async before_turn(turn)``: a user turn is about to reach the agent;
  the feature may put text before it (``turn.prefixes``).
- ``turn_ended(result)``: the agent's turn is over (the ``result`` message).
- ``files_changed(files)``: the watcher saw workspace files change.
- ``message_types`` and ``async handle_message(connection, msg)``: the
  browser messages of those types go to this feature (one feature a type).
- ``history_types``: the types of the feature's own broadcasts that are
  part of the conversation (logged, and shown again after a reload).
- ``log_opened()``: the conversation log is open (before serving);
  ``user_message_logged(message)``: a message of the person's was logged;
  ``agent_session_changed(agent_session_id)``: the agent's own session id.
- ``history_fields()``: fields a tab's ``message_history`` and
  ``conversation_switched`` carry beside the messages.
- ``tab_subscribed(connection)``: a tab subscribed and has its history;
  the feature may send it messages of its own.

Features are called in the order they were added. A lifecycle hook that
raises is logged and the others still run: a feature's failure never
breaks the session's turn. A message handler's exception reaches the
socket's own handler, which logs it and answers that tab ``internal``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

log = logging.getLogger(__name__)


@dataclass
class UserTurn:
    """A turn of the person's on its way to the agent."""

    content: str
    """What the person wrote (without the viewer context)."""
    echo: dict[str, Any]
    """The ``user_message`` broadcast, with its ``seq``."""
    prefixes: list[str] = field(default_factory=list)
    """Text put before the message the agent reads, in order, each
    followed by a blank line."""


@runtime_checkable
class BeforeTurn(Protocol):
    async def before_turn(self, turn: UserTurn) -> None: ...


@runtime_checkable
class TurnEnded(Protocol):
    def turn_ended(self, result: dict[str, Any]) -> None: ...


@runtime_checkable
class FilesChanged(Protocol):
    def files_changed(self, files: list[dict[str, Any]]) -> None: ...


@runtime_checkable
class LogOpened(Protocol):
    def log_opened(self) -> None: ...


@runtime_checkable
class UserMessageLogged(Protocol):
    def user_message_logged(self, message: dict[str, Any]) -> None: ...


@runtime_checkable
class AgentSessionChanged(Protocol):
    def agent_session_changed(self, agent_session_id: str | None) -> None: ...


@runtime_checkable
class HistoryFields(Protocol):
    def history_fields(self) -> dict[str, Any]: ...


@runtime_checkable
class TabSubscribed(Protocol):
    def tab_subscribed(self, connection: Any) -> None: ...


@runtime_checkable
class MessageHandler(Protocol):
    message_types: tuple[str, ...]

    async def handle_message(self, connection: Any, msg: Any) -> None: ...


class SessionHooks:
    """One session's features, by name, in the order they were added."""

    def __init__(self) -> None:
        self._features: dict[str, object] = {}
        self._handlers: dict[str, str] = {}  # message type -> feature name
        # The broadcasts of subscribed features that the conversation keeps.
        self.history_types: frozenset[str] = frozenset()

    def add(self, name: str, feature: object) -> None:
        """Subscribe ``feature``; one under the same name is replaced (a
        restarted agent registers its own again). A message type another
        feature already handles is refused: two answers to one message
        would be a bug found only in use."""
        self.remove(name)
        types = feature.message_types if isinstance(feature, MessageHandler) else ()
        for kind in types:
            owner = self._handlers.get(kind)
            if owner is not None:
                raise ValueError(f"{name!r} handles {kind!r}, which {owner!r} already handles")
        self._features[name] = feature
        for kind in types:
            self._handlers[kind] = name
        self._collect_history_types()

    def remove(self, name: str, feature: object | None = None) -> None:
        """Unsubscribe ``name`` (only if it is still ``feature``, when given)."""
        current = self._features.get(name)
        if current is None or (feature is not None and current is not feature):
            return
        del self._features[name]
        self._handlers = {kind: owner for kind, owner in self._handlers.items() if owner != name}
        self._collect_history_types()

    def _collect_history_types(self) -> None:
        self.history_types = frozenset(
            kind for feature in self._features.values()
            for kind in getattr(feature, "history_types", ()))

    def get(self, name: str) -> object | None:
        return self._features.get(name)

    def names(self) -> list[str]:
        return list(self._features)

    def handler_for(self, message_type: str) -> MessageHandler | None:
        name = self._handlers.get(message_type)
        feature = self._features.get(name) if name is not None else None
        return feature if isinstance(feature, MessageHandler) else None

    def _each(self, hook: type[Any]) -> Iterator[tuple[str, Any]]:
        for name, feature in list(self._features.items()):
            if isinstance(feature, hook):
                yield name, feature

    async def before_turn(self, turn: UserTurn) -> None:
        for name, feature in self._each(BeforeTurn):
            try:
                await feature.before_turn(turn)
            except Exception:
                log.exception("%s failed before the turn", name)

    def turn_ended(self, result: dict[str, Any]) -> None:
        for name, feature in self._each(TurnEnded):
            try:
                feature.turn_ended(result)
            except Exception:
                log.exception("%s failed at the end of the turn", name)

    def files_changed(self, files: list[dict[str, Any]]) -> None:
        for name, feature in self._each(FilesChanged):
            try:
                feature.files_changed(files)
            except Exception:
                log.exception("%s failed on changed files", name)

    def log_opened(self) -> None:
        for name, feature in self._each(LogOpened):
            try:
                feature.log_opened()
            except Exception:
                log.exception("%s failed when the log opened", name)

    def user_message_logged(self, message: dict[str, Any]) -> None:
        for name, feature in self._each(UserMessageLogged):
            try:
                feature.user_message_logged(message)
            except Exception:
                log.exception("%s failed on a logged message", name)

    def agent_session_changed(self, agent_session_id: str | None) -> None:
        for name, feature in self._each(AgentSessionChanged):
            try:
                feature.agent_session_changed(agent_session_id)
            except Exception:
                log.exception("%s failed on the agent's session id", name)

    def history_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        for name, feature in self._each(HistoryFields):
            try:
                fields.update(feature.history_fields())
            except Exception:
                log.exception("%s failed to describe the history", name)
        return fields

    def tab_subscribed(self, connection: Any) -> None:
        for name, feature in self._each(TabSubscribed):
            try:
                feature.tab_subscribed(connection)
            except Exception:
                log.exception("%s failed on a subscribed tab", name)
