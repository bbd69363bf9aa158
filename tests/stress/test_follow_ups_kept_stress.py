"""Queued follow-ups across kill -9 (pneuma/server/follow_up_file.py): a
real `pneuma run` with the fake CLI busy on a slow turn takes a random mix
of queued, edited, cancelled and sent follow-ups (new ones and those held
since the last run), then is killed with SIGKILL at a random point, now
and then with one request still on its way. After every kill the file,
and the next run's queue, are exactly what the tab was last told (or,
for the request in flight, that state with or without it), all held, and
the agent never got one of them."""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import pytest

from tests.server.follow_up_runs import FakeAgent, Run, Tab, kept
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

CYCLES = 8
TIME_CAP = 30.0  # seconds for the whole test; a cycle takes about two
OPS_PER_CYCLE = 6

Queue = list[tuple[str, str]]  # (queue_id, content), oldest first


async def _random_op(tab: Tab, rng: random.Random, queue: Queue, n: int, *,
                     wait: bool) -> tuple[str, Queue]:
    """One random request; its kind and the queue once it is acknowledged
    (awaited only when ``wait``)."""
    kind = rng.choice(["queue", "queue", "edit", "cancel", "send"] if queue else ["queue"])
    if kind == "queue":
        text = f"follow-up {n}"
        await tab.say(text)
        if not wait:
            return kind, queue  # its id is the server's: checked by content below
        queued = await tab.wait_for("user_message_queued", lambda m: m.get("client_msg_id") == text)
        return kind, [*queue, (queued["queue_id"], text)]
    queue_id, _ = rng.choice(queue)
    if kind == "edit":
        text = f"edited {n}"
        await tab.send({"type": "queued_message_edit", "queue_id": queue_id, "content": text})
        after = [(q, text if q == queue_id else c) for q, c in queue]
        ack = "queued_message_edited"
    elif kind == "cancel":
        await tab.send({"type": "queued_message_cancel", "queue_id": queue_id})
        after = [(q, c) for q, c in queue if q != queue_id]
        ack = "queued_message_cancelled"
    else:  # send: released, still queued behind the busy agent
        await tab.send({"type": "queued_message_send", "queue_id": queue_id})
        after, ack = queue, "queued_message_released"
    if wait:
        await tab.wait_for(ack, lambda m: m.get("queue_id") == queue_id)
    return kind, after


def _contents(queue: Queue) -> list[str]:
    return [content for _, content in queue]


async def test_kill_9_leaves_the_queue_as_the_tab_last_saw_it(tmp_path: Path) -> None:
    rng = random.Random(2508)
    workspace = tmp_path / "deck"
    agent = FakeAgent(tmp_path / "agent")
    deadline = time.monotonic() + TIME_CAP
    queue: Queue = []
    cycles = acknowledged = in_flight = restored = 0
    numbers = iter(range(1_000_000))
    try:
        while cycles < CYCLES and time.monotonic() < deadline:
            run = Run(workspace, agent, tmp_path / "home", f"run{cycles}")
            pending: tuple[str, Queue] | None = None
            try:
                async with Tab(run) as tab:
                    history = await tab.wait_for("message_history")
                    shown = [(q["queue_id"], q["content"]) for q in history["queued_messages"]]
                    assert shown == queue, f"cycle {cycles}: restored {shown}, expected {queue}"
                    assert all(q.get("held") for q in history["queued_messages"])
                    restored += len(shown)
                    await tab.busy()
                    for _ in range(rng.randint(1, OPS_PER_CYCLE)):
                        _, queue = await _random_op(tab, rng, queue, next(numbers), wait=True)
                        acknowledged += 1
                    if rng.random() < 0.5:  # killed with one request on its way
                        pending = await _random_op(tab, rng, queue, next(numbers), wait=False)
                        in_flight += 1
            finally:
                run.stop(signal.SIGKILL)
            on_disk = [(e["queue_id"], e["message"]["content"]) for e in kept(workspace)]
            if pending is not None and on_disk != queue:
                kind, after = pending
                if kind == "queue":  # the server gave it its id: match on the rest
                    assert on_disk[:-1] == queue and on_disk[-1][1].startswith("follow-up ")
                    after = on_disk
                assert on_disk == after, f"cycle {cycles}: file {on_disk}, expected {queue} or {after}"
                queue = after
            assert on_disk == queue, f"cycle {cycles}: file {on_disk}, expected {queue}"
            cycles += 1
        sent = agent.user_texts()
        assert not any(text.startswith(("follow-up", "edited")) for text in sent), sent
    finally:
        record("8 queued follow-ups kept", f"{cycles} kill -9 cycles, {count(acknowledged)} "
               f"acknowledged queue/edit/cancel/send requests, {in_flight} killed in flight, "
               f"{count(restored)} follow-ups brought back held, none sent on their own")
    assert cycles >= 3, "too few cycles ran within the time cap"
