"""Reconnecting with ``last_seq``: exactly the missed events, or the full
history when the gap is older than the replay buffer."""

from __future__ import annotations

import asyncio
import random

import pytest

from tests.server.ws_client import WSClient


def emit_events(server, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        server.backend.emit({"type": "stream_event", "event": {"i": i}})


async def collect_until(tab, seq: int) -> None:
    while tab.last_seq < seq:
        await tab.recv()


@pytest.mark.parametrize("how", ["url", "message"])
async def test_reconnect_replays_exactly_the_missed_events(server, how):
    tab = await server.tab()
    emit_events(server, 3)
    await collect_until(tab, 3)
    last_seq = tab.last_seq
    await tab.close()
    emit_events(server, 5, start=3)
    server.backend.emit({"type": "user_message", "content": "while away"})

    if how == "url":
        again = await server.tab(last_seq=last_seq)
    else:
        again = await server.tab(subscribe=False)
        await again.send({"type": "session_subscribe", "last_seq": last_seq})
    replayed = [await again.recv() for _ in range(6)]
    assert [m["seq"] for m in replayed] == [4, 5, 6, 7, 8, 9]
    assert [m["event"]["i"] for m in replayed[:5]] == [3, 4, 5, 6, 7]
    assert replayed[5]["type"] == "user_message"
    status = await again.recv()
    assert status["type"] == "status_change" and "seq" not in status
    assert not [m for m in again.received if m["type"] == "message_history"]
    # Then live events follow, with no gap and no repeat.
    emit_events(server, 2, start=8)
    live = [await again.recv() for _ in range(2)]
    assert [m["seq"] for m in live] == [10, 11]
    assert await again.drain() == []


async def test_reconnect_with_nothing_missed_gets_only_the_status(server):
    tab = await server.tab()
    emit_events(server, 4)
    await collect_until(tab, 4)
    again = await server.tab(last_seq=4)
    status = await again.recv()
    assert status["type"] == "status_change"
    assert await again.drain() == []


async def test_a_gap_older_than_the_buffer_gets_the_full_history(make_server):
    server = await make_server(replay_size=5)
    tab = await server.tab()
    server.backend.emit({"type": "user_message", "content": "first"})
    await collect_until(tab, 1)
    await tab.close()
    emit_events(server, 20)
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    again = await server.tab(last_seq=1)
    history = await again.recv()
    assert history["type"] == "message_history"
    assert history["last_seq"] == server.session.seq == 22
    assert [m["type"] for m in history["messages"]] == ["user_message", "result"]
    status = await again.recv()
    assert status["type"] == "status_change"
    assert await again.drain() == []  # no partial replay on top of the history
    emit_events(server, 1)
    assert (await again.recv())["seq"] == 23


async def test_replay_buffer_boundary(make_server):
    server = await make_server(replay_size=5)
    tab = await server.tab()
    emit_events(server, 10)
    await collect_until(tab, 10)
    await tab.close()
    emit_events(server, 5)  # the buffer now holds exactly 11..15
    again = await server.tab(last_seq=10)
    replayed = [await again.recv() for _ in range(5)]
    assert [m["seq"] for m in replayed] == [11, 12, 13, 14, 15]
    emit_events(server, 1)  # 16 pushes 11 out: last_seq 10 is now too old
    third = await server.tab(last_seq=10)
    assert (await third.recv())["type"] == "message_history"


async def test_last_seq_from_an_earlier_server_run_gets_the_full_history(server):
    emit_events(server, 2)
    again = await server.tab(last_seq=1000)
    history = await again.recv()
    assert history["type"] == "message_history"
    assert history["last_seq"] == 2


async def test_bad_last_seq_in_the_url_is_an_error_not_a_crash(server):
    ws = await server.client.ws_connect(server.ws_path() + "?last_seq=abc", headers=server.auth)
    tab = WSClient(ws)
    assert (await tab.recv())["type"] == "session_init"
    assert (await tab.wait_for("error"))["message"].startswith("last_seq")
    history = await tab.subscribe(0)
    assert history["type"] == "message_history"


@pytest.mark.parametrize("seed", [1, 2])
async def test_random_drops_while_the_agent_keeps_talking(server, seed):
    """A client dropped at random points (mid-frame included) and
    reconnecting with its last_seq ends with every event exactly once, in
    order."""
    rng = random.Random(seed)
    total, drops = 300, 20
    drop_after = sorted(rng.sample(range(1, total), drops))
    done = asyncio.Event()

    async def agent() -> None:
        for i in range(total):
            server.backend.emit({"type": "stream_event", "event": {"i": i}})
            if rng.random() < 0.3:
                await asyncio.sleep(rng.random() * 0.003)
            else:
                await asyncio.sleep(0)
        done.set()

    seen: list[int] = []
    payloads: list[int] = []
    reconnects = 0

    first_tab = await server.tab()  # subscribed before the agent says anything

    async def client() -> None:
        nonlocal reconnects
        tab = first_tab
        while len(seen) < total:
            message = await tab.recv(timeout=5)
            if "seq" not in message:
                assert message["type"] == "status_change", message
                continue
            # WSClient already asserts seq only grows; here: no gap either.
            assert message["seq"] == len(seen) + 1, (message["seq"], len(seen))
            seen.append(message["seq"])
            payloads.append(message["event"]["i"])
            if drop_after and len(seen) >= drop_after[0]:
                drop_after.pop(0)
                # Whatever else arrived in the same frame is lost with the
                # connection: only what was processed counts.
                tab._pending.clear()
                last_seq = seen[-1]
                await tab.close()
                reconnects += 1
                await asyncio.sleep(rng.random() * 0.005)
                tab = await server.tab(last_seq=last_seq)
                tab.last_seq = last_seq
        await tab.close()

    await asyncio.wait_for(asyncio.gather(agent(), client()), 20)
    assert done.is_set()
    assert seen == list(range(1, total + 1))
    assert payloads == list(range(total))
    assert reconnects == drops
