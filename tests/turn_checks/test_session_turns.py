"""The checks after every turn in a served session (fake agent, real
watcher): a turn that leaves a broken link gets a failing ``turn_checked``
naming the file and line, kept for a reload; with "repair" on exactly one
repair turn reaches the agent, holding the problem, and its own failure
starts no other; with "repair" off none does; a message of the person's
drops a pending repair."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from pneuma import hookimpl
from pneuma.api import CheckRequest, Problem, TurnCheck
from pneuma.host.registry import get_mode
from pneuma.testing import register_plugin
from pneuma.turn_checks.feature import FEATURE_NAME, TurnChecks

RESULT = {"type": "result", "data": {"subtype": "success", "is_error": False}}


async def _serve(make_server):  # type: ignore[no-untyped-def]
    server = await make_server(mode=get_mode("doc"), watch=True)
    feature = server.session.hooks.get(FEATURE_NAME)
    assert isinstance(feature, TurnChecks)
    feature.repairs.delay_s = 0.2  # the announced countdown, short for the test
    return server, feature


async def _turn_writes(server, tab, text: str, rel: str, content: str, n: int) -> None:  # type: ignore[no-untyped-def]
    await tab.say(text, client_msg_id=f"c{n}")
    await server.backend.wait_call("send_user_message", n)
    (server.workspace / rel).write_text(content, encoding="utf-8")
    await asyncio.sleep(0.3)  # the watcher's batch
    server.backend.emit(RESULT)


async def test_a_failed_turn_gets_one_repair_turn_and_the_repairs_own_failure_none(make_server) -> None:
    server, feature = await _serve(make_server)
    tab = await server.tab()
    await _turn_writes(server, tab, "write the guide", "guide.md",
                       "# Guide\n\nSee [setup](setup.md).\n", 1)
    checked = await tab.wait_for("turn_checked", timeout=20)
    assert checked["status"] == "failed" and checked["client_msg_id"] == "c1"
    assert [(p["file"], p["line"], p["check"]) for p in checked["problems"]] == [("guide.md", 3, "links")]
    assert checked["files"] == ["guide.md"]

    pending = await tab.wait_for("turn_repair", where=lambda m: m["state"] == "pending")
    assert pending["client_msg_id"] == "c1"
    calls = await server.backend.wait_call("send_user_message", 2, timeout=10)
    repair_text = calls[1][1]
    assert "guide.md:3" in repair_text and "setup.md" in repair_text
    # The repair turn fails again: shown, never repaired a second time.
    (server.workspace / "guide.md").write_text("# Guide\n\n![x](img.png)\n", encoding="utf-8")
    await asyncio.sleep(0.3)
    server.backend.emit(RESULT)
    second = await tab.wait_for("turn_checked", where=lambda m: m["repairTurn"], timeout=20)
    assert second["status"] == "failed"
    await asyncio.sleep(0.8)
    assert len(server.backend.calls_named("send_user_message")) == 2
    assert feature.repairs.sent == 1

    # Kept for a reload: in the workspace's state and in the conversation.
    kept = json.loads((server.workspace / ".pneuma" / "turn-checks.json").read_text())
    assert [r["status"] for r in kept["results"]] == ["failed", "failed"]
    listed = await (await server.get("/api/turn-checks")).json()
    assert listed["repair"] is True and listed["repairsSent"] == 1
    history = await (await server.tab()).full_history()
    assert [m["type"] for m in history if m["type"].startswith("turn_")].count("turn_checked") == 2


async def test_with_repair_off_no_repair_turn_goes_and_a_new_message_drops_a_pending_one(make_server) -> None:
    server, feature = await _serve(make_server)
    tab = await server.tab()
    answer = await server.put("/api/turn-checks/settings", json={"repair": False})
    assert answer.status == 200
    bad = await server.put("/api/turn-checks/settings", json={"repair": "yes"})
    assert bad.status == 400 and (await bad.json())["error"]["code"] == "E_BAD_ARGS"
    await _turn_writes(server, tab, "write it", "a.md", "[x](nowhere.md)\n", 1)
    checked = await tab.wait_for("turn_checked", timeout=20)
    assert checked["status"] == "failed"
    await asyncio.sleep(0.8)
    assert len(server.backend.calls_named("send_user_message")) == 1

    # Repair on again, a long countdown: the person's next message drops it.
    await server.put("/api/turn-checks/settings", json={"repair": True})
    feature.repairs.delay_s = 30
    await _turn_writes(server, tab, "again", "b.md", "[y](nowhere.md)\n", 2)
    pending = await tab.wait_for("turn_repair", where=lambda m: m["state"] == "pending", timeout=20)
    await tab.say("no, do this instead", client_msg_id="c3")
    dropped = await tab.wait_for("turn_repair", where=lambda m: m["state"] == "superseded")
    assert dropped["id"] == pending["id"]
    calls = await server.backend.wait_call("send_user_message", 3)
    assert "no, do this instead" in calls[2][1]
    missing = await server.post(f"/api/turn-checks/repair/{pending['id']}/cancel")
    assert missing.status == 404 and (await missing.json())["error"]["code"] == "E_NOT_FOUND"


async def test_a_turn_that_changed_nothing_checkable_is_not_badged(make_server, tmp_path: Path) -> None:
    server, feature = await _serve(make_server)
    tab = await server.tab()
    await tab.say("just talk", client_msg_id="c1")
    await server.backend.wait_call("send_user_message", 1)
    server.backend.emit(RESULT)
    await asyncio.sleep(0.8)
    assert feature.checked == 0
    assert not [m for m in await tab.drain() if m.get("type") == "turn_checked"]


class _SlowDocCheck:
    """A doc check that blocks until released: the next message must not wait for it."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def run(self, request: CheckRequest) -> list[Problem]:
        self.started.set()
        self.release.wait(15)
        return [Problem("slow and unhappy", file=request.changed[0], line=1)]

    @hookimpl
    def register_turn_checks(self) -> list[TurnCheck]:
        return [TurnCheck(mode="doc", name="slow", label="Slow", run=self.run)]


async def test_a_running_check_never_delays_the_next_message_nor_repairs_after_it(make_server) -> None:
    slow = _SlowDocCheck()
    with register_plugin(slow, "slow-doc-check"):
        server, feature = await _serve(make_server)
    tab = await server.tab()
    await _turn_writes(server, tab, "write it", "a.md", "# A\n", 1)
    assert await asyncio.to_thread(slow.started.wait, 10)
    started = asyncio.get_running_loop().time()
    await tab.say("next thing", client_msg_id="c2")
    await server.backend.wait_call("send_user_message", 2, timeout=5)
    assert asyncio.get_running_loop().time() - started < 1.0  # not held by the check
    slow.release.set()
    checked = await tab.wait_for("turn_checked", timeout=20)
    assert checked["status"] == "failed" and checked["client_msg_id"] == "c1"
    await asyncio.sleep(0.6)  # past the repair's countdown: none was offered
    assert feature.repairs.sent == 0 and feature.repairs.pending is None
    assert len(server.backend.calls_named("send_user_message")) == 2
