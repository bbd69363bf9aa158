"""Rewinding the conversation, and its branches (docs/conversations.md,
"Branches").

``rewind`` takes the conversation back to before one of the person's
messages: the messages before it are copied into a new conversation, the
branch, which becomes current (the chat shows it; the old one stays whole
and listed as a branch); with ``text``, that text is sent as the branch's
first message ("Edit and resend"). The agent's own conversation is forked
at the same point by its backend (``pneuma.core.backend.fork_at``), so its
next request holds the history up to before that message and none of the
later turns; a backend that cannot fork starts afresh and is handed the
branch's earlier messages instead. ``switch`` shows another version of the
conversation, whose agent session resumes where it stopped.

A session feature (pneuma.server.session_hooks): before each of the
person's turns it records where the agent's own conversation stands (what
a later rewind forks from), and a branch's first turn carries one short
note that the files were not rewound with the conversation.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import uuid
from typing import Any, Protocol

from pneuma.core.backend import AgentPoint, conversation_point, fork_at
from pneuma.core.errors import ToolError
from pneuma.core.messages import UserMessage
from pneuma.server import conversation_branches as branches
from pneuma.server.conversation_log import ConversationLog, ConversationLogError
from pneuma.server.session_hooks import UserTurn

log = logging.getLogger(__name__)

FEATURE = "branches"
NOTE = ("The conversation was rewound to an earlier point; the workspace's files were not "
        "rewound with it: they are as they are now, and may hold changes made after that "
        "point. Read a file again before relying on what you remember of it.")
RECAP_CHARS = 20_000  # the newest part of a branch's history handed to an agent that cannot fork


class _Session(Protocol):
    """What of the session this needs (``pneuma.server.session.Session``)."""

    conversation_id: str
    conversation: ConversationLog | None
    backend: Any
    agent_session_id: str | None
    conversations: Any

    async def _deliver(self, msg: UserMessage) -> None: ...

    def reserve_row_ids(self, count: int) -> int: ...


class ConversationRewind:
    """One session's branches: recorded points, rewinds and switches."""

    def __init__(self, session: _Session) -> None:
        self._session = session
        self._ready = False
        self._lock = asyncio.Lock()  # one rewind or switch at a time

    # --- the log -------------------------------------------------------------------

    def _run(self, work: Any) -> Any:
        store = self._session.conversation
        if store is None:
            raise ToolError("E_UNAVAILABLE", "this session keeps no conversation log, so it "
                            "cannot rewind or keep branches")
        try:
            if not self._ready:
                store.run(branches.ensure_tables)
                self._ready = True
            return store.run(work)
        except (sqlite3.Error, ConversationLogError) as exc:
            raise ToolError("E_IO", f"the conversation log could not be changed: {exc}") from exc

    def _quietly(self, work: Any) -> Any:
        """``work`` for a hook of the turn: a failure is logged, never raised."""
        try:
            return self._run(work)
        except ToolError as exc:
            log.warning("branches: %s", exc.message)
            return None

    # --- session hooks -----------------------------------------------------------------

    async def before_turn(self, turn: UserTurn) -> None:
        """A branch's first turn forks the agent (or hands it the history)
        and says the files were not rewound; every turn records where the
        agent stood just before it."""
        session = self._session
        if session.conversation is None:
            return
        current, key = session.conversation_id, branches.message_key(turn.echo)
        branch = self._quietly(lambda db: branches.get_branch(db, current))
        if branch is not None and (branch.pending_fork is not None or branch.note_pending):
            forked = branch.pending_fork is not None and await fork_at(session.backend,
                                                                      branch.pending_fork)
            if not forked and session.agent_session_id is None:
                recap = self._quietly(lambda db: _recap(db, current, key))
                if recap:
                    turn.prefixes.append(f"<conversation-so-far>{recap}</conversation-so-far>")
            if branch.note_pending:
                turn.prefixes.append(f"<conversation-rewound>{NOTE}</conversation-rewound>")
            self._quietly(lambda db: branches.first_turn_taken(db, current, key))
        point = conversation_point(session.backend) or self._tip(current)
        if point is not None and key:
            self._quietly(lambda db: branches.save_point(db, current, key, point))

    def turn_ended(self, result: dict[str, Any]) -> None:
        """Where the agent stands after the turn: what the next message's
        point is when the agent cannot say (a restarted server)."""
        session = self._session
        point = conversation_point(session.backend)
        if point is not None and session.conversation is not None:
            current = session.conversation_id
            self._quietly(lambda db: branches.save_point(db, current, branches.TIP, point))

    def _tip(self, conversation_id: str) -> AgentPoint | None:
        point: AgentPoint | None = self._quietly(
            lambda db: branches.load_point(db, conversation_id, branches.TIP))
        if point is not None and point.agent_session_id == self._session.agent_session_id:
            return point
        return None

    # --- the routes' work ------------------------------------------------------------------

    def _not_busy(self) -> None:
        if self._session.conversations.busy:
            raise ToolError("E_CONFLICT", "the agent is in the middle of a turn; rewind the "
                            "conversation when it has finished (or stop it first)",
                            details={"reason": "agent_running"},
                            hint="Wait for the turn to end, or press Stop, then try again.")

    async def rewind(self, *, client_msg_id: str | None, timestamp_ms: float | None,
                     text: str | None) -> dict[str, Any]:
        """Go back to before that message of the person's, on a new branch
        (the current conversation kept whole); send ``text`` there."""
        async with self._lock:
            self._not_busy()
            session = self._session
            parent = session.conversation_id
            at = self._run(lambda db: branches.find_user_message(
                db, parent, client_msg_id=client_msg_id, timestamp_ms=timestamp_ms))
            if at is None:
                raise ToolError("E_NOT_FOUND", "no such message of yours in this conversation",
                                details={"clientMsgId": client_msg_id, "timestamp": timestamp_ms})
            entry = session.conversation.get_conversation(parent) if session.conversation else None
            first = self._run(lambda db: branches.user_messages(db, parent)[0].row)
            # Back to before the first message: the branch is titled by its own first one.
            title = entry.title if entry is not None and at.row != first else ""
            branch_id = str(uuid.uuid4())
            count = self._run(lambda db: branches.rows_before(db, parent, at.row))
            first_row = session.reserve_row_ids(count)
            self._run(lambda db: branches.make_branch(db, parent, branch_id, at, title, first_row))
            await session.conversations.switch_to(branch_id)
            sent_id = None
            if text is not None and text.strip():
                sent_id = f"resend-{uuid.uuid4().hex[:16]}"
                # The person's own message, as if typed in the branch's composer.
                await session._deliver(UserMessage(type="user_message", content=text,
                                                   client_msg_id=sent_id))
            return {"branch": branch_id, "parent": parent, "forkedAtMessage": at.key,
                    "clientMsgId": sent_id}

    def listing(self) -> dict[str, Any]:
        current = self._session.conversation_id
        result: dict[str, Any] = self._run(lambda db: branches.listing(db, current))
        return result

    async def switch(self, branch_id: str) -> dict[str, Any]:
        """Show another version of the current conversation; its agent resumes."""
        async with self._lock:
            listed = {b["id"] for b in self.listing()["branches"]}
            if branch_id not in listed:
                raise ToolError("E_NOT_FOUND", f"no branch {branch_id!r} of this conversation",
                                details={"branch": branch_id})
            if branch_id != self._session.conversation_id:
                self._not_busy()
                await self._session.conversations.switch_to(branch_id)
            return self.listing()


def _recap(db: sqlite3.Connection, conversation_id: str, skip_key: str) -> str:
    """The branch's earlier messages as text (its newest ``RECAP_CHARS``),
    for an agent that could not fork its own conversation."""
    lines: list[str] = []
    for kind, body in db.execute("SELECT kind, body FROM messages WHERE session_id = ? AND kind IN"
                                 " ('user_message', 'assistant') ORDER BY id", (conversation_id,)):
        try:
            message = json.loads(body)
        except (ValueError, TypeError):
            continue
        if kind == "user_message":
            if branches.message_key(message) == skip_key:
                continue
            lines.append(f"[person] {message.get('content') or ''}")
        else:
            inner = message.get("message") if isinstance(message, dict) else None
            blocks = inner.get("content") if isinstance(inner, dict) else None
            said = " ".join(b.get("text", "") for b in blocks or ()
                            if isinstance(b, dict) and b.get("type") == "text").strip()
            if said:
                lines.append(f"[you] {said}")
    if not lines:
        return ""
    text = "\n".join(lines)[-RECAP_CHARS:]
    return ("Your own session could not be rewound, so here is what was said in this "
            f"conversation before the message below:\n{text}")
