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
The queue is kept on disk as it changes (pneuma.server.follow_up_file),
once the session has its log (``log_opened``): a server that starts again
brings back what a stopped one still held, *held*: shown with Send, Edit
and Cancel, never sent on its own (the person may have stopped Pneuma on
purpose). ``queued_message_send`` releases one (``queued_message_released``)
and it goes when the agent is free. What was never sent is not part of the
conversation, so it is not in the log.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from pneuma.core.messages import (
    QueuedMessageCancel,
    QueuedMessageEdit,
    QueuedMessageSend,
    UserMessage,
)
from pneuma.server import follow_up_file
from pneuma.server.follow_up_file import KeptFollowUp, QueueTooLarge

log = logging.getLogger(__name__)

# The page says what to do instead of editing a message the agent has.
TAKEN = "the agent already has this message (or it was withdrawn): it can no longer be changed"


class FollowUpHost(Protocol):
    """What of the session this needs (``pneuma.server.session.Session``)."""

    status: str
    workspace: Path
    backend: Any

    def emit(self, message: dict[str, Any]) -> None: ...

    def error_to(self, connection: Any, message: str, code: str = ...) -> None: ...

    def spawn(self, coro: Any) -> None: ...


class QueuedFollowUp(KeptFollowUp):
    """A follow-up in the queue; ``held``: brought back from a stopped run,
    waiting for the person's Send."""

    def public(self) -> dict[str, Any]:
        """As the tabs show it: the text, never the images' data."""
        shown: dict[str, Any] = {"queue_id": self.queue_id, "content": self.message.content,
                                 "timestamp": self.timestamp}
        if self.message.client_msg_id:
            shown["client_msg_id"] = self.message.client_msg_id
        if self.message.images:
            shown["images"] = [{"media_type": i.media_type, "size": len(i.data)}
                               for i in self.message.images]
        if self.held:
            shown["held"] = True
        return shown


class FollowUps:
    """One session's queue of follow-ups, oldest first. Subscribed to the
    session's hooks for the browser's ``queued_message_*`` messages and to
    describe the queue beside the history (pneuma.server.session_hooks)."""

    message_types = ("queued_message_cancel", "queued_message_edit", "queued_message_send")

    def __init__(self, session: FollowUpHost,
                 deliver: Callable[[UserMessage], Awaitable[None]]) -> None:
        self._session = session
        self._deliver = deliver
        self._queue: list[QueuedFollowUp] = []
        self._ids = itertools.count(1)
        self._taking = False
        # The file the queue is kept in, once the session logs (log_opened).
        self._path: Path | None = None
        self._write_failed = False

    def __len__(self) -> int:
        return len(self._queue)

    def hold(self, message: UserMessage, connection: Any = None) -> bool:
        """Queue ``message`` if the agent is busy (or others wait before
        it, to keep their order); False when it may go at once. One that
        the file cannot keep is refused to ``connection`` (True: handled)."""
        if self._session.status == "idle" and not self._waiting() and not self._taking:
            return False
        queued = QueuedFollowUp(f"q{time.time_ns():x}-{next(self._ids)}", message, time.time())
        try:
            self._keep([*self._queue, queued])
        except QueueTooLarge as exc:
            self._session.error_to(connection, f"this message was not queued: {exc}; wait for "
                                   "the agent to take the queued ones, or cancel one", "E_TOO_LARGE")
            return True
        self._queue.append(queued)
        self._session.emit({"type": "user_message_queued", **queued.public()})
        return True

    def _waiting(self) -> bool:
        """Follow-ups the agent takes when it is free (not the held ones)."""
        return any(not q.held for q in self._queue)

    def agent_free(self) -> None:
        """The session went idle: the oldest follow-up goes next, once the
        broadcasts that ended the turn are out (a task, not a call here)."""
        if self._waiting() and not self._taking:
            self._taking = True
            self._session.spawn(self._take_next())

    async def _take_next(self) -> None:
        self._taking = False
        taken = next((q for q in self._queue if not q.held), None)
        if self._session.status != "idle" or taken is None:
            return  # a turn began meanwhile: the next idle takes it
        if self._session.backend is None:
            # No agent to take it (the server is stopping, or the agent is
            # being restarted): it stays queued, and on disk, for the agent
            # that comes (its cli_connected makes the session idle again).
            return
        self._keep([q for q in self._queue if q is not taken])
        self._queue.remove(taken)
        self._session.emit({"type": "queued_message_taken", "queue_id": taken.queue_id})
        try:
            await self._deliver(taken.message)
        except Exception:
            # As a message sent directly would be answered (the socket's handler).
            log.exception("a queued follow-up could not be handed to the agent")
            self._session.emit({"type": "error", "code": "internal",
                                "message": "the queued message could not be sent to the agent"})

    # --- on disk (pneuma.server.follow_up_file) ---

    def log_opened(self) -> None:
        """The session keeps its state now: bring back what a stopped run
        still held, held, and keep the queue on disk from here on."""
        if self._path is not None:
            return
        self._path = follow_up_file.queue_path(self._session.workspace)
        kept, warning = follow_up_file.load(self._path)
        if warning:
            log.warning("%s", warning)
        if not kept:
            return
        self._queue = [QueuedFollowUp(k.queue_id, k.message, k.timestamp, held=True) for k in kept]
        count = len(kept)
        log.warning("%d queued message%s came back from the last run, held: not sent, since "
                    "Pneuma stopped before the agent took %s; Send or Cancel in the page",
                    count, "" if count == 1 else "s", "it" if count == 1 else "them")

    def _keep(self, queue: list[QueuedFollowUp]) -> None:
        """Write ``queue`` to the file before the tabs hear of the change,
        so that what a tab was told is what a restart brings back.
        ``QueueTooLarge`` past the bound; a failed write is said once and
        the queue goes on in memory."""
        if self._path is None:
            return
        data = follow_up_file.encode(list(queue))
        try:
            follow_up_file.save(self._path, data)
        except OSError as exc:
            if not self._write_failed:
                log.warning("could not keep the queued messages in %s: %s; they are lost if "
                            "Pneuma stops before the agent takes them", self._path, exc)
            self._write_failed = True
        else:
            self._write_failed = False

    def _find(self, queue_id: str) -> QueuedFollowUp | None:
        return next((q for q in self._queue if q.queue_id == queue_id), None)

    async def handle_message(self, connection: Any, msg: Any) -> None:
        queued = self._find(msg.queue_id)
        if queued is None:
            self._session.error_to(connection, TAKEN, "E_CONFLICT")
            return
        if isinstance(msg, QueuedMessageCancel):
            self._keep([q for q in self._queue if q is not queued])
            self._queue.remove(queued)
            self._session.emit({"type": "queued_message_cancelled", "queue_id": queued.queue_id})
        elif isinstance(msg, QueuedMessageEdit):
            await self._edit(connection, queued, msg.content)
        elif isinstance(msg, QueuedMessageSend) and queued.held:
            queued.held = False
            self._keep(self._queue)
            self._session.emit({"type": "queued_message_released", "queue_id": queued.queue_id})
            self.agent_free()

    async def _edit(self, connection: Any, queued: QueuedFollowUp, content: str) -> None:
        if not content.strip() and not queued.message.images:
            self._session.error_to(connection, "the message is empty: cancel it instead",
                                   "bad_message")
            return
        edited = queued.message.model_copy(update={"content": content})
        changed = QueuedFollowUp(queued.queue_id, edited, queued.timestamp, queued.held)
        try:
            self._keep([changed if q is queued else q for q in self._queue])
        except QueueTooLarge as exc:
            self._session.error_to(connection, f"the edit was not kept: {exc}", "E_TOO_LARGE")
            return
        queued.message = edited
        self._session.emit({"type": "queued_message_edited", "queue_id": queued.queue_id,
                            "content": content})

    def history_fields(self) -> dict[str, Any]:
        return {"queued_messages": [q.public() for q in self._queue]}
