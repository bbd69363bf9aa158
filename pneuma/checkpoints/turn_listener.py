"""Per-turn checkpoints as a subscriber of the session's hooks
(pneuma.server.session_hooks; docs/checkpoints.md).

Before a turn of the person's reaches the agent the workspace is recorded,
so that it can be rewound to (``pneuma checkpoints``, the chat's "Rewind to
here"); when the turn ends, what it changed is shown under the person's
message; restores (the chat's own and the terminal's) are listed in the chat.
The store's work runs in worker threads; a failure is logged and the turn
goes on: the conversation matters more than its checkpoint.

Nothing but a stat walk holds a message up (pneuma.checkpoints.baseline;
docs/checkpoints.md, "Turns are never held up"): reading and storing what
changed, writing the checkpoint and pruning run while the agent works, one
job after another in the order of the turns (``_in_order``), and a turn's
checkpoint is announced (``turn_checkpoint``) once it is complete. When
the session starts, a standing baseline stores the workspace's contents in
the background, so that the first turn finds them kept already.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import Any, Protocol

from pneuma.checkpoints import batch_write, restore_journal
from pneuma.checkpoints.baseline import Stats, StatWalker, Stopped, keep, read_first
from pneuma.checkpoints.described_turns import DescribedTurns, described_json
from pneuma.checkpoints.model import FileMap
from pneuma.checkpoints.store import AGENT_NOTE, Checkpoints

log = logging.getLogger(__name__)

FEATURE_NAME = "checkpoints"
# Recordings queued behind one another (``_in_order``) before a new turn's
# message waits for them: turns that end faster than their checkpoints are
# stored (an agent looping through queued follow-ups on a huge workspace)
# would otherwise pile up stat walks and tasks without bound.
MAX_QUEUED_JOBS = 8


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
    history_types = ("turn_checkpoint", "turn_changes", "workspace_restored", "turn_described")

    def __init__(self, store: Checkpoints, session: CheckpointHost) -> None:
        self.store = store
        self._session = session
        # The only work before a message goes (it remembers the names it takes).
        self._walker = StatWalker(store.sandbox, store.watched)
        self._listing_restores = False
        self._restores_to_look_for = False
        # Turns whose stat walk was taken before they reached the agent and
        # not ended yet: a turn of no message of the person's (the greeting)
        # ends none.
        self._turns_checkpointed = 0
        # Whether the newest turn's checkpoint was written (its end is
        # recorded only then); set by the jobs, in their order.
        self._last_recorded = False
        # The last job queued by ``_in_order``: each waits for the one before.
        self._tail: asyncio.Future[None] | None = None
        self._queued = 0
        # The stat walk of the last turn's end, begun when it ended: the
        # next turn waits for it (a stat walk) so that its own comes after.
        self._end_walk: asyncio.Future[tuple[Stats, FileMap]] | None = None
        # The standing baseline (``start_baseline``) until a turn used it.
        self._baseline: FileMap | None = None
        self._baseline_started = False
        self._stopping = False
        # Issue 28 (engineer A): each turn in the mode's terms, kept per ref
        # for the routes and the revert (pneuma.checkpoints.described_turns).
        self.described = DescribedTurns(store, getattr(session, "mode", None))

    # --- the standing baseline ---

    def start_baseline(self) -> None:
        """Store the workspace's contents now, in the background, so that the
        first turn's checkpoint has only its stats to compare (a big
        workspace's first checkpoint read every file before the first
        message could go)."""
        if self._baseline_started:
            return
        self._baseline_started = True
        store = self.store

        def baseline() -> FileMap:
            seen = self._walker.walk()
            return keep(store.sandbox, store.blobs, seen, [store.newest_files() or {}],
                        store.policy.max_file_bytes, stop=lambda: self._stopping)

        async def take() -> None:
            try:
                self._baseline = await asyncio.to_thread(baseline)
            except Stopped:
                return
            except Exception as exc:  # the first turn reads what it needs itself
                log.info("no checkpoint baseline: %s", exc)

        self._in_order(take)

    def stop(self) -> None:
        """The server is closing: a baseline still reading stops (the
        first turn would have read what it needs itself)."""
        self._stopping = True

    # --- turns ---

    async def before_turn(self, turn: _Turn) -> None:
        """Take the workspace's stats, then let the message go; its
        checkpoint is stored and announced (``turn_checkpoint``, with the
        user message it belongs to) while the agent works. Put before the
        message what a restore since the agent's last turn left for it to
        know (the files it changed)."""
        session = self._session
        while self._queued >= MAX_QUEUED_JOBS and self._tail is not None:
            await asyncio.wait([self._tail])
        if self._end_walk is not None:
            # The last turn's end is measured before this turn begins.
            await asyncio.wait([self._end_walk])
        note = await self._take_agent_note()
        try:
            seen, early = await asyncio.to_thread(self._walk)
        except Exception as exc:
            if not session.saving.failed("checkpoints", exc):
                log.warning("could not record a checkpoint before the turn: %s", exc)
        else:
            self._turns_checkpointed += 1
            self._in_order(lambda: self._record(turn, seen, early))
        if note:
            turn.prefixes.append(f"<workspace-restored>{note}</workspace-restored>")

    def _walk(self, changed: bool = False) -> tuple[Stats, FileMap]:
        """The stat walk, and the few files worth reading at once
        (baseline.read_first; ``changed``: a turn's end)."""
        store = self.store
        seen = self._walker.walk()
        try:
            early = read_first(store.sandbox, store.blobs, seen, [store.newest_files() or {}],
                               store.policy.max_file_bytes, changed=changed)
        except Exception:  # the turn's job reads them, and says what failed
            early = {}
        return seen, early

    async def _take_agent_note(self) -> str:
        """What a restore left for the agent: looked for without the store's
        lock (held by a recording still under way), taken under it."""
        if not os.path.lexists(self.store.directory / AGENT_NOTE):
            return ""
        try:
            return await asyncio.to_thread(self.store.take_agent_note)
        except Exception as exc:
            log.warning("could not read what the last restore left for the agent: %s", exc)
            return ""

    async def _record(self, turn: _Turn, seen: Stats, early: FileMap) -> None:
        store, session = self.store, self._session
        # A restore from the terminal that no file event brought (it changed
        # nothing the watcher sees) is listed before the turn it precedes.
        await self.list_restores()
        baseline, self._baseline = self._baseline, None

        def record() -> str:
            files = keep(store.sandbox, store.blobs, seen,
                         [store.newest_files() or {}, baseline or {}],
                         store.policy.max_file_bytes, read_early=early)
            return store.record(turn.content, conversation=session.conversation_id,
                                files=files, prune=False).ref

        self._last_recorded = False
        try:
            ref = await asyncio.to_thread(record)
        except Exception as exc:
            if not session.saving.failed("checkpoints", exc):
                log.warning("could not record a checkpoint before the turn: %s", exc)
            return
        self._last_recorded = True
        session.saving.resumed("checkpoints")
        echo = turn.echo
        # The user message is found by its client_msg_id, else its timestamp.
        session.emit({"type": "turn_checkpoint", "ref": ref,
                      "client_msg_id": echo.get("client_msg_id"),
                      "user_seq": echo.get("seq"), "user_timestamp": echo.get("timestamp")})
        await self._prune()

    async def _prune(self) -> None:
        try:
            await asyncio.to_thread(self.store.prune)
        except Exception as exc:
            log.warning("could not prune the checkpoints: %s", exc)

    def turn_ended(self, result: dict[str, Any]) -> None:
        """What changes after the turn is someone else's (a hand edit that
        a rewind must not overwrite silently)."""
        if not self._turns_checkpointed:
            # Not a turn of the person's (a greeting): recording its end
            # would mark the last turn's end later than it was, and a hand
            # edit made in between as the agent's work.
            return
        self._turns_checkpointed -= 1
        walk = asyncio.ensure_future(asyncio.to_thread(self._walk, True))
        self._end_walk = walk
        self._in_order(lambda: self._record_end(walk))

    async def _record_end(self, walk: asyncio.Future[tuple[Stats, FileMap]]) -> None:
        store, session = self.store, self._session
        if not self._last_recorded:
            return  # the turn's own checkpoint could not be written

        def end_and_compare(walked: tuple[Stats, FileMap]) -> dict[str, Any] | None:
            seen, early = walked
            files = keep(store.sandbox, store.blobs, seen, [store.newest_files() or {}],
                         store.policy.max_file_bytes, read_early=early)
            checkpoint = store.turn_ended(files=files, prune=False)
            if checkpoint is None or checkpoint.after is None:
                return None
            return {"ref": checkpoint.ref, "changes": store.changes_of(checkpoint.ref).to_json()}

        try:
            ended = await asyncio.to_thread(end_and_compare, await walk)
        except Exception as exc:
            if not session.saving.failed("checkpoints", exc):
                log.warning("could not record the end of the turn: %s", exc)
            return
        if ended is not None:
            # The chat shows under the user's message what the turn changed.
            session.emit({"type": "turn_changes", **ended})
            self._describe_soon(ended["ref"])
        # What the turn's recordings stored, made durable now rather than
        # by the next rewind while the person waits.
        batch_write.submit(partial(restore_journal.sync_stored, store))
        # No pruning here: the next turn's job prunes once its message has
        # gone (pruning now would share the CPU with that message's stat walk).

    def _describe_soon(self, ref: str) -> None:
        """Issue 28 (engineer A): the turn in the mode's terms
        (``turn_described``), described in a worker thread outside the
        recordings' order, so that no message ever waits for a describer."""

        async def describe() -> None:
            try:
                canonical, turn = await asyncio.to_thread(self.described.describe, ref)
            except Exception as exc:  # the per-file list is there already
                log.warning("could not describe turn %s: %s", ref, exc)
                return
            self._session.emit({"type": "turn_described", **described_json(canonical, turn)})

        self._session.spawn(describe())

    def _in_order(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` once every job queued before it is done: never two
        recordings interleaved, each turn's after the one before."""
        previous = self._tail
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._tail = done
        self._queued += 1

        async def job() -> None:
            try:
                if previous is not None:
                    await asyncio.wait([previous])
                await work()
            finally:
                self._queued -= 1
                if not done.done():
                    done.set_result(None)

        self._session.spawn(job())

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
