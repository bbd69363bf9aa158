"""The browser's requests about the workspace's conversations: list, new,
switch, rename, delete (docs/conversations.md, docs/protocol.md).

The session shows one conversation at a time (``Session.conversation_id``);
this is what changes which one, and keeps the list (``conversations``
table of the log) up to date as messages arrive: the title from the
person's first message, the time of their last.

A switch restarts the agent: it is stopped, the session shows the other
conversation (``Session.show_conversation``, which every tab follows), and
the agent starts again resuming that conversation's own agent session.
Refused while a turn runs: stopping the agent would cut it off silently;
the person interrupts first.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from pneuma.core.messages import (
    ConversationDelete,
    ConversationList,
    ConversationNew,
    ConversationRename,
    ConversationSwitch,
)
from pneuma.server import conversation_branches as branches
from pneuma.server.conversation_log import ConversationLog, ConversationLogError
from pneuma.server.conversations import clean_title, title_from

log = logging.getLogger(__name__)

CONVERSATION_MESSAGES = (ConversationList, ConversationNew, ConversationSwitch,
                         ConversationRename, ConversationDelete)

AgentStep = Callable[[], Awaitable[None]]


class _Tab(Protocol):
    def send(self, text: str) -> None: ...


class ConversationHost(Protocol):
    """What of the session this needs (``pneuma.server.session.Session``)."""

    conversation_id: str
    conversation: ConversationLog | None
    agent_session_id: str | None
    status: str
    pending_permissions: dict[str, Any]
    dirty: bool

    def emit(self, message: dict[str, Any]) -> None: ...

    def error_to(self, connection: Any, message: str, code: str = ...) -> None: ...

    def show_conversation(self, conversation_id: str, fields: dict[str, Any]) -> None: ...

    async def settle(self) -> None: ...


class SessionConversations:
    """One session's conversations. ``stop_agent``/``start_agent`` are set
    by the server that runs the agent (pneuma.server.app), ``save_state``
    by the one that persists the session: without them a switch only
    changes what is shown. Subscribed to the session's hooks for the
    browser's ``conversation_*`` messages (pneuma.server.session_hooks)."""

    message_types = ("conversation_list", "conversation_new", "conversation_switch",
                     "conversation_rename", "conversation_delete")

    def __init__(self, session: ConversationHost) -> None:
        self._session = session
        self._title = ""
        self._switching = False
        self.stop_agent: AgentStep | None = None
        self.start_agent: AgentStep | None = None
        self.save_state: AgentStep | None = None

    # --- kept up to date by the session ---

    def log_opened(self) -> None:
        """The log is open: list the current conversation (migrating an
        older log's), and resume its own agent session."""
        session = self._session
        assert session.conversation is not None
        try:
            entry = session.conversation.ensure_conversation(session.conversation_id,
                                                             session.agent_session_id)
        except sqlite3.Error as exc:
            log.warning("could not read the list of conversations: %s", exc)
            return
        self._title = entry.title
        if entry.agent_session_id is not None and entry.agent_session_id != session.agent_session_id:
            session.agent_session_id = entry.agent_session_id
            session.dirty = True

    def history_fields(self) -> dict[str, Any]:
        """The current conversation as ``message_history`` names it; None
        for a session without a log (it has one conversation, in memory)."""
        if self._session.conversation is None:
            return {"conversation": None}
        return {"conversation": {"id": self._session.conversation_id, "title": self._title}}

    def user_message_logged(self, message: dict[str, Any]) -> None:
        """The person wrote in the current conversation: it was updated
        now, and its first message titles it."""
        session = self._session
        if session.conversation is None:
            return
        title = None
        if not self._title:
            title = title_from(str(message.get("content") or "")) or None
        timestamp = message.get("timestamp")
        try:
            session.conversation.update_conversation(
                session.conversation_id, title=title,
                updated=timestamp if isinstance(timestamp, float) else time.time())
        except sqlite3.Error as exc:
            log.warning("could not update the list of conversations: %s", exc)
            return
        if title:
            # Not broadcast: a tab titles a conversation from its first
            # message by the same rule, and asks for the list when shown.
            self._title = title

    def agent_session_changed(self, agent_session_id: str | None) -> None:
        session = self._session
        if session.conversation is None:
            return
        try:
            session.conversation.update_conversation(session.conversation_id,
                                                     agent_session_id=agent_session_id)
        except sqlite3.Error as exc:
            log.warning("could not record the agent's session id: %s", exc)

    # --- the browser's requests ---

    async def handle_message(self, tab: _Tab, msg: Any) -> None:
        session = self._session
        store = session.conversation
        if store is None:
            session.error_to(tab, "this session keeps no conversations (its log could not be"
                             " opened)", "conversations_unavailable")
            return
        try:
            if isinstance(msg, ConversationList):
                tab.send(json.dumps({"type": "conversations", "conversations": self._listing(),
                                     "current": session.conversation_id}, ensure_ascii=False))
            elif isinstance(msg, ConversationRename):
                await self._rename(tab, store, msg)
            elif isinstance(msg, ConversationNew):
                if self._refused(tab):
                    return
                new_id = str(uuid.uuid4())
                store.ensure_conversation(new_id)
                await self._switch(new_id)
            elif isinstance(msg, ConversationSwitch):
                if store.get_conversation(msg.conversation_id) is None:
                    self._unknown(tab, msg.conversation_id)
                elif msg.conversation_id == session.conversation_id:
                    self._announce()
                elif not self._refused(tab):
                    await self._switch(msg.conversation_id)
            elif isinstance(msg, ConversationDelete):
                await self._delete(tab, store, msg)
        except (sqlite3.Error, ConversationLogError) as exc:
            log.warning("conversation request failed: %s", exc)
            session.error_to(tab, f"the list of conversations could not be changed: {exc}",
                             "conversations_unavailable")

    async def _rename(self, tab: _Tab, store: ConversationLog, msg: ConversationRename) -> None:
        title = clean_title(msg.title)
        if not title:
            self._session.error_to(tab, "a conversation needs a title", "bad_message")
        elif store.get_conversation(msg.conversation_id) is None:
            self._unknown(tab, msg.conversation_id)
        else:
            store.update_conversation(msg.conversation_id, title=title)
            if msg.conversation_id == self._session.conversation_id:
                self._title = title
            self._announce()

    async def _delete(self, tab: _Tab, store: ConversationLog, msg: ConversationDelete) -> None:
        session = self._session
        doomed = msg.conversation_id
        if store.get_conversation(doomed) is None:
            self._unknown(tab, doomed)
            return
        if doomed == session.conversation_id:
            if self._refused(tab):
                return
            others = [c.id for c in store.list_conversations() if c.id != doomed]
            target = others[0] if others else str(uuid.uuid4())
            store.ensure_conversation(target)
            # It goes once the agent working in it has stopped; the tabs
            # then see the other one, and a list without it.
            await self._switch(target, drop=doomed)
            return
        store.delete_conversation(doomed)
        self._announce()

    @property
    def busy(self) -> bool:
        """A turn runs, a permission prompt is open, or a switch is under way."""
        session = self._session
        return self._switching or session.status != "idle" or bool(session.pending_permissions)

    async def switch_to(self, conversation_id: str) -> None:
        """Show ``conversation_id`` (listed already) and resume its agent:
        for a feature that makes conversations of its own (the branches of
        pneuma.server.conversation_rewind), which checked ``busy`` first."""
        await self._switch(conversation_id)

    def _refused(self, tab: _Tab) -> bool:
        """Refuse a switch while a turn runs (or another switch does)."""
        session = self._session
        if self._switching or session.status != "idle" or session.pending_permissions:
            session.error_to(tab, "the agent is working on a turn; interrupt it first, then switch"
                             " conversations", "turn_running")
            return True
        return False

    def _unknown(self, tab: _Tab, conversation_id: str) -> None:
        self._session.error_to(tab, f"no conversation {conversation_id!r} in this workspace",
                               "unknown_conversation")

    async def _switch(self, target: str, drop: str | None = None) -> None:
        session = self._session
        store = session.conversation
        assert store is not None
        self._switching = True
        try:
            if self.stop_agent is not None:
                await self.stop_agent()
            # What the last turn still reports (its checkpoint's changes)
            # belongs to the conversation being left.
            await session.settle()
            entry = store.get_conversation(target)
            self._title = entry.title if entry is not None else ""
            session.agent_session_id = entry.agent_session_id if entry is not None else None
            session.status = "idle"
            if drop is not None:
                store.delete_conversation(drop)
            session.show_conversation(target, {"conversations": self._listing(current=target)})
            if self.start_agent is not None:
                await self.start_agent()
        finally:
            self._switching = False
        if self.save_state is not None:
            # Now, not at the next periodic save: a restart resumes this one.
            try:
                await self.save_state()
            except OSError as exc:
                log.warning("could not save the session after a switch: %s", exc)

    def _listing(self, current: str | None = None) -> list[dict[str, Any]]:
        store = self._session.conversation
        assert store is not None
        current = current or self._session.conversation_id
        try:
            # One entry for a conversation with several versions (docs/conversations.md, "Branches").
            hidden = store.run(lambda db: branches.hidden_versions(db, current))
        except (sqlite3.Error, ConversationLogError):
            hidden = set()
        return [c.public(current) for c in store.list_conversations() if c.id not in hidden]

    def _announce(self) -> None:
        """Tell every tab the list as it is now (a ``conversations`` broadcast)."""
        session = self._session
        if session.conversation is None:
            return
        try:
            listing = self._listing()
        except sqlite3.Error as exc:
            log.warning("could not read the list of conversations: %s", exc)
            return
        session.emit({"type": "conversations", "conversations": listing,
                      "current": session.conversation_id})
