"""The replay buffer keeps the newest broadcasts within its bounds, in
messages and in bytes, whatever the batches they came in; a tab that
reconnects mid-stream is sent exactly what it missed."""

from __future__ import annotations

import json
import random
from collections import deque

import pytest

from pneuma.server.broadcast import ReplayBuffer
from tests.server.test_replay import collect_until


def reference(batches: list[list[str]], max_messages: int, max_bytes: int,
              first_seq: int = 1) -> list[tuple[int, str]]:
    """What a buffer kept message by message holds: the newest messages,
    at most ``max_messages`` and ``max_bytes`` of text, always the last."""
    kept: deque[tuple[int, str]] = deque()
    size = 0
    seq = first_seq
    for batch in batches:
        for text in batch:
            kept.append((seq, text))
            size += len(text)
            seq += 1
            while (len(kept) > max_messages or size > max_bytes) and len(kept) > 1:
                size -= len(kept.popleft()[1])
    return list(kept)


def fill(buffer: ReplayBuffer, batches: list[list[str]], first_seq: int = 1) -> None:
    seq = first_seq
    for batch in batches:
        buffer.add(seq, list(batch))
        seq += len(batch)


@pytest.mark.parametrize("seed", range(40))
def test_batches_keep_what_a_message_by_message_buffer_keeps(seed):
    rng = random.Random(seed)
    max_messages = rng.choice([1, 3, 10, 50])
    max_bytes = rng.choice([1, 40, 200, 1000, 10**6])
    batches = [[f"m{rng.random():.6f}" + "x" * rng.choice([0, 5, 60, 300])
                for _ in range(rng.choice([1, 1, 2, 7, 40]))]
               for _ in range(rng.randint(1, 30))]
    buffer = ReplayBuffer(max_messages, max_bytes)
    fill(buffer, batches, first_seq=17)
    expected = reference(batches, max_messages, max_bytes, first_seq=17)
    assert list(buffer) == expected
    assert len(buffer) == len(expected)
    assert buffer.size == sum(len(text) for _, text in expected)
    assert buffer.oldest_seq == expected[0][0]
    for last_seq in range(10, expected[-1][0] + 2):
        assert buffer.since(last_seq) == [text for seq, text in expected if seq > last_seq]


def test_the_buffer_never_holds_more_text_than_its_bound():
    """A long stream of long messages (a turn's text in each) stays within
    the byte bound; a single message bigger than the bound is still kept."""
    buffer = ReplayBuffer(4096, 10_000)
    seq = 1
    for _ in range(200):
        batch = ["y" * 3_000 for _ in range(5)]
        buffer.add(seq, batch)
        seq += len(batch)
        assert buffer.size <= 10_000
        held = sum(len(text) for batch_ in buffer._batches for text in batch_[1])
        assert held <= 10_000  # dropped texts are let go, not only uncounted
    assert [s for s, _ in buffer] == [998, 999, 1000]
    buffer.add(seq, ["z" * 50_000])
    assert [s for s, _ in buffer] == [seq] and buffer.size == 50_000


def test_cleared_buffer_is_empty():
    buffer = ReplayBuffer(10)
    buffer.add(1, ["a", "b"])
    buffer.clear()
    assert list(buffer) == [] and buffer.oldest_seq is None and buffer.since(0) == []


async def test_a_tab_reconnecting_mid_stream_gets_exactly_the_missed_deltas(make_server):
    """Deltas arrive in batches (the stream-json bridge's chunks); a tab
    that dropped in the middle of one gets the rest of it and everything
    after, once each, in order."""
    server = await make_server()
    session = server.session
    tab = await server.tab()

    def chunk(start: int, count: int) -> None:
        session.begin_batch()
        for i in range(start, start + count):
            server.backend.emit({"type": "stream_event", "parent_tool_use_id": None,
                                 "event": {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "text_delta", "text": f"d{i}"}}})
        session.end_batch()

    chunk(0, 40)
    await collect_until(tab, 40)
    await tab.close()
    chunk(40, 30)
    chunk(70, 30)
    again = await server.tab(last_seq=25)  # dropped after delta 24, mid-chunk
    replayed = [await again.recv() for _ in range(75)]
    assert [m["seq"] for m in replayed] == list(range(26, 101))
    assert [m["event"]["delta"]["text"] for m in replayed] == [f"d{i}" for i in range(25, 100)]
    assert (await again.recv())["type"] == "status_change"
    assert await again.drain() == []


async def test_a_gap_older_than_the_byte_bound_gets_the_full_history(make_server, monkeypatch):
    """Long broadcasts push the oldest out by their bytes, not only their
    count: a tab that missed more than the buffer holds gets the history."""
    monkeypatch.setattr("pneuma.server.broadcast.REPLAY_BUFFER_BYTES", 2_000)
    server = await make_server()
    tab = await server.tab()
    server.backend.emit({"type": "stream_event", "parent_tool_use_id": None, "event": {"i": 0}})
    await collect_until(tab, 1)
    await tab.close()
    for i in range(1, 4):
        server.backend.emit({"type": "stream_event", "parent_tool_use_id": None,
                             "event": {"i": i, "text": "w" * 900}})
    assert len(server.session.replay) == 2  # 2 of the 3 long ones fit in 2,000 bytes
    late = await server.tab(last_seq=1)
    first = await late.recv()
    assert first["type"] == "message_history"
    on_time = await server.tab(last_seq=2)
    assert [json.loads(text)["seq"] for text in server.session.replay.since(2)] == [3, 4]
    assert [(await on_time.recv())["seq"] for _ in range(2)] == [3, 4]
