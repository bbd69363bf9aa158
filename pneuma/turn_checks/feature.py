"""The checks after every turn as a subscriber of the session's hooks
(pneuma.server.session_hooks; docs/checks.md).

Between a turn's start (``before_turn``) and a moment after its end the
watcher's batches (``files_changed``) are the files the turn changed; when
it ends, the mode's checks run on those that still exist, in the runner's
pool, in the background: nothing here holds a message up. The result is
broadcast (``turn_checked``, kept with the conversation and in
``.pneuma/turn-checks.json``), and a failed turn may get one repair turn
(pneuma.turn_checks.repair).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma.checkpoints import turn_listener
from pneuma.core.messages import UserMessage
from pneuma.host.turn_checks import CheckRequest, TurnCheck
from pneuma.turn_checks.page import SessionCheckPage
from pneuma.turn_checks.repair import Repairs, is_repair
from pneuma.turn_checks.runner import CheckRunner
from pneuma.turn_checks.state import TurnCheckState

log = logging.getLogger(__name__)

FEATURE_NAME = "turn_checks"
# After the turn's end, what the watcher still reports belongs to it (its
# debounce, a write the agent's shell finished as the turn ended).
SETTLE_S = 0.3


@dataclass
class _Turn:
    echo: dict[str, Any]
    content: str
    generation: int
    changed: set[str] = field(default_factory=set)
    closed: bool = False

    def identity(self) -> dict[str, Any]:
        return {"client_msg_id": self.echo.get("client_msg_id"),
                "user_seq": self.echo.get("seq"),
                "user_timestamp": self.echo.get("timestamp")}


def _checkable(workspace: Path, rel: str) -> bool:
    """A regular file inside the workspace: a link out of it (a shared zip's
    ``notes.md`` -> ``~/.ssh/id_rsa``) is never read, so its content never
    reaches a problem's message or the agent."""
    path = workspace / rel
    try:
        return path.is_file() and path.resolve().is_relative_to(workspace.resolve())
    except OSError:
        return False


class _NoTab:
    """The connection a repair turn comes from: nobody's tab (an error
    meant for it is logged, not sent)."""

    closed = False

    def send(self, text: str) -> None:
        log.warning("the repair turn was refused: %s", text[:300])


class TurnChecks:
    """One session's checks after every turn."""

    history_types = ("turn_checked", "turn_repair")

    def __init__(self, pneuma: Any, checks: list[TurnCheck], state: TurnCheckState,
                 runner: CheckRunner | None = None) -> None:
        self._pneuma = pneuma
        self.checks = checks
        self.state = state
        self.runner = runner or CheckRunner()
        self.repairs = Repairs(pneuma.broadcast, self._send_repair)
        self._turn: _Turn | None = None
        self._generation = 0
        self.checked = 0  # turns checked, for the status route and the tests

    # --- the session's hooks ---

    async def before_turn(self, turn: Any) -> None:
        """A new turn: a pending repair is dropped (unless this is the
        repair), and the files from here on are this turn's."""
        echo = dict(turn.echo)
        if not is_repair(echo.get("client_msg_id")):
            self.repairs.supersede()
        self._generation += 1
        self._turn = _Turn(echo, turn.content, self._generation)

    def files_changed(self, files: list[dict[str, Any]]) -> None:
        turn = self._turn
        if turn is None or turn.closed:
            return
        for entry in files:
            path = entry.get("path")
            if isinstance(path, str) and path:
                turn.changed.add(path)

    def turn_ended(self, result: dict[str, Any]) -> None:
        turn = self._turn
        if turn is None or turn.closed or not self.checks:
            return
        self._pneuma.spawn(self._check(turn))

    # --- checking ---

    async def _check(self, turn: _Turn) -> None:
        await asyncio.sleep(SETTLE_S)
        turn.closed = True
        workspace = self._pneuma.workspace
        changed = tuple(sorted(p for p in turn.changed if _checkable(workspace, p)))
        if not changed:
            return
        loop = asyncio.get_running_loop()
        page = SessionCheckPage(self._pneuma, loop) if any(c.needs_page for c in self.checks) else None
        params = dict(self._pneuma.params)

        def request_for(check: TurnCheck) -> CheckRequest:
            return CheckRequest(workspace=workspace, changed=changed, params=params,
                                mode=check.mode, page=page if check.needs_page else None)

        started = time.monotonic()
        result = await self.runner.run(self.checks, request_for)
        self.checked += 1
        message: dict[str, Any] = {
            "type": "turn_checked", "ref": await self._ref_of(turn), **turn.identity(),
            "repairTurn": is_repair(turn.echo.get("client_msg_id")), "files": list(changed),
            "seconds": round(time.monotonic() - started, 3), **result.to_json()}
        self._pneuma.broadcast(message)
        kept = {k: v for k, v in message.items() if k != "seq"}
        await asyncio.to_thread(self.state.keep, kept)
        if self._repair_due(turn, message):
            session = self._pneuma.session
            conversation = session.conversation_id

            def still_current() -> bool:
                # Not after a message of the person's, nor in another
                # conversation (switched to, or a branch of this one).
                return (self._generation == turn.generation
                        and session.conversation_id == conversation)

            await self.repairs.offer({"ref": message["ref"], **turn.identity()},
                                     result.problems, result.problem_count, still_current)

    def _repair_due(self, turn: _Turn, message: dict[str, Any]) -> bool:
        return (message["status"] == "failed" and self.state.repair
                and not message["repairTurn"] and self._generation == turn.generation)

    async def _ref_of(self, turn: _Turn) -> str | None:
        """The checkpoint of the turn (its ``turn_checkpoint``'s ref), when kept."""
        checkpoints = turn_listener.subscribed(self._pneuma.session.hooks)
        if checkpoints is None:
            return None
        conversation = self._pneuma.session.conversation_id

        def newest() -> str | None:
            for checkpoint in reversed(checkpoints.store.checkpoints()):
                if checkpoint.message == turn.content and checkpoint.conversation in (None, conversation):
                    return str(checkpoint.ref)
            return None

        try:
            return await asyncio.to_thread(newest)
        except Exception as exc:  # the badge shows without it
            log.info("no checkpoint ref for the checked turn: %s", exc)
            return None

    async def _send_repair(self, text: str, client_msg_id: str) -> None:
        message = UserMessage(type="user_message", content=text, client_msg_id=client_msg_id)
        await self._pneuma.session.handle(_NoTab(), message)

    # --- the page's routes ---

    def status(self) -> dict[str, Any]:
        pending = self.repairs.pending
        return {"repair": self.state.repair, "checks": [c.name for c in self.checks],
                "checked": self.checked, "repairsSent": self.repairs.sent,
                "pendingRepair": pending.id if pending else None,
                "results": self.state.results[-50:]}

    async def stop(self) -> None:
        """The server stops: a pending repair is not sent, no check starts."""
        pending, self.repairs.pending = self.repairs.pending, None
        if pending is not None:
            pending.cancelled = True
        self.runner.close()
