"""How a session's broadcasts reach its tabs: each gets the next ``seq``
(reserved on disk first, when the session persists), is kept in the replay
buffer for tabs that reconnect, and is batched with its neighbours into
frames encoded once for every subscribed tab (docs/protocol.md).
``pneuma.server.session.Session`` is built on it.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import deque
from collections.abc import Callable
from typing import Any

from pneuma.server.connection import BrowserConnection, encode_frames

# The replay buffer is bounded in bytes too: a few long messages (a turn's
# full text) must not pin megabytes.
REPLAY_BUFFER_BYTES = 4 * 1024 * 1024


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


dumps = _make_dumps()



class Broadcasts:
    """Seq numbers, the replay buffer and the batching of broadcasts."""

    seq: int
    replay: deque[tuple[int, str]]
    connections: set[BrowserConnection]

    def __init__(self, last_seq: int, replay_size: int) -> None:
        self.seq = last_seq
        # Seq numbers up to this one may be handed out; beyond it,
        # reserve_seqs runs first (see use_seq_reservation).
        self._seq_limit: float = math.inf
        self._reserve_seqs: Callable[[int], int] | None = None
        self.replay = deque()
        self._replay_size = replay_size
        self._replay_bytes = 0
        self.connections = set()
        # Broadcasts not yet handed to the connections (see flush), and the
        # number of reasons to wait before doing so (an open batch, an open
        # loop turn).
        self._pending: list[str] = []
        self._holds = 0

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
