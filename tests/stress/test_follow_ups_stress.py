"""Queued follow-ups under a random mix of sends, edits, cancels, stale
requests and turns that end or are stopped (issue 25, item 8;
pneuma/server/follow_ups.py): the agent gets exactly the follow-ups not
withdrawn, once each, in the order sent, with their last text; every
request about one already taken is E_CONFLICT; nothing stays queued."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from pneuma.testing import serve
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

ROUNDS = 80
TIME_CAP = 25.0  # seconds for the whole test


async def test_follow_ups_reach_the_agent_exactly_as_left_in_the_queue(tmp_path: Path) -> None:
    rng = random.Random(25)
    started = time.monotonic()
    tried = {"queued": 0, "edited": 0, "cancelled": 0, "stale": 0, "stopped": 0, "taken": 0}
    sent_numbers = iter(range(1_000_000))
    async with serve("slide", tmp_path / "ws", watch=False) as server:
        tab = await server.tab()
        agent = server.agent
        queue: list[dict[str, Any]] = []  # what the test expects the server to hold
        taken: list[str] = []  # queue ids the agent has
        await tab.send({"type": "user_message", "content": "turn 0", "client_msg_id": "first"})
        assert await agent.next_user_message() == "turn 0"
        rounds = 0
        for _ in range(ROUNDS):
            if time.monotonic() - started > TIME_CAP:
                break
            for _ in range(rng.randint(0, 3)):
                n = next(sent_numbers)
                await tab.send({"type": "user_message", "content": f"follow-up {n}", "client_msg_id": f"c{n}"})
                queued = await tab.wait_for("user_message_queued", where=lambda m, n=n: m.get("client_msg_id") == f"c{n}")
                queue.append({"id": queued["queue_id"], "text": f"follow-up {n}"})
                tried["queued"] += 1
            for _ in range(rng.randint(0, 2)):
                if queue and rng.random() < 0.6:
                    target = rng.choice(queue)
                    if rng.random() < 0.5:
                        target["text"] = f"{target['text']} (edited {rng.randint(0, 99)})"
                        await tab.send({"type": "queued_message_edit", "queue_id": target["id"],
                                        "content": target["text"]})
                        await tab.wait_for("queued_message_edited", where=lambda m, t=target: m["content"] == t["text"])
                        tried["edited"] += 1
                    else:
                        queue.remove(target)
                        await tab.send({"type": "queued_message_cancel", "queue_id": target["id"]})
                        await tab.wait_for("queued_message_cancelled", where=lambda m, t=target: m["queue_id"] == t["id"])
                        tried["cancelled"] += 1
                elif taken:
                    stale = rng.choice(taken)
                    kind = rng.choice(["queued_message_cancel", "queued_message_edit"])
                    await tab.send({"type": kind, "queue_id": stale, "content": "too late"})
                    refused = await tab.wait_for("error")
                    assert refused["code"] == "E_CONFLICT" and "seq" not in refused, refused
                    tried["stale"] += 1
            # The turn ends: answered, or stopped as Esc stops it.
            if rng.random() < 0.3:
                agent.emit({"type": "result", "data": {"subtype": "error_during_execution", "is_error": True}})
                agent.emit({"type": "status_change", "status": "idle"})
                tried["stopped"] += 1
            else:
                agent.reply(f"answer {rounds}")
            if queue:
                head = queue.pop(0)
                took = await tab.wait_for("queued_message_taken")
                assert took["queue_id"] == head["id"], (took, head)
                assert await agent.next_user_message() == head["text"]
                taken.append(head["id"])
                tried["taken"] += 1
            else:
                n = next(sent_numbers)
                await tab.send({"type": "user_message", "content": f"fresh {n}", "client_msg_id": f"f{n}"})
                assert await agent.next_user_message() == f"fresh {n}"
            rounds += 1
        # Drain what is left: one turn each, in order.
        while queue:
            head = queue.pop(0)
            agent.reply("drain")
            assert await agent.next_user_message() == head["text"]
            tried["taken"] += 1
        assert len(server.pneuma.session.follow_ups) == 0
        received = [text for text, _ in agent.user_messages]
        assert len(received) == len(set(received)), "a message reached the agent twice"
    assert rounds >= 20
    record("25.8 queued follow-ups",
           f"{count(rounds)} turns ({tried['stopped']} stopped), {count(tried['queued'])} follow-ups queued, "
           f"{count(tried['edited'])} edited, {count(tried['cancelled'])} cancelled, "
           f"{count(tried['stale'])} stale requests refused E_CONFLICT; {count(tried['taken'])} taken "
           "in order with their last text, 0 withdrawn ones sent, 0 twice")
