"""The conversation a session shows: its newest part in memory (the
window, bounded in bytes), the whole of it in the workspace's append-only
log (``conversation_log``). ``pneuma.server.session.Session`` is built on
it; a new tab gets the window at once, and older pages from the log.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import sqlite3
from collections import OrderedDict, deque
from typing import Any

from pneuma.core.compact_json import dumps as _dumps
from pneuma.server.conversation_log import (
    ConversationLog,
    ConversationLogError,
    LoggedMessage,
)
from pneuma.server.history_preview import page_size, page_text
from pneuma.server.saving_status import SavingStatus
from pneuma.server.session_hooks import SessionHooks

log = logging.getLogger(__name__)

# The newest part of the conversation kept in memory; the rest is read
# from the log, a page at a time.
HISTORY_WINDOW_BYTES = 1024 * 1024
# What a new tab gets at once: the newest messages within this many bytes
# (under 128 KB whatever the conversation's length, so that a tab shows
# the newest turn as fast as an empty conversation: docs/conversations.md,
# "A long conversation opens at once"); older pages as it scrolls up.
FIRST_PAGE_BYTES = 96 * 1024
# A tab that holds the conversation and missed no more than this (after a
# restart, or a gap older than the replay buffer) gets what it missed from
# the log instead of a first page (docs/protocol.md, "history_resume").
RESUME_BYTES = FIRST_PAGE_BYTES
# A turn's final text is already in its assistant message: a result stores
# it again only when it is short (an error message, say).
RESULT_TEXT_KEPT = 1000
# Assistant messages kept whole for merging the next block into them.
ASSISTANT_CACHE = 4



class ConversationWindow:
    """The window of the conversation and its log."""

    conversation_id: str
    conversation: ConversationLog | None
    hooks: SessionHooks
    saving: SavingStatus
    dirty: bool

    def __init__(self, history_window_bytes: int) -> None:
        self.conversation = None
        self._window: deque[LoggedMessage] = deque()
        self._window_bytes = 0
        self._window_limit = history_window_bytes
        self._window_by_message_id: dict[str, LoggedMessage] = {}
        self._assistants: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._first_row_id: int | None = None
        self._next_row_id = 1

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
                self.hooks.user_message_logged(message)
        self._trim_window()

    def reserve_row_ids(self, count: int) -> int:
        """The first of ``count`` row ids kept for rows a feature writes into
        the log itself (a branch's copies of earlier messages,
        pneuma.server.conversation_branches): the session's own rows come after."""
        first = self._next_row_id
        self._next_row_id += count
        return first

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
        self.hooks.log_opened()
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

    def conversation_frame(self, head: str, fields: dict[str, Any]) -> str:
        """A frame that shows the conversation to a tab, opening with
        ``head`` (``'{"type":"message_history"'``, say): its first page, as the texts the window
        holds (never re-encoded), where older pages start, what the
        subscribed features add, and ``fields``."""
        start = self._first_page_start()
        texts: list[str] = []
        before: int | None = None
        has_more = False
        if start is not None:
            entries = itertools.islice(self._window, start, None)
            # Without a log there is no whole message to ask for: no previews.
            texts = ([entry.text for entry in entries] if self.conversation is None
                     else [page_text(entry.row_id, entry.text) for entry in entries])
            before = self._window[start].row_id
            has_more = self._first_row_id is not None and before > self._first_row_id
        rest = _dumps({"has_more": has_more, "before": before, **self.hooks.history_fields(),
                       **fields})
        return head + ',"messages":[' + ",".join(texts) + "]," + rest[1:]

    def _first_page_start(self) -> int | None:
        """The index in the window of the oldest message a new tab gets:
        the newest within ``FIRST_PAGE_BYTES`` (at least one), moved on to
        the start of a turn when one begins after it, so that the page holds
        whole turns unless the newest turn alone is larger than a page."""
        window = self._window
        if not window:
            return None
        if self.conversation is None:
            return 0  # no log to page from: the window is all there is
        start = len(window) - 1
        used = page_size(window[start].text)
        while start > 0 and used + page_size(window[start - 1].text) <= FIRST_PAGE_BYTES:
            start -= 1
            used += page_size(window[start].text)
        whole = start == 0 and (self._first_row_id is None
                                or window[0].row_id <= self._first_row_id)
        if not whole:
            for index in range(start, len(window)):
                if starts_a_turn(window[index].text):
                    return index
        return start

    async def history_message(self, connection: Any, row_id: int) -> None:
        """Send one tab the whole of a message a page gave it as a preview
        (``history_preview``): ``history_message {row, message}``."""
        text: str | None = None
        if self.conversation is not None:
            loop = asyncio.get_running_loop()
            try:
                text = await loop.run_in_executor(
                    None, self.conversation.read_message, self.conversation_id, row_id)
            except (ConversationLogError, sqlite3.Error) as exc:
                log.warning("could not read the conversation log: %s", exc)
        if text is None:
            connection.send(_dumps({"type": "error", "code": "history_unavailable",
                                    "message": "that message could not be read"}))
            return
        connection.send('{"type":"history_message","row":' + str(row_id) + ',"message":'
                        + text + "}")

    def missed_texts(self, last_seq: int, conversation_id: str | None) -> list[str] | None:
        """What a tab that holds this conversation up to ``last_seq``
        missed, from the log, in the order it was broadcast; None when it
        cannot be told from the log (another conversation, no log, saving
        paused) or is more than ``RESUME_BYTES``: that tab gets a first page."""
        conversation = self.conversation
        if (conversation is None or conversation_id != self.conversation_id or last_seq <= 0
                or conversation.paused is not None):
            return None
        try:
            return conversation.since(self.conversation_id, last_seq, RESUME_BYTES)
        except (ConversationLogError, sqlite3.Error) as exc:
            # The first page, from memory, is always there to fall back on.
            log.warning("could not read what a tab missed from the log: %s", exc)
            return None


def starts_a_turn(text: str) -> bool:
    """Whether a message's JSON (as broadcast: its type first) is the
    person's message, with which a turn begins."""
    return text.startswith('{"type":"user_message"')


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
