"""Per-turn checkpoints as a subscriber of the session's hooks
(pneuma.server.session_hooks; docs/checkpoints.md).

Before a turn of the person's reaches the agent the workspace is recorded,
so that it can be rewound to (``pneuma checkpoints``, the chat's "Rewind to
here"); when the turn ends, what it changed is shown under the person's
message; restores (the chat's own and the terminal's) are listed in the chat.
The store's work runs in worker threads; a failure is logged and the turn
goes on: the conversation matters more than its checkpoint.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, Protocol

from pneuma.checkpoints.store import Checkpoints

log = logging.getLogger(__name__)

FEATURE_NAME = "checkpoints"


class _Saving(Protocol):
    def failed(self, what: str, exc: BaseException) -> bool: ...

    def resumed(self, what: str) -> None: ...


class CheckpointHost(Protocol):
    """What of the session this needs (``pneuma.server.session.Session``)."""

    conversation_id: str
    saving: _Saving

    def emit(self, message: dict[str, Any]) -> None: ...

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None: ...


class _Turn(Protocol):
    content: str
    echo: dict[str, Any]
    prefixes: list[str]


class CheckpointTurns:
    """The checkpoints of one session's turns, in ``store``."""

    # Part of the conversation: what each turn changed, and rewinds.
    history_types = ("turn_checkpoint", "turn_changes", "workspace_restored")

    def __init__(self, store: Checkpoints, session: CheckpointHost) -> None:
        self.store = store
        self._session = session
        self._listing_restores = False
        self._restores_to_look_for = False
        # Turns recorded before they reached the agent and not ended yet: a
        # turn of no message of the person's (the greeting) ends none.
        self._turns_checkpointed = 0

    async def before_turn(self, turn: _Turn) -> None:
        """Record the workspace and tell the chat which user message the
        checkpoint belongs to; put before the message what a restore since
        the agent's last turn left for it to know (the files it changed)."""
        store, session = self.store, self._session

        def record() -> tuple[str, str]:
            note = store.take_agent_note()
            return note, store.record(turn.content, conversation=session.conversation_id).ref

        # A restore from the terminal that no file event brought (it changed
        # nothing the watcher sees) is listed before the turn it precedes.
        await self.list_restores()
        try:
            note, ref = await asyncio.to_thread(record)
        except Exception as exc:
            if not session.saving.failed("checkpoints", exc):
                log.warning("could not record a checkpoint before the turn: %s", exc)
            return
        session.saving.resumed("checkpoints")
        self._turns_checkpointed += 1
        echo = turn.echo
        # The user message is found by its client_msg_id, else its timestamp.
        session.emit({"type": "turn_checkpoint", "ref": ref,
                      "client_msg_id": echo.get("client_msg_id"),
                      "user_seq": echo.get("seq"), "user_timestamp": echo.get("timestamp")})
        if note:
            turn.prefixes.append(f"<workspace-restored>{note}</workspace-restored>")

    def turn_ended(self, result: dict[str, Any]) -> None:
        """What changes after the turn is someone else's (a hand edit that
        a rewind must not overwrite silently)."""
        if not self._turns_checkpointed:
            # Not a turn of the person's (a greeting): recording its end
            # would mark the last turn's end later than it was, and a hand
            # edit made in between as the agent's work.
            return
        self._turns_checkpointed -= 1
        store, session = self.store, self._session

        def end_and_compare() -> dict[str, Any] | None:
            checkpoint = store.turn_ended()
            if checkpoint is None or checkpoint.after is None:
                return None
            return {"ref": checkpoint.ref, "changes": store.changes_of(checkpoint.ref).to_json()}

        async def record_end() -> None:
            try:
                ended = await asyncio.to_thread(end_and_compare)
            except Exception as exc:
                if not session.saving.failed("checkpoints", exc):
                    log.warning("could not record the end of the turn: %s", exc)
                return
            if ended is not None:
                # The chat shows under the user's message what the turn changed.
                session.emit({"type": "turn_changes", **ended})

        session.spawn(record_end())

    def files_changed(self, files: list[dict[str, Any]]) -> None:
        """Files written by ``pneuma checkpoints restore`` in a terminal:
        the chat lists that restore as it lists its own."""
        self.list_restores_soon()

    async def list_restores(self) -> None:
        """List in the chat the restores it has not listed yet: the chat's
        own, and those made with ``pneuma checkpoints restore`` while this
        run was up or before it started (the store keeps them as notices)."""
        try:
            notices = await asyncio.to_thread(self.store.take_chat_notices)
        except Exception as exc:
            log.warning("could not read the restores to list in the chat: %s", exc)
            return
        for notice in notices:
            notice.pop("type", None)
            self._session.emit({"type": "workspace_restored", **notice})

    def list_restores_soon(self) -> None:
        """``list_restores`` in the background, once at a time: files just
        changed, perhaps by a restore from the terminal (still writing: the
        listing waits for the store's lock, held until its notice is out)."""
        self._restores_to_look_for = True
        if self._listing_restores:
            return  # the running listing looks again when it is done
        self._listing_restores = True

        async def listing() -> None:
            try:
                while self._restores_to_look_for:
                    self._restores_to_look_for = False
                    await self.list_restores()
            finally:
                self._listing_restores = False

        self._session.spawn(listing())


class _Hooks(Protocol):
    def get(self, name: str) -> object | None: ...


def subscribed(hooks: _Hooks) -> CheckpointTurns | None:
    """The checkpoints subscribed to a session's hooks; None for a session
    that persists nothing."""
    turns = hooks.get(FEATURE_NAME)
    return turns if isinstance(turns, CheckpointTurns) else None
