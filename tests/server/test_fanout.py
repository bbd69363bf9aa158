"""Broadcasts to many tabs: the session joins what one loop turn (or one
chunk of agent output) broadcasts into one frame, encodes it once and hands
the same bytes to every tab. Every tab still gets every message exactly
once, in seq order; a tab that subscribes, gets an error or is sent a
message of its own in the middle of a burst sees it in emit order; a tab
that stops reading never holds back the others, catches up in frames no
bigger than the frame budget, and is cut off (4008) when it holds too many
messages or bytes while the others go on. Tabs that offer permessage-deflate
(browsers do) get the same uncompressed bytes as the others."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from pneuma.server import connection as connection_module
from pneuma.server.session import Session
from pneuma.testing.browser import join_session
from tests.server.ws_client import WSClient


class CountingTab(WSClient):
    def __init__(self, ws: aiohttp.ClientWebSocketResponse):
        super().__init__(ws)
        self.frames = 0
        self.frame_sizes: list[tuple[int, int]] = []  # (bytes, messages) of each frame

    def _on_frame(self, data: str) -> None:
        self.frames += 1
        self.frame_sizes.append((len(data.encode()), data.count("\n") + 1))


async def open_tab(server, *, compress: int = 0) -> CountingTab:
    ws = await server.client.ws_connect(server.ws_path(), headers=server.auth, compress=compress)
    tab = CountingTab(ws)
    server.tabs.append(tab)
    await join_session(tab)
    return tab


async def read_until(tab: WSClient, seq: int, timeout: float = 10.0) -> None:
    async def until() -> None:
        while tab.last_seq < seq:
            await tab.recv(timeout)

    await asyncio.wait_for(until(), timeout)


def delta(i: int) -> dict[str, Any]:
    return {"type": "stream_event",
            "event": {"type": "content_block_delta", "index": 0,
                      "delta": {"type": "text_delta", "text": f"t{i} é ✓"}},
            "parent_tool_use_id": None}


async def test_every_tab_gets_every_message_once_in_order_under_bursts(server):
    plain = [await open_tab(server) for _ in range(4)]
    deflated = [await open_tab(server, compress=15) for _ in range(2)]  # as browsers connect
    tabs = plain + deflated
    session = server.session
    expected: list[dict[str, Any]] = []

    def emit(message: dict[str, Any]) -> None:
        session.emit(message)
        expected.append({**message, "seq": session.seq})

    def emit_stream(i: int) -> None:
        session.emit_stream(json.dumps(delta(i)["event"], separators=(",", ":")), '"toolu_1"')
        expected.append({**delta(i), "parent_tool_use_id": "toolu_1", "seq": session.seq})

    i = 0
    for burst in (1, 300, 2, 1, 1000, 7):
        for _ in range(burst):
            i += 1
            if i % 50 == 0:
                emit({"type": "system_note", "text": f"note {i}"})
            elif i % 3 == 0:
                emit_stream(i)
            else:
                emit(delta(i))
        if burst == 300:  # and one chunk of agent output, as the bridge feeds it
            session.begin_batch()
            for _ in range(40):
                i += 1
                emit_stream(i)
            session.end_batch()
        await asyncio.sleep(0)
    for tab in tabs:
        await read_until(tab, session.seq)
        await tab.drain()  # and nothing more arrives
        assert [m for m in tab.received if "seq" in m] == expected
    # Bursts travel in few frames: nowhere near one frame per message.
    assert all(tab.frames < 60 for tab in plain), [tab.frames for tab in plain]


async def test_tabs_offering_deflate_as_browsers_do_get_the_frames_uncompressed(server):
    # On 127.0.0.1 compression saves nothing and costs a zlib pass per tab
    # per frame; every tab gets the same bytes.
    tabs = [await open_tab(server, compress=15) for _ in range(3)]
    for i in range(300):
        server.session.emit(delta(i))
    for tab in tabs:
        assert tab.ws.compress == 0  # the server declined the extension
        await read_until(tab, server.session.seq)
        assert [m["seq"] for m in tab.received if "seq" in m] == list(range(1, 301))


async def test_a_closed_tab_does_not_stop_the_others(server):
    tabs = [await open_tab(server) for _ in range(3)]
    await tabs[1].ws.close()
    for i in range(500):
        server.session.emit(delta(i))
        if i % 100 == 0:
            await asyncio.sleep(0)
    for tab in (tabs[0], tabs[2]):
        await read_until(tab, server.session.seq)
        assert [m["seq"] for m in tab.received if "seq" in m] == list(range(1, 501))


async def test_a_tab_that_stops_reading_is_cut_off_and_the_others_go_on(server, monkeypatch):
    monkeypatch.setattr(connection_module, "MAX_QUEUED_MESSAGES", 20)
    reader = await open_tab(server)
    before = set(server.session.connections)
    stuck = await open_tab(server)  # subscribed, then reads nothing for a while
    (stuck_connection,) = set(server.session.connections) - before
    session = server.session
    big = "z" * 64_000  # the kernel's socket buffers fill up after a few MiB

    async def read_all() -> None:
        while True:
            await reader.recv(10)

    async def caught_up() -> None:
        while reader.last_seq < session.seq:
            await asyncio.sleep(0.01)

    reading = asyncio.create_task(read_all())
    sent = 0
    try:
        while not stuck_connection.closed:
            assert sent < 2000, "the tab that stopped reading was never cut off"
            for _ in range(5):
                session.emit({"type": "system_note", "text": big, "n": sent})
                sent += 1
            await asyncio.sleep(0.001)
        for _ in range(50):  # the rest of the stream, after the cut
            session.emit({"type": "system_note", "text": "small", "n": sent})
            sent += 1
        await asyncio.wait_for(caught_up(), 10)
    finally:
        reading.cancel()
    assert [m["n"] for m in reader.received if m.get("type") == "system_note"] == list(range(sent))

    # The stuck tab now reads: a gapless prefix, then the close code 4008...
    got: list[int] = []
    with pytest.raises(ConnectionError, match="4008|CLOSE"):
        while True:
            message = await stuck.recv(10)
            if message.get("type") == "system_note":
                got.append(message["seq"])
    assert stuck.ws.close_code == 4008
    assert got == list(range(got[0], got[0] + len(got))) and got[-1] < session.seq
    # ...and reconnecting with its last_seq gets exactly the rest.
    monkeypatch.undo()  # (all of it is queued at once: more than 20 messages)
    again = await server.tab(last_seq=got[-1])
    await read_until(again, session.seq)
    replayed = [m["seq"] for m in again.received if "seq" in m]
    assert replayed == list(range(got[-1] + 1, session.seq + 1))


async def stalled_pair(server) -> tuple[CountingTab, CountingTab, Any]:
    """A tab that reads and a tab that (from now on) reads nothing, both
    subscribed; and the server's connection of the stalled one."""
    reader = await open_tab(server)
    before = set(server.session.connections)
    stalled = await open_tab(server)
    (stalled_connection,) = set(server.session.connections) - before
    return reader, stalled, stalled_connection


async def test_a_stalled_tab_does_not_hold_back_the_others(server):
    reader, stalled, stalled_connection = await stalled_pair(server)
    session = server.session
    big = "b" * 60_000  # a few MiB in all: more than the stalled socket's buffers hold
    for n in range(150):
        session.emit({"type": "system_note", "text": big, "n": n})
        await asyncio.sleep(0)  # one frame each
        # Every message reaches the reading tab while the other reads nothing.
        await read_until(reader, session.seq)
    assert not stalled_connection.closed  # still behind, not cut off
    assert [m["n"] for m in reader.received if m.get("type") == "system_note"] == list(range(150))
    # The stalled tab, reading again, gets everything: once each, in order.
    await read_until(stalled, session.seq)
    assert [m["n"] for m in stalled.received if m.get("type") == "system_note"] == list(range(150))


async def test_a_tab_that_catches_up_gets_frames_no_bigger_than_the_budget(server):
    reader, stalled, stalled_connection = await stalled_pair(server)
    session = server.session
    budget = connection_module.MAX_FRAME_BYTES
    text = "c" * (budget * 6 // 10)  # two such messages do not fit in one frame
    small = "s" * 200
    # 16 MiB in all: most of it queues on the server for the stalled tab.
    for n in range(400):
        session.emit({"type": "system_note", "text": small if n % 2 else text, "n": n})
        await asyncio.sleep(0)
    await read_until(reader, session.seq)
    stalled.frame_sizes.clear()  # (what it got before it stalled)
    await read_until(stalled, session.seq)
    assert [m["n"] for m in stalled.received if m.get("type") == "system_note"] == list(range(400))
    joined = [size for size, count in stalled.frame_sizes if count > 1]
    assert joined, "the backlog was not joined into frames"
    assert max(joined) <= budget, (max(joined), budget)


async def test_a_tab_holding_too_many_bytes_is_cut_off_and_the_others_go_on(server, monkeypatch):
    monkeypatch.setattr(connection_module, "MAX_QUEUED_BYTES", 2 << 20)
    reader, stalled, stalled_connection = await stalled_pair(server)
    session = server.session
    big = "z" * 100_000  # far fewer messages than MAX_QUEUED_MESSAGES
    sent = 0
    while not stalled_connection.closed:
        assert sent < 400, "the stalled tab was never cut off"
        session.emit({"type": "system_note", "text": big, "n": sent})
        sent += 1
        await asyncio.sleep(0)
        await read_until(reader, session.seq)
    assert [m["n"] for m in reader.received if m.get("type") == "system_note"] == list(range(sent))
    with pytest.raises(ConnectionError, match="4008|CLOSE"):
        await read_until(stalled, session.seq)
    assert stalled.ws.close_code == 4008


async def test_a_lone_surrogate_reaches_the_tab_as_the_same_string(server):
    tab = await open_tab(server)
    # (e.g. the agent wrote a "\ud800" escape)
    server.session.emit({"type": "session_update", "updates": {"title": "a\ud800b"}})
    server.session.emit({"type": "session_update", "updates": {"title": "after"}})
    await read_until(tab, 2)
    assert [m["updates"]["title"] for m in tab.received if m["type"] == "session_update"] \
        == ["a\ud800b", "after"]


# --- order within a loop turn (unit level: no sockets) ---


class Tab:
    """A connection that keeps what it is sent, one message per entry."""

    closed = False

    def __init__(self, session: Session) -> None:
        self.subscribed = False
        self.before_send = None
        self.sent: list[str] = []
        session.attach(self)  # type: ignore[arg-type]
        assert json.loads(self.sent.pop())["type"] == "session_init"

    def send(self, text: str) -> None:
        if self.before_send is not None:
            self.before_send()
        self.sent.append(text)

    def send_many(self, texts: list[str]) -> None:
        if self.before_send is not None:
            self.before_send()
        self.sent.extend(texts)

    def send_frame(self, data: bytes, count: int) -> None:
        texts = data.decode().split("\n")
        assert len(texts) == count
        self.sent.extend(texts)

    def seqs(self) -> list[Any]:
        return [json.loads(t).get("seq", json.loads(t)["type"]) for t in self.sent]


def _session(tmp_path: Path) -> Session:
    return Session("sid", mode="slide", workspace=tmp_path, backend_name="none")


async def test_a_tab_subscribing_in_the_middle_of_a_turn_gets_each_message_once(tmp_path):
    session = _session(tmp_path)
    early = Tab(session)
    session.subscribe(early, 0)  # type: ignore[arg-type]
    early.sent.clear()
    for i in range(3):
        session.emit(delta(i))  # the first goes at once, the others wait for the turn's end
    assert early.seqs() == [1]
    late = Tab(session)
    session.subscribe(late, 1)  # type: ignore[arg-type]
    session.emit(delta(3))
    await asyncio.sleep(0)  # the end of the turn
    assert early.seqs() == [1, 2, 3, 4]
    assert late.seqs() == [2, 3, "status_change", 4]


async def test_a_message_for_one_tab_comes_after_the_broadcasts_before_it(tmp_path):
    session = _session(tmp_path)
    tab = Tab(session)
    tab.subscribed = True
    session.emit(delta(0))
    session.emit(delta(1))  # pending until the end of the turn...
    session.error_to(tab, "bad input")  # type: ignore[arg-type]
    session.emit(delta(2))
    assert tab.seqs() == [1, 2, "error"]  # ...or until something for this tab alone
    await asyncio.sleep(0)
    assert tab.seqs() == [1, 2, "error", 3]


def test_without_an_event_loop_every_broadcast_goes_at_once(tmp_path):
    session = _session(tmp_path)
    tab = Tab(session)
    tab.subscribed = True
    for i in range(3):
        session.emit(delta(i))
        assert len(tab.sent) == i + 1


async def test_a_batch_is_held_until_it_ends_then_sent_at_once(tmp_path):
    session = _session(tmp_path)
    frames: list[int] = []
    tab = Tab(session)
    tab.subscribed = True
    tab.send_frame = lambda data, count: frames.append(count)  # type: ignore[method-assign]
    session.begin_batch()
    for i in range(5):
        session.emit(delta(i))
    assert frames == []
    session.end_batch()
    assert frames == [5]


def test_a_stream_event_dict_is_sent_as_json_dumps_would_send_it(tmp_path):
    session = _session(tmp_path)
    tab = Tab(session)
    tab.subscribed = True
    messages = [
        delta(1),
        {**delta(2), "parent_tool_use_id": "toolu_\"x\" é"},
        {"type": "stream_event", "parent_tool_use_id": None, "event": {"a": 1}},  # other order
        {"type": "stream_event", "event": {"a": [1.5, None, True]}, "parent_tool_use_id": None,
         "extra": 1},
        {"type": "stream_event", "event": "text", "parent_tool_use_id": 7},
    ]
    for message in messages:
        session.emit(message)
    expected = [json.dumps({**m, "seq": n}, ensure_ascii=False, separators=(",", ":"))
                for n, m in enumerate(messages, start=1)]
    assert tab.sent == expected
    assert [text for _, text in session.replay] == expected
    assert [m["seq"] for m in messages] == [1, 2, 3, 4, 5]
