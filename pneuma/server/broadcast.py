"""How a session's broadcasts reach its tabs: each gets the next ``seq``
(reserved on disk first, when the session persists), is kept in the replay
buffer for tabs that reconnect, and is batched with its neighbours into
frames encoded once for every subscribed tab (docs/protocol.md).
``pneuma.server.session.Session`` is built on it.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from pneuma.server.connection import BrowserConnection, encode_frames

# The replay buffer is bounded in bytes too: a few long messages (a turn's
# full text) must not pin megabytes.
REPLAY_BUFFER_BYTES = 4 * 1024 * 1024




class ReplayBuffer:
    """The newest broadcasts, kept for tabs that reconnect: at most
    ``max_messages`` of them and ``max_bytes`` of text in all (but always
    the newest one), iterated as ``(seq, text)``, oldest first.

    Kept as the batches ``Broadcasts.flush`` hands out (each a list of
    messages with consecutive seq numbers) rather than message by message:
    the deltas of a streamed reply are most broadcasts, and a per-message
    append, size count and bound check cost a third of what the session
    does for one (docs/performance.md, "The per-delta cost")."""

    def __init__(self, max_messages: int, max_bytes: int | None = None) -> None:
        self.max_messages = max_messages
        self.max_bytes = REPLAY_BUFFER_BYTES if max_bytes is None else max_bytes
        # [first seq, texts, index of the first text still kept, its characters kept]
        self._batches: deque[list[Any]] = deque()
        self._count = 0  # messages kept
        self.size = 0  # characters of text kept

    def add(self, first_seq: int, texts: list[str]) -> None:
        """Keep ``texts`` (seq numbers ``first_seq`` on; the list is the
        buffer's from now on), dropping the oldest beyond the bounds."""
        chars = sum(map(len, texts))
        self._batches.append([first_seq, texts, 0, chars])
        self._count += len(texts)
        self.size += chars
        if self._count > self.max_messages or self.size > self.max_bytes:
            self._trim()

    def _over(self) -> bool:
        return (self._count > self.max_messages or self.size > self.max_bytes) \
            and self._count > 1

    def _trim(self) -> None:
        """Drop the oldest messages while over a bound: whole batches while
        even their newest message would have to go, then one by one."""
        batches = self._batches
        while len(batches) > 1:
            _, texts, start, chars = batches[0]
            kept = len(texts) - start
            if self._count - kept < self.max_messages \
                    and self.size - chars + len(texts[-1]) <= self.max_bytes:
                break
            batches.popleft()
            self._count -= kept
            self.size -= chars
        oldest = batches[0]
        while self._over():
            texts, start = oldest[1], oldest[2]
            if start == len(texts):
                batches.popleft()
                oldest = batches[0]
                continue
            dropped = len(texts[start])
            texts[start] = ""  # let it go now, not with the rest of its batch
            oldest[2] = start + 1
            oldest[3] -= dropped
            self.size -= dropped
            self._count -= 1
        if oldest[2] == len(oldest[1]) and len(batches) > 1:
            batches.popleft()

    @property
    def oldest_seq(self) -> int | None:
        """The seq of the oldest message kept (None: none is)."""
        if not self._count:
            return None
        first_seq, _, start, _ = self._batches[0]
        return int(first_seq + start)

    def since(self, last_seq: int) -> list[str]:
        """The texts of the messages kept after ``last_seq``, in order."""
        missed: list[str] = []
        for first_seq, texts, start, _ in self._batches:
            skip = max(start, last_seq + 1 - first_seq)
            if skip < len(texts):
                missed.extend(texts[skip:])
        return missed

    def clear(self) -> None:
        self._batches.clear()
        self._count = 0
        self.size = 0

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[tuple[int, str]]:
        for first_seq, texts, start, _ in self._batches:
            for i in range(start, len(texts)):
                yield first_seq + i, texts[i]


class Broadcasts:
    """Seq numbers, the replay buffer and the batching of broadcasts."""

    seq: int
    replay: ReplayBuffer
    connections: set[BrowserConnection]

    def __init__(self, last_seq: int, replay_size: int) -> None:
        self.seq = last_seq
        # Seq numbers up to this one may be handed out; beyond it,
        # reserve_seqs runs first (see use_seq_reservation).
        self._seq_limit: float = math.inf
        self._reserve_seqs: Callable[[int], int] | None = None
        self.replay = ReplayBuffer(replay_size)
        self.connections = set()
        # Broadcasts not yet handed to the connections (see flush), and the
        # number of reasons to wait before doing so (an open batch, an open
        # loop turn).
        self._pending: list[str] = []
        self._holds = 0

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
        # Every broadcast took the next seq and went into _pending in that
        # order, so the pending ones are the newest, consecutive, ending at seq.
        self.replay.add(self.seq - len(pending) + 1, pending)
        for data, count in encode_frames(pending):
            for connection in self.connections:
                if connection.subscribed:
                    connection.send_frame(data, count)
