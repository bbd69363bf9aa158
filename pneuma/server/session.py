"""A session: one agent, one workspace, any number of browser tabs.

The session owns the browser protocol (docs/design/browser-protocol.md): every broadcast gets the
next ``seq``; a replay buffer answers ``session_subscribe {last_seq}`` with
exactly the missed events, or with the conversation when the gap is older
than the buffer; ``client_msg_id`` de-duplicates user messages; pending
permission requests are re-sent to a tab that (re)connects.

The conversation lives in the workspace's append-only log
(``conversation_log``), written as each message is broadcast. In memory the
session keeps only its newest part, bounded in bytes (the window): a new tab
gets the window at once, and older pages from the log when it asks
(``history_page``). Memory stays flat however long the session runs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from pneuma.core.backend import AgentBackend
from pneuma.core.channels import ConfirmationChannel, ViewerActionChannel
from pneuma.core.compact_json import dumps as _dumps
from pneuma.core.messages import (
    ConfirmationResponse,
    HistoryMessage,
    HistoryPage,
    Interrupt,
    PermissionResponse,
    SessionAck,
    SessionSubscribe,
    SetModel,
    UIContext,
    UserMessage,
    ViewerActionResponse,
)
from pneuma.server.broadcast import Broadcasts
from pneuma.server.connection import BrowserConnection
from pneuma.server.conversation_control import SessionConversations
from pneuma.server.conversation_log import ConversationLog
from pneuma.server.follow_ups import FollowUps
from pneuma.server.saving_status import SavingStatus
from pneuma.server.session_hooks import SessionHooks, UserTurn
from pneuma.server.session_window import HISTORY_WINDOW_BYTES, ConversationWindow

log = logging.getLogger(__name__)

REPLAY_BUFFER_SIZE = 4096
DEDUPE_WINDOW = 1000
# Sent to a tab a page at a time when it scrolls back (history_page), no
# bigger than the first page (session_window), so that each renders at once.
HISTORY_PAGE_BYTES = 96 * 1024
HISTORY_PAGE_COUNT = 500

# Messages that make up the conversation shown after a reload, with those
# the subscribed features declare (SessionHooks.history_types).
_HISTORY_TYPES = {"user_message", "assistant", "tool_result", "result", "error", "system_note"}

# A stream_event as the backends build it: emit encodes only the event.
_STREAM_KEYS = ("type", "event", "parent_tool_use_id")
# Kinds whose broadcast also changes the session's state (see emit).
_STATEFUL_TYPES = {"assistant", "status_change", "permission_request", "permission_cancelled",
                   "cli_connected", "cli_disconnected", "result"}


def format_ui_context(ui: UIContext) -> str:
    """The structured viewer context as the text prefix the agent reads
    (docs/design/browser-protocol.md, "Viewer context")."""
    attrs = [f'mode="{ui.mode}"'] if ui.mode else []
    if ui.currentView:
        attrs.append(f'view="{ui.currentView}"')
    body = ""
    if ui.selectedElement is not None:
        el = ui.selectedElement
        text = el.textContent.strip().replace("\n", " ")
        if len(text) > 200:
            text = text[:200] + "…"
        body = f'selected: <{el.tagName.lower() or "element"}> "{text}" ({el.selector})'
    return f"<viewer-context {' '.join(attrs)}>{body}</viewer-context>"


class Session(Broadcasts, ConversationWindow):
    def __init__(
        self,
        session_id: str,
        *,
        mode: str,
        workspace: Path,
        backend_name: str,
        replay_size: int = REPLAY_BUFFER_SIZE,
        history: list[dict[str, Any]] | None = None,
        last_seq: int = 0,
        agent_session_id: str | None = None,
        no_agent_reason: str | None = None,
        conversation: ConversationLog | None = None,
        history_window_bytes: int = HISTORY_WINDOW_BYTES,
        conversation_id: str | None = None,
    ):
        self.id = session_id
        # The features subscribed to this session's lifecycle (session_hooks).
        self.hooks = SessionHooks()
        # The conversation shown and logged (docs/conversations.md): the
        # session's own id unless another was made current.
        self.conversation_id = conversation_id or session_id
        self.conversations = SessionConversations(self)
        self.hooks.add("conversations", self.conversations)
        # What the person sends while the agent works waits here, shown as queued.
        self.follow_ups = FollowUps(self, self._deliver)
        self.hooks.add("queue", self.follow_ups)
        self.mode = mode
        self.workspace = workspace
        self.backend_name = backend_name
        self.backend: AgentBackend | None = None
        self.no_agent_reason = no_agent_reason
        self.agent_session_id = agent_session_id
        self.agent_state: dict[str, Any] = {}
        # The model the person picked in this run (set_model): an agent
        # started again (a switch of conversation) keeps it.
        self.chosen_model: str | None = None
        self.status: str = "idle"
        self.agent_connected = False
        Broadcasts.__init__(self, last_seq, replay_size)
        # The conversation: the log (None: kept in memory only, as far as
        # the window reaches), and its newest messages (the window).
        ConversationWindow.__init__(self, history_window_bytes)
        # What cannot be saved now (a full disk): one line, and the page's banner.
        self.saving = SavingStatus(self._saving_changed)
        for message in history or ():
            self._record(message, _dumps(message))
        if conversation is not None:
            self.use_conversation(conversation)
        self.pending_permissions: dict[str, dict[str, Any]] = {}
        self._seen_client_ids: OrderedDict[str, None] = OrderedDict()
        self.viewer_actions = ViewerActionChannel(self.emit, self._subscribed_count)
        self.confirmations = ConfirmationChannel(self.emit, self._subscribed_count)
        self.dirty = False
        self.last_ack_seq = 0
        self._tasks: set[asyncio.Task[Any]] = set()

    # --- AgentEventSink ---

    def emit(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "stream_event" and tuple(message) == _STREAM_KEYS:
            # The most frequent broadcast: the same text as below, but
            # json.dumps only for what varies (emit_stream adds the rest).
            parent = message["parent_tool_use_id"]
            message["seq"] = self.seq + 1
            self.emit_stream(_dumps(message["event"]), "null" if parent is None else _dumps(parent))
            return
        if kind in _STATEFUL_TYPES:
            message = self._track(kind, message)
        self.seq = seq = self.seq + 1
        if seq > self._seq_limit:
            self._reserve(seq)
        message["seq"] = seq
        text = _dumps(message)
        if kind in _HISTORY_TYPES or kind in self.hooks.history_types:
            self._record(message, text)
        self._pending.append(text)
        if not self._holds:
            self._open_turn()

    def _track(self, kind: str, message: dict[str, Any]) -> dict[str, Any]:
        """What a broadcast of ``kind`` changes in the session itself."""
        if kind == "assistant":
            message = self._merge_assistant(message)
        elif kind == "status_change":
            self.status = message.get("status") or "idle"
        elif kind == "permission_request":
            request = message.get("request", {})
            if "request_id" in request:
                self.pending_permissions[request["request_id"]] = message
        elif kind == "permission_cancelled":
            self.pending_permissions.pop(message.get("request_id", ""), None)
        elif kind == "cli_connected":
            self.agent_connected = True
        elif kind == "cli_disconnected":
            self.agent_connected = False
            self.status = "idle"
            self.pending_permissions.clear()
        elif kind == "result":
            self.status = "idle"
            self.hooks.turn_ended(message)
        if self.status == "idle":
            self.follow_ups.agent_free()
        return message

    def set_agent_session_id(self, agent_session_id: str | None) -> None:
        if agent_session_id != self.agent_session_id:
            self.agent_session_id = agent_session_id
            self.dirty = True
            self.hooks.agent_session_changed(agent_session_id)

    def set_agent_state(self, **state: Any) -> None:
        self.agent_state.update({k: v for k, v in state.items() if v is not None})

    async def history_page(self, connection: BrowserConnection, before: int) -> None:
        """Send one tab the messages before row ``before``, a page of them."""
        texts: list[str] = []
        first: int | None = None
        has_more = False
        if self.conversation is not None:
            loop = asyncio.get_running_loop()
            try:
                page = await loop.run_in_executor(
                    None, self.conversation.read_page, self.conversation_id, before,
                    HISTORY_PAGE_BYTES, HISTORY_PAGE_COUNT)
            except Exception as exc:
                log.warning("could not read the conversation log: %s", exc)
                self.error_to(connection, "the earlier conversation could not be read",
                              "history_unavailable")
                return
            texts, first, has_more = page.texts, page.first_row_id, page.has_more
        connection.send(
            '{"type":"history_page","messages":[' + ",".join(texts) + '],"has_more":'
            + ("true" if has_more else "false") + ',"before":'
            + ("null" if first is None else str(first)) + "}")

    def show_conversation(self, conversation_id: str, fields: dict[str, Any]) -> None:
        """Make ``conversation_id`` the one shown and logged, and show it
        to every tab: one ``conversation_switched`` broadcast carrying its
        newest messages (as ``message_history`` does) and ``fields`` (the
        list of conversations). The
        replay buffer starts again with it (it carries the history): a
        tab that missed the switch is never brought up to date with events
        of the other conversation; it is replayed this broadcast, or, with
        an older ``last_seq``, gets the whole history. Seq numbers go on
        counting."""
        self.flush()
        self.conversation_id = conversation_id
        self.pending_permissions.clear()
        self._show_tail()
        self.replay.clear()
        self.seq = seq = self.seq + 1
        if seq > self._seq_limit:
            self._reserve(seq)
        text = self.conversation_frame('{"type":"conversation_switched"', {
            **fields,
            "pending_permissions": [],
            "pending_confirmations": list(self.confirmations.open_requests.values()),
            "seq": seq,
        })
        self._pending.append(text)
        self.dirty = True
        self.flush()

    # --- browser connections ---

    def _subscribed_count(self) -> int:
        return sum(1 for c in self.connections if c.subscribed and not c.closed and not c.headless)

    def session_info(self) -> dict[str, Any]:
        # What a backend keeps of its agent's state beyond the keys below
        # (an ACP agent's modes, say) reaches a tab that connects later too:
        # the session_update that said it went only to the tabs open then.
        return {
            **self.agent_state,
            "session_id": self.id,
            "conversation_id": self.conversation_id,
            "agent_session_id": self.agent_session_id,
            "mode": self.mode,
            "backend": self.backend_name,
            "cwd": str(self.workspace),
            "status": self.status,
            "agent_connected": self.agent_connected,
            "no_agent_reason": self.no_agent_reason,
            "model": self.agent_state.get("model"),
            "tools": self.agent_state.get("tools", []),
            "permission_mode": self.agent_state.get("permission_mode"),
            "last_seq": self.seq,
            "saving": self.saving.public(),
        }

    def _saving_changed(self, saving: dict[str, Any] | None) -> None:
        """Tabs show whether saving is paused; a tab that connects later
        gets it in its ``session_init``."""
        if getattr(self, "connections", None):
            self.emit({"type": "session_update", "updates": {"saving": saving}})

    def attach(self, connection: BrowserConnection) -> None:
        self.connections.add(connection)
        # Whatever is sent to this tab alone waits for the broadcasts before it.
        connection.before_send = self.flush
        connection.send(_dumps({"type": "session_init", "session": self.session_info()}))

    def detach(self, connection: BrowserConnection) -> None:
        self.connections.discard(connection)
        self._backend_hook("viewer_detached", connection)

    def _backend_hook(self, name: str, *args: Any) -> Any:
        """Call an optional backend method (a backend that tracks tabs)."""
        hook = None if getattr(args[0], "headless", False) else getattr(self.backend, name, None)
        return hook(*args) if hook is not None else None

    def subscribe(self, connection: BrowserConnection, last_seq: int,
                  conversation_id: str | None = None) -> None:
        """Send what this tab missed since ``last_seq`` (in the conversation
        ``conversation_id``, the one it shows), then everything live."""
        # Broadcasts still pending go to the tabs subscribed before this one
        # (this one gets them from the replay buffer below, once).
        self.flush()
        oldest = self.replay.oldest_seq or self.seq + 1
        if last_seq > self.seq:
            # The tab counted events of an earlier server run: only the full
            # history can be trusted.
            last_seq = 0
        incremental = last_seq > 0 and last_seq + 1 >= oldest
        # Open prompts are not part of the conversation but a tab must show them.
        fields = {"pending_permissions": list(self.pending_permissions.values()),
                  "pending_confirmations": list(self.confirmations.open_requests.values()),
                  "last_seq": self.seq}
        missed_logged = None if incremental else self.missed_texts(last_seq, conversation_id)
        if incremental:
            connection.send_many(self.replay.since(last_seq))
        elif missed_logged is not None:
            # Older than the buffer (a restart): the conversation's messages
            # since then, from the log, and what is open now.
            rest = _dumps({**self.hooks.history_fields(), **fields})
            connection.send_many([*missed_logged, '{"type":"history_resume",' + rest[1:]])
        else:
            # The first page; older pages on request (history_page).
            connection.send(self.conversation_frame('{"type":"message_history"', fields))
        connection.subscribed = True
        # Snapshots for this tab only, hence no seq: seq numbers belong to
        # broadcasts, each counted exactly once.
        connection.send(_dumps({"type": "status_change", "status": self.status}))
        # The agent's state too: a session_update broadcast between this
        # tab's session_init and its subscribe reached only the tabs
        # subscribed then, and the history above holds the conversation, not
        # the agent's model or tools.
        info = self.session_info()
        known = {key: info[key] for key in ("model", "tools", "permission_mode", "agent_session_id") if info[key]}
        if known:
            connection.send(_dumps({"type": "session_update", "updates": known}))
        self._backend_hook("viewer_attached", connection)
        self.hooks.tab_subscribed(connection)

    # --- messages from a browser ---

    def is_duplicate(self, client_msg_id: str | None) -> bool:
        if not client_msg_id:
            return False
        if client_msg_id in self._seen_client_ids:
            return True
        self._seen_client_ids[client_msg_id] = None
        if len(self._seen_client_ids) > DEDUPE_WINDOW:
            self._seen_client_ids.popitem(last=False)
        return False

    def error_to(self, connection: BrowserConnection, message: str, code: str = "bad_message") -> None:
        """An error for one tab only (its own bad input); not part of the sequence."""
        connection.send(_dumps({"type": "error", "code": code, "message": message}))

    async def handle(self, connection: BrowserConnection, msg: Any) -> None:
        if isinstance(msg, SessionSubscribe):
            self.subscribe(connection, msg.last_seq, msg.conversation_id)
            return
        if isinstance(msg, HistoryPage):
            await self.history_page(connection, msg.before)
            return
        if isinstance(msg, HistoryMessage):
            await self.history_message(connection, msg.row)
            return
        if isinstance(msg, SessionAck):
            self.last_ack_seq = max(self.last_ack_seq, msg.last_seq)
            return
        if isinstance(msg, ViewerActionResponse):
            result = msg.result.model_dump(exclude_none=True)
            if not self.viewer_actions.resolve(msg.request_id, result):
                self._backend_hook("viewer_action_response", msg.request_id, result)
            return
        if isinstance(msg, ConfirmationResponse):
            self.confirmations.resolve(msg.request_id, (msg.approved, msg.message))
            return
        if self.is_duplicate(getattr(msg, "client_msg_id", None)):
            return
        if isinstance(msg, UserMessage):
            await self._user_message(connection, msg)
        elif isinstance(msg, PermissionResponse):
            await self._permission_response(connection, msg)
        elif isinstance(msg, Interrupt):
            if self.backend is None:
                self.error_to(connection, self._no_agent_text(), "no_agent")
                return
            await self.backend.interrupt()
        elif isinstance(msg, SetModel):
            if self.backend is None:
                self.error_to(connection, self._no_agent_text(), "no_agent")
                return
            await self.backend.set_model(msg.model)
            self.agent_state["model"] = msg.model
            self.chosen_model = msg.model
            self.emit({"type": "session_update", "updates": {"model": msg.model}})
        else:
            await self._feature_message(connection, msg)

    async def _feature_message(self, connection: BrowserConnection, msg: Any) -> None:
        """A message a subscribed feature handles (session_hooks), or, with
        none subscribed for it, the refusal its catalogue entry names."""
        handler = self.hooks.handler_for(msg.type)
        if handler is not None:
            await handler.handle_message(connection, msg)
            return
        code, text = getattr(msg, "unhandled", (
            "unsupported", f"this session does not handle {msg.type!r}"))
        self.error_to(connection, text, code)

    def _no_agent_text(self) -> str:
        return self.no_agent_reason or "No agent is running in this session."

    async def _user_message(self, connection: BrowserConnection, msg: UserMessage) -> None:
        if not msg.content.strip() and not msg.images:
            self.error_to(connection, "the message is empty", "bad_message")
            return
        if not self.follow_ups.hold(msg, connection):
            await self._deliver(msg)

    async def _deliver(self, msg: UserMessage) -> None:
        """Show the person's message to every tab and hand it to the agent."""
        context = msg.viewer_context
        if context is None and msg.uiContext is not None:
            context = format_ui_context(msg.uiContext)
        echo: dict[str, Any] = {
            "type": "user_message",
            "content": msg.content,
            "timestamp": time.time(),
        }
        if context:
            echo["viewer_context"] = context
        if msg.images:
            echo["images"] = [{"media_type": i.media_type, "size": len(i.data)} for i in msg.images]
        if msg.client_msg_id:
            echo["client_msg_id"] = msg.client_msg_id
        self.emit(echo)
        if self.backend is None:
            self.emit({"type": "error", "code": "no_agent", "message": self._no_agent_text()})
            return
        text = f"{context}\n\n{msg.content}" if context else msg.content
        self.emit({"type": "status_change", "status": "running"})
        turn = UserTurn(msg.content, echo)
        await self.hooks.before_turn(turn)
        text = "\n\n".join([*turn.prefixes, text])
        await self.backend.send_user_message(
            text, [{"media_type": i.media_type, "data": i.data} for i in msg.images]
        )

    async def _permission_response(
        self, connection: BrowserConnection, msg: PermissionResponse
    ) -> None:
        pending = self.pending_permissions.pop(msg.request_id, None)
        if pending is None:
            self.error_to(
                connection, f"no pending permission request {msg.request_id}", "unknown_request"
            )
            return
        if self.backend is not None:
            updated = msg.updated_input
            if msg.behavior == "allow" and updated is None:
                updated = pending.get("request", {}).get("input")
            await self.backend.answer_permission(msg.request_id, msg.behavior, updated, msg.message)
        self.emit({"type": "permission_cancelled", "request_id": msg.request_id,
                   "behavior": msg.behavior})

    # --- lifecycle ---

    def spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settle(self, timeout: float = 5.0) -> None:
        """Let the session's own background work finish (what a
        feature spawned at the end of the last turn), so that what it broadcasts is logged in
        the conversation it is about, before another is shown."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)

    async def close(self) -> None:
        # What a turn that just ended still has to say (what it changed) is
        # said, and logged, before the tabs and the log are closed.
        await self.settle(2.0)
        self.viewer_actions.cancel_all("the server is shutting down")
        self.confirmations.cancel_all("the server is shutting down")
        self.flush()
        for connection in list(self.connections):
            await connection.drain(0.5)
            await connection.close()
        self.connections.clear()

