"""Follow-ups: what the person sends while the agent works, held by the
server until the agent's turn ends (docs/protocol.md, "Queued follow-ups").

Held here rather than handed to the agent at once (which would queue it
in its own way, out of sight): every tab shows the message as queued, the
person can change or withdraw it until the agent takes it, and a turn
that is stopped ends before the follow-up begins, so the page's "Stopped"
line stays with the turn it is about.

A queued message is announced as ``user_message_queued``; when the turn
ends the oldest is taken (``queued_message_taken``) and goes on as an
ordinary ``user_message``. ``queued_message_edit`` and
``queued_message_cancel`` change one still queued; one already taken (or
never queued) is refused with ``E_CONFLICT``. Tabs that load the
conversation get the queue in ``queued_messages`` beside the history.
The queue lives in memory: what a stopped server still held was never
sent, so it is not part of the conversation.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pneuma.core.messages import QueuedMessageCancel, QueuedMessageEdit, UserMessage

log = logging.getLogger(__name__)

# The page says what to do instead of editing a message the agent has.
TAKEN = "the agent already has this message (or it was withdrawn): it can no longer be changed"


class FollowUpHost(Protocol):
    """What of the session this needs (``pneuma.server.session.Session``)."""

    status: str

    def emit(self, message: dict[str, Any]) -> None: ...

    def error_to(self, connection: Any, message: str, code: str = ...) -> None: ...

    def spawn(self, coro: Any) -> None: ...


@dataclass
class QueuedFollowUp:
    queue_id: str
    message: UserMessage
    timestamp: float

    def public(self) -> dict[str, Any]:
        """As the tabs show it: the text, never the images' data."""
        shown: dict[str, Any] = {"queue_id": self.queue_id, "content": self.message.content,
                                 "timestamp": self.timestamp}
        if self.message.client_msg_id:
            shown["client_msg_id"] = self.message.client_msg_id
        if self.message.images:
            shown["images"] = [{"media_type": i.media_type, "size": len(i.data)}
                               for i in self.message.images]
        return shown


class FollowUps:
    """One session's queue of follow-ups, oldest first. Subscribed to the
    session's hooks for the browser's ``queued_message_*`` messages and to
    describe the queue beside the history (pneuma.server.session_hooks)."""

    message_types = ("queued_message_cancel", "queued_message_edit")

    def __init__(self, session: FollowUpHost,
                 deliver: Callable[[UserMessage], Awaitable[None]]) -> None:
        self._session = session
        self._deliver = deliver
        self._queue: list[QueuedFollowUp] = []
        self._ids = itertools.count(1)
        self._taking = False

    def __len__(self) -> int:
        return len(self._queue)

    def hold(self, message: UserMessage) -> bool:
        """Queue ``message`` if the agent is busy (or others wait before
        it, to keep their order); False when it may go at once."""
        if self._session.status == "idle" and not self._queue and not self._taking:
            return False
        queued = QueuedFollowUp(f"q{time.time_ns():x}-{next(self._ids)}", message, time.time())
        self._queue.append(queued)
        self._session.emit({"type": "user_message_queued", **queued.public()})
        return True

    def agent_free(self) -> None:
        """The session went idle: the oldest follow-up goes next, once the
        broadcasts that ended the turn are out (a task, not a call here)."""
        if self._queue and not self._taking:
            self._taking = True
            self._session.spawn(self._take_next())

    async def _take_next(self) -> None:
        self._taking = False
        if self._session.status != "idle" or not self._queue:
            return  # a turn began meanwhile: the next idle takes it
        taken = self._queue.pop(0)
        self._session.emit({"type": "queued_message_taken", "queue_id": taken.queue_id})
        try:
            await self._deliver(taken.message)
        except Exception:
            # As a message sent directly would be answered (the socket's handler).
            log.exception("a queued follow-up could not be handed to the agent")
            self._session.emit({"type": "error", "code": "internal",
                                "message": "the queued message could not be sent to the agent"})

    def _find(self, queue_id: str) -> QueuedFollowUp | None:
        return next((q for q in self._queue if q.queue_id == queue_id), None)

    async def handle_message(self, connection: Any, msg: Any) -> None:
        queued = self._find(msg.queue_id)
        if queued is None:
            self._session.error_to(connection, TAKEN, "E_CONFLICT")
            return
        if isinstance(msg, QueuedMessageCancel):
            self._queue.remove(queued)
            self._session.emit({"type": "queued_message_cancelled", "queue_id": queued.queue_id})
        elif isinstance(msg, QueuedMessageEdit):
            if not msg.content.strip() and not queued.message.images:
                self._session.error_to(connection, "the message is empty: cancel it instead",
                                       "bad_message")
                return
            queued.message = queued.message.model_copy(update={"content": msg.content})
            self._session.emit({"type": "queued_message_edited", "queue_id": queued.queue_id,
                                "content": msg.content})

    def history_fields(self) -> dict[str, Any]:
        return {"queued_messages": [q.public() for q in self._queue]}
