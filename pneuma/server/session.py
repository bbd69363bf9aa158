"""A session: one agent, one workspace, any number of browser tabs.

The session owns the browser protocol of ADR-002: every broadcast gets the
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
import itertools
import json
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pneuma.agents.base import AgentBackend
from pneuma.server.channels import ConfirmationChannel, ViewerActionChannel
from pneuma.server.connection import BrowserConnection, encode_frames
from pneuma.server.conversation_control import SessionConversations
from pneuma.server.conversation_log import ConversationLog, LoggedMessage
from pneuma.server.messages import (
    ConfirmationResponse,
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
from pneuma.server.saving_status import SavingStatus
from pneuma.server.session_hooks import SessionHooks, UserTurn

log = logging.getLogger(__name__)

REPLAY_BUFFER_SIZE = 4096
# The replay buffer is bounded in bytes too: a few long messages (a turn's
# full text) must not pin megabytes.
REPLAY_BUFFER_BYTES = 4 * 1024 * 1024
DEDUPE_WINDOW = 1000
# The newest part of the conversation kept in memory and sent to a new tab
# at once; the rest is read from the log, a page at a time.
HISTORY_WINDOW_BYTES = 1024 * 1024
HISTORY_PAGE_BYTES = 512 * 1024
HISTORY_PAGE_COUNT = 500
# A turn's final text is already in its assistant message: a result stores
# it again only when it is short (an error message, say).
RESULT_TEXT_KEPT = 1000
# Assistant messages kept whole for merging the next block into them.
ASSISTANT_CACHE = 4

# Messages that make up the conversation shown after a reload (the last
# three: what each turn changed, and rewinds; docs/checkpoints.md).
_HISTORY_TYPES = {"user_message", "assistant", "tool_result", "result", "error", "system_note",
                  "turn_checkpoint", "turn_changes", "workspace_restored"}

# A stream_event as the backends build it: emit encodes only the event.
_STREAM_KEYS = ("type", "event", "parent_tool_use_id")
# Kinds whose broadcast also changes the session's state (see emit).
_STATEFUL_TYPES = {"assistant", "status_change", "permission_request", "permission_cancelled",
                   "cli_connected", "cli_disconnected", "result"}


def _make_dumps() -> Callable[[Any], str]:
    """Compact JSON text, non-ASCII as is: ``json.JSONEncoder(...).encode``
    without the encoder object it builds on every call (a third of the cost
    of a small message). Same output; a circular structure, which no
    message can be, raises RecursionError instead of ValueError."""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator
        return encoder.encode
    c_encode = make(None, encoder.default, json.encoder.encode_basestring, None, ":", ",",
                    False, False, True)

    def dumps(obj: Any) -> str:
        return "".join(c_encode(obj, 0))

    return dumps


_dumps = _make_dumps()


def format_ui_context(ui: UIContext) -> str:
    """ADR-002's structured UI context as the text prefix the agent reads."""
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


class Session:
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
        self.seq = last_seq
        # Seq numbers up to this one may be handed out; beyond it,
        # reserve_seqs runs first (see use_seq_reservation).
        self._seq_limit: float = math.inf
        self._reserve_seqs: Callable[[int], int] | None = None
        self.replay: deque[tuple[int, str]] = deque()
        self._replay_size = replay_size
        self._replay_bytes = 0
        # The conversation: the log (None: kept in memory only, as far as
        # the window reaches), and its newest messages (the window).
        self.conversation: ConversationLog | None = None
        self._window: deque[LoggedMessage] = deque()
        self._window_bytes = 0
        self._window_limit = history_window_bytes
        self._window_by_message_id: dict[str, LoggedMessage] = {}
        self._assistants: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._first_row_id: int | None = None
        self._next_row_id = 1
        # What cannot be saved now (a full disk): one line, and the page's banner.
        self.saving = SavingStatus(self._saving_changed)
        for message in history or ():
            self._record(message, _dumps(message))
        if conversation is not None:
            self.use_conversation(conversation)
        self.connections: set[BrowserConnection] = set()
        self.pending_permissions: dict[str, dict[str, Any]] = {}
        self._seen_client_ids: OrderedDict[str, None] = OrderedDict()
        self.viewer_actions = ViewerActionChannel(self.emit, self._subscribed_count)
        self.confirmations = ConfirmationChannel(self.emit, self._subscribed_count)
        self.dirty = False
        self.last_ack_seq = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        # Broadcasts not yet handed to the connections (see flush), and the
        # number of reasons to wait before doing so (an open batch, an open
        # loop turn).
        self._pending: list[str] = []
        self._holds = 0

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
        self._remember(seq, text)
        if kind in _HISTORY_TYPES:
            self._record(message, text)
        self._pending.append(text)
        if not self._holds:
            self._open_turn()

    def _remember(self, seq: int, text: str) -> None:
        """Keep a broadcast for tabs that reconnect: the newest ones, at
        most ``replay_size`` of them and ``REPLAY_BUFFER_BYTES`` in all (but
        always the last)."""
        replay = self.replay
        replay.append((seq, text))
        size = self._replay_bytes + len(text)
        while len(replay) > self._replay_size or (size > REPLAY_BUFFER_BYTES and len(replay) > 1):
            size -= len(replay.popleft()[1])
        self._replay_bytes = size

    def use_seq_reservation(self, reserve_seqs: Callable[[int], int]) -> None:
        """Have ``reserve_seqs(seq)`` record (durably) that numbers from
        ``seq`` on are in use before any is broadcast; it returns the highest
        number now reserved. Without it numbers are not reserved (a session
        that persists nothing). The first block is reserved here, at start:
        the state files change when the server starts, not as a side effect
        of whatever happens to broadcast first."""
        self._reserve_seqs = reserve_seqs
        self._reserve(self.seq + 1)

    def _reserve(self, seq: int) -> None:
        assert self._reserve_seqs is not None
        self._seq_limit = self._reserve_seqs(seq)

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
        return message

    def emit_stream(self, event_json: str, parent_json: str = "null") -> None:
        """Broadcast a ``stream_event`` given as JSON text: the event and its
        ``parent_tool_use_id``, cut from the agent's line by the stream-json
        bridge. The same message ``emit`` would send, same key order, built
        as text: the deltas are most of the traffic and json.dumps was most
        of their cost. Not history; kept in the replay buffer like any
        broadcast, so a reconnecting tab gets exactly these bytes."""
        self.seq = seq = self.seq + 1
        if seq > self._seq_limit:
            self._reserve(seq)
        text = (f'{{"type":"stream_event","event":{event_json},'
                f'"parent_tool_use_id":{parent_json},"seq":{seq}}}')
        self._remember(seq, text)
        self._pending.append(text)
        if not self._holds:
            self._open_turn()

    # --- batching broadcasts into frames ---
    #
    # Broadcasts collect in ``_pending``; ``flush`` joins them into one
    # newline-separated frame, encodes it once and hands the same bytes to
    # every subscribed connection (a connection that is behind queues them).
    # When: the first broadcast of an event-loop turn goes at once (a lone
    # message, e.g. a paced stream, waits for nothing); the rest of that
    # turn at its end (one call_soon). A batch (the stream-json bridge's
    # feed of one chunk of agent output) holds everything until it ends,
    # then flushes at once. Anything sent to one tab only (replay, errors,
    # snapshots) flushes first, so every tab sees messages in emit order.

    def _open_turn(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script, a sync test): at once, always
            self.flush()
            return
        self._holds += 1
        loop.call_soon(self._end_turn)
        self.flush()

    def _end_turn(self) -> None:
        self._holds -= 1
        self.flush()

    def begin_batch(self) -> None:
        """Hold broadcasts until ``end_batch`` (nested batches are fine)."""
        self._holds += 1

    def end_batch(self) -> None:
        self._holds -= 1
        self.flush()

    def flush(self) -> None:
        """Hand every pending broadcast to the subscribed connections, as
        one frame (or a few, beyond MAX_FRAME_BYTES) encoded once."""
        pending = self._pending
        if not pending:
            return
        self._pending = []
        for data, count in encode_frames(pending):
            for connection in self.connections:
                if connection.subscribed:
                    connection.send_frame(data, count)

    def set_agent_session_id(self, agent_session_id: str | None) -> None:
        if agent_session_id != self.agent_session_id:
            self.agent_session_id = agent_session_id
            self.dirty = True
            self.conversations.agent_session_changed(agent_session_id)

    def set_agent_state(self, **state: Any) -> None:
        self.agent_state.update({k: v for k, v in state.items() if v is not None})

    # --- history ---

    @property
    def history(self) -> list[dict[str, Any]]:
        """The conversation's newest messages (the window), decoded: for
        tests and tools; the session itself keeps only their text."""
        return [json.loads(entry.text) for entry in self._window]

    @property
    def has_history(self) -> bool:
        """Whether the conversation has any message (in memory or in the log)."""
        return self._first_row_id is not None

    def _merge_assistant(self, message: dict[str, Any]) -> dict[str, Any]:
        """The CLI sends one ``assistant`` line per content block, all with
        the same message id: fold them into one message the browser replaces
        by id, never showing a block twice."""
        inner = message.get("message")
        if not isinstance(inner, dict) or not isinstance(inner.get("id"), str):
            return message
        key = inner["id"]
        previous_message = self._assistants.get(key)
        if previous_message is None:
            entry = self._window_by_message_id.get(key)
            if entry is not None:  # e.g. the first block after a restart
                previous_message = json.loads(entry.text)
        if previous_message is None:
            merged = message
        else:
            previous = previous_message["message"]
            blocks = list(previous.get("content") or [])
            for block in inner.get("content") or []:
                if block not in blocks:
                    block_id = block.get("id") if isinstance(block, dict) else None
                    replaced = False
                    if block_id is not None:
                        for i, existing in enumerate(blocks):
                            if isinstance(existing, dict) and existing.get("id") == block_id:
                                blocks[i] = block
                                replaced = True
                                break
                    if not replaced:
                        blocks.append(block)
            merged = {**message, "message": {**previous, **inner, "content": blocks}}
        self._assistants[key] = merged
        self._assistants.move_to_end(key)
        while len(self._assistants) > ASSISTANT_CACHE:
            self._assistants.popitem(last=False)
        return merged

    def _record(self, message: dict[str, Any], text: str) -> None:
        """Add a broadcast (``text`` is its JSON) to the conversation: to the
        window and to the log."""
        self.dirty = True
        kind = message["type"]
        message_id: str | None = None
        if kind == "assistant":
            inner = message.get("message")
            if isinstance(inner, dict) and isinstance(inner.get("id"), str):
                message_id = inner["id"]
                entry = self._window_by_message_id.get(message_id)
                if entry is not None:
                    # The next block of a message already logged: one row, updated.
                    self._window_bytes += len(text) - len(entry.text)
                    entry.text = text
                    if self.conversation is not None:
                        self.conversation.replace(entry.row_id, message.get("seq", 0), text)
                    self._trim_window()
                    return
        elif kind == "result":
            text = _without_result_text(message, text)
            # The turn is over: its messages are complete.
            self._assistants.clear()
        row_id = self._next_row_id
        self._next_row_id += 1
        if self._first_row_id is None:
            self._first_row_id = row_id
        self._window_add(LoggedMessage(row_id, message_id, text))
        if self.conversation is not None:
            self.conversation.append(self.conversation_id, row_id, message.get("seq", 0), kind,
                                     message_id, text)
            if kind == "user_message":
                self.conversations.user_message_logged(message)
        self._trim_window()

    def use_conversation(self, conversation: ConversationLog) -> None:
        """Keep the conversation in ``conversation`` from now on (called
        before serving). When it has nothing of this session yet, the
        messages the session was created with go into it; otherwise its
        newest messages are the session's window."""
        if self._window and conversation.is_empty(self.conversation_id):
            rows = []
            for entry in self._window:
                message = json.loads(entry.text)
                rows.append((int(message.get("seq") or 0), entry.message_id,
                             str(message.get("type")), entry.text))
            conversation.import_messages(self.conversation_id, rows)
        self.conversation = conversation
        conversation.on_pause = lambda reason: self.saving.pause("conversation", reason)
        if conversation.paused is not None:
            self.saving.pause("conversation", conversation.paused, said=True)
        self.conversations.opened()
        self._show_tail()

    def _show_tail(self) -> None:
        """Make the current conversation's newest messages the window."""
        assert self.conversation is not None
        tail = self.conversation.tail(self.conversation_id, self._window_limit)
        self._assistants.clear()
        self._window.clear()
        self._window_bytes = 0
        self._window_by_message_id.clear()
        self._first_row_id = tail.first_row_id
        self._next_row_id = tail.next_row_id
        for entry in tail.messages:
            self._window_add(entry)

    def _window_add(self, entry: LoggedMessage) -> None:
        self._window.append(entry)
        self._window_bytes += len(entry.text)
        if entry.message_id is not None:
            self._window_by_message_id[entry.message_id] = entry

    def _trim_window(self) -> None:
        """Forget the oldest messages beyond the byte budget (the newest is
        always kept). Without a log they are gone for good, as they were
        for a session that persists nothing."""
        window = self._window
        while self._window_bytes > self._window_limit and len(window) > 1:
            entry = window.popleft()
            self._window_bytes -= len(entry.text)
            if entry.message_id is not None \
                    and self._window_by_message_id.get(entry.message_id) is entry:
                del self._window_by_message_id[entry.message_id]
        if self.conversation is None and window:
            self._first_row_id = window[0].row_id

    def _history_cursor(self) -> tuple[int | None, bool]:
        """Where the window starts, and whether older messages exist."""
        if not self._window:
            return None, False
        oldest = self._window[0].row_id
        return oldest, self._first_row_id is not None and oldest > self._first_row_id

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

    def show_conversation(self, conversation_id: str, listing: list[dict[str, Any]]) -> None:
        """Make ``conversation_id`` the one shown and logged, and show it
        to every tab: one ``conversation_switched`` broadcast carrying its
        newest messages (as ``message_history`` does) and the list. The
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
        self._replay_bytes = 0
        self.seq = seq = self.seq + 1
        if seq > self._seq_limit:
            self._reserve(seq)
        before, has_more = self._history_cursor()
        rest = _dumps({
            "has_more": has_more,
            "before": before,
            "conversation": self.conversations.current_public(),
            "conversations": listing,
            "pending_permissions": [],
            "pending_confirmations": list(self.confirmations.open_requests.values()),
            "seq": seq,
        })
        text = ('{"type":"conversation_switched","messages":['
                + ",".join(entry.text for entry in self._window) + "]," + rest[1:])
        self._remember(seq, text)
        self._pending.append(text)
        self.dirty = True
        self.flush()

    # --- browser connections ---

    def _subscribed_count(self) -> int:
        return sum(1 for c in self.connections if c.subscribed and not c.closed)

    def session_info(self) -> dict[str, Any]:
        return {
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
        hook = getattr(self.backend, name, None)
        return hook(*args) if hook is not None else None

    def subscribe(self, connection: BrowserConnection, last_seq: int) -> None:
        """Send what this tab missed since ``last_seq``, then everything live."""
        # Broadcasts still pending go to the tabs subscribed before this one
        # (this one gets them from the replay buffer below, once).
        self.flush()
        oldest = self.replay[0][0] if self.replay else self.seq + 1
        if last_seq > self.seq:
            # The tab counted events of an earlier server run: only the full
            # history can be trusted.
            last_seq = 0
        incremental = last_seq > 0 and last_seq + 1 >= oldest
        if incremental:
            # Seq numbers in the buffer are consecutive: skip to the first missed.
            missed = itertools.islice(self.replay, last_seq + 1 - oldest, None)
            connection.send_many([text for _, text in missed])
        else:
            # Open prompts are not part of the conversation but a fresh tab
            # must show them.
            # The window as the texts it holds, not re-encoded; older pages
            # on request (history_page).
            before, has_more = self._history_cursor()
            rest = _dumps({
                "has_more": has_more,
                "before": before,
                "pending_permissions": list(self.pending_permissions.values()),
                "pending_confirmations": list(self.confirmations.open_requests.values()),
                "last_seq": self.seq,
                "conversation": self.conversations.current_public(),
            })
            connection.send('{"type":"message_history","messages":['
                            + ",".join(entry.text for entry in self._window) + "]," + rest[1:])
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
            self.subscribe(connection, msg.last_seq)
            return
        if isinstance(msg, HistoryPage):
            await self.history_page(connection, msg.before)
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


def _without_result_text(message: dict[str, Any], text: str) -> str:
    """A ``result`` as the conversation keeps it: its ``result`` text, a
    copy of the turn's last assistant text, replaced by its length when long."""
    data = message.get("data")
    if not isinstance(data, dict):
        return text
    result = data.get("result")
    if not isinstance(result, str) or len(result) <= RESULT_TEXT_KEPT:
        return text
    slim = {key: value for key, value in data.items() if key != "result"}
    slim["result_length"] = len(result)
    return _dumps({**message, "data": slim})
