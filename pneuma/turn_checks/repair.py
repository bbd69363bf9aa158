"""The one automatic repair turn after a turn whose checks failed
(docs/checks.md, "The repair turn").

The rules: only with the workspace's "repair" setting on; never after a
repair turn (its own failure is shown, not repaired again); never when a
message of the person's came after the failed turn (``superseded``);
announced in the chat (``turn_repair``, ``pending``) and sent only after
``delay_s``, so the person can Cancel it; held while the person is typing
in the composer (the page says so: ``composer``), sent once the composer
has been idle for ``idle_s`` and is empty. Sent, it is a turn like any
other: the chat shows its message and Stop stops it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

REPAIR_PREFIX = "repair-"
DELAY_S = 3.0
IDLE_S = 3.0
# A repair held this long behind a composer that is never emptied is dropped.
MAX_HOLD_S = 600.0
POLL_S = 0.1


def is_repair(client_msg_id: Any) -> bool:
    """Whether a user message is a repair turn's (by its client id)."""
    return isinstance(client_msg_id, str) and client_msg_id.startswith(REPAIR_PREFIX)


def repair_text(problems: list[dict[str, Any]], total: int) -> str:
    """What the agent reads: the problems, each with its file and line (English)."""
    lines = ["Pneuma's checks after your last turn found problems. Fix them, then check again:"]
    for problem in problems:
        where = problem.get("file") or ""
        if where and problem.get("line"):
            where = f"{where}:{problem['line']}"
        check = problem.get("check")
        tag = f" [{check}]" if check else ""
        lines.append(f"- {where + ': ' if where else ''}{problem.get('message', '')}{tag}")
    if total > len(problems):
        lines.append(f"- … and {total - len(problems)} more")
    return "\n".join(lines)


@dataclass
class PendingRepair:
    id: str
    text: str
    turn: dict[str, Any]  # the failed turn's ref, client_msg_id, user_seq, user_timestamp
    cancelled: bool = False
    announced_at: float = field(default_factory=time.monotonic)


class Composer:
    """What the page last said of its composer: whether it holds text, and
    when the person last typed in it."""

    def __init__(self) -> None:
        self.has_text = False
        self.typed_at = float("-inf")

    def update(self, has_text: bool) -> None:
        self.has_text = has_text
        self.typed_at = time.monotonic()

    def busy(self, idle_s: float) -> bool:
        return self.has_text or time.monotonic() - self.typed_at < idle_s


class Repairs:
    """One session's repair turns: at most one pending at a time."""

    def __init__(self, emit: Callable[[dict[str, Any]], None],
                 send: Callable[[str, str], Awaitable[None]], *,
                 delay_s: float = DELAY_S, idle_s: float = IDLE_S) -> None:
        self._emit = emit
        self._send = send  # (text, client_msg_id) -> the message handed to the session
        self.delay_s = delay_s
        self.idle_s = idle_s
        self.composer = Composer()
        self.pending: PendingRepair | None = None
        self.sent = 0

    def supersede(self) -> None:
        """A message of the person's is on its way: a pending repair is dropped."""
        if self.pending is not None:
            self._finish(self.pending, "superseded")

    def cancel(self, repair_id: str) -> bool:
        """The person's Cancel; False when no such repair is pending."""
        pending = self.pending
        if pending is None or pending.id != repair_id:
            return False
        self._finish(pending, "cancelled")
        return True

    async def offer(self, turn: dict[str, Any], problems: list[dict[str, Any]], total: int,
                    still_current: Callable[[], bool]) -> None:
        """Announce a repair of ``turn``, wait, and send it unless cancelled,
        superseded (``still_current()`` false) or held past ``MAX_HOLD_S``."""
        if self.pending is not None:
            return
        pending = PendingRepair(f"{REPAIR_PREFIX}{uuid.uuid4().hex[:12]}",
                                repair_text(problems, total), turn)
        self.pending = pending
        self._announce(pending, "pending", seconds=self.delay_s)
        due = time.monotonic() + self.delay_s
        holding = False
        while True:
            await asyncio.sleep(POLL_S)
            if pending.cancelled:
                return
            if not still_current():
                self._finish(pending, "superseded")
                return
            now = time.monotonic()
            if now - pending.announced_at > MAX_HOLD_S:
                self._finish(pending, "dropped")
                return
            if self.composer.busy(self.idle_s):
                if not holding:
                    holding = True
                    self._announce(pending, "waiting")
                due = max(due, now + POLL_S)
                continue
            if now >= due:
                break
        self.pending = None
        self.sent += 1
        self._announce(pending, "sent")
        await self._send(pending.text, pending.id)

    def _finish(self, pending: PendingRepair, state: str) -> None:
        pending.cancelled = True
        if self.pending is pending:
            self.pending = None
        self._announce(pending, state)

    def _announce(self, pending: PendingRepair, state: str, **extra: Any) -> None:
        self._emit({"type": "turn_repair", "id": pending.id, "state": state,
                    **pending.turn, **extra})
