"""The repair turn's rules: announced, then sent once after the delay;
cancelled by the person, superseded by their message, held while they type;
its text names every problem's file and line."""

from __future__ import annotations

import asyncio
from typing import Any

from pneuma.turn_checks.repair import Repairs, is_repair, repair_text

PROBLEMS = [{"message": "Parse error: expecting 'SEMI', got 'NEWLINE'", "file": "flow.mmd",
             "line": 3, "check": "parse"}]
TURN = {"ref": "2", "client_msg_id": "c1", "user_seq": 4, "user_timestamp": 1.0}


def _repairs(delay_s: float = 0.2, idle_s: float = 0.3) -> tuple[Repairs, list[dict[str, Any]], list[tuple[str, str]]]:
    emitted: list[dict[str, Any]] = []
    sent: list[tuple[str, str]] = []

    async def send(text: str, client_msg_id: str) -> None:
        sent.append((text, client_msg_id))

    return Repairs(emitted.append, send, delay_s=delay_s, idle_s=idle_s), emitted, sent


def test_the_text_names_file_line_and_message() -> None:
    text = repair_text(PROBLEMS, 3)
    assert "- flow.mmd:3: Parse error: expecting 'SEMI', got 'NEWLINE' [parse]" in text
    assert "… and 2 more" in text


def test_a_repair_is_announced_then_sent_once_with_a_repair_id() -> None:
    repairs, emitted, sent = _repairs()
    asyncio.run(repairs.offer(TURN, PROBLEMS, 1, lambda: True))
    assert [m["state"] for m in emitted] == ["pending", "sent"]
    assert emitted[0]["client_msg_id"] == "c1" and emitted[0]["seconds"] == 0.2
    assert len(sent) == 1 and is_repair(sent[0][1]) and "flow.mmd:3" in sent[0][0]


def test_cancel_and_a_new_message_stop_the_repair() -> None:
    async def cancelled() -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
        repairs, emitted, sent = _repairs(delay_s=5)
        offer = asyncio.ensure_future(repairs.offer(TURN, PROBLEMS, 1, lambda: True))
        await asyncio.sleep(0.05)
        assert repairs.pending is not None
        assert not repairs.cancel("repair-other")
        assert repairs.cancel(repairs.pending.id)
        await asyncio.wait_for(offer, 2)
        return emitted, sent

    emitted, sent = asyncio.run(cancelled())
    assert [m["state"] for m in emitted] == ["pending", "cancelled"] and sent == []

    current = [True]

    async def superseded() -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
        repairs, emitted, sent = _repairs(delay_s=5)
        offer = asyncio.ensure_future(repairs.offer(TURN, PROBLEMS, 1, lambda: current[0]))
        await asyncio.sleep(0.05)
        current[0] = False
        await asyncio.wait_for(offer, 2)
        return emitted, sent

    emitted, sent = asyncio.run(superseded())
    assert [m["state"] for m in emitted] == ["pending", "superseded"] and sent == []


def test_the_repair_waits_while_the_person_types() -> None:
    async def typing() -> tuple[list[dict[str, Any]], list[tuple[str, str]], float]:
        repairs, emitted, sent = _repairs(delay_s=0.1, idle_s=0.3)
        repairs.composer.update(True)  # text in the composer
        offer = asyncio.ensure_future(repairs.offer(TURN, PROBLEMS, 1, lambda: True))
        await asyncio.sleep(0.6)
        assert sent == []  # held: the composer has text
        loop = asyncio.get_running_loop()
        emptied = loop.time()
        repairs.composer.update(False)  # the person cleared it
        await asyncio.wait_for(offer, 3)
        return emitted, sent, loop.time() - emptied

    emitted, sent, waited = asyncio.run(typing())
    assert [m["state"] for m in emitted] == ["pending", "waiting", "sent"]
    assert len(sent) == 1 and waited >= 0.3  # sent once the composer was idle
