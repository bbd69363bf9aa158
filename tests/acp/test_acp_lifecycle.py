"""Stop, restart and resume with an ACP agent (the scripted peer)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from pneuma.server.persistence import load_session, open_conversation
from pneuma.server.session import Session
from tests.acp.conftest import MakeAcp
from tests.server.harness import seeded_slide_workspace

ASK = {"permission": {"toolCall": {"toolCallId": "w1", "title": "Write x", "kind": "edit"},
                      "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"}]}}


async def test_stop_cancels_the_turn_and_its_permission_card(make_acp: MakeAcp) -> None:
    acp = await make_acp({"turns": {"[ask]": [{"text": "Asking"}, ASK, {"wait_cancel": 10}],
                                    "[slow]": [{"text": "Working"}, {"wait_cancel": 10}]}},
                         permission_mode="default")
    tab = acp.tab
    await tab.say("[slow] job")
    await tab.wait_for("stream_event", 15, where=lambda m: m["event"].get("delta", {}).get("text")
                       == "Working")
    await tab.send({"type": "interrupt"})
    result = await acp.result()
    assert result["stop_reason"] == "cancelled" and result["is_error"]
    assert result["result"] == ""  # the page's "Stopped"
    assert acp.received("session/cancel")
    # A permission card open at Stop is withdrawn and answered "cancelled".
    await tab.say("[ask] job")
    card = (await tab.wait_for("permission_request", 15))["request"]
    await tab.send({"type": "interrupt"})
    cancelled = await tab.wait_for("permission_cancelled", 15)
    assert cancelled["request_id"] == card["request_id"]
    assert (await acp.result())["stop_reason"] == "cancelled"
    # The session goes on.
    await tab.say("after")
    assert (await acp.result())["result"] == "echo: after"
    await acp.close()


async def test_an_agent_that_ignores_stop_is_told_then_stopped(make_acp: MakeAcp) -> None:
    acp = await make_acp({"turns": {"[stubborn]": [{"ignore_cancel": 60}]}},
                         env={"PNEUMA_ACP_CANCEL_NOTICE": "0.3", "PNEUMA_ACP_CANCEL_KILL": "1"})
    tab = acp.tab
    await tab.say("[stubborn]")
    await acp.wait_received("session/prompt")
    await tab.send({"type": "interrupt"})
    notice = await tab.wait_for("error", 15, where=lambda m: m["code"] == "agent_slow_cancel")
    assert "has not stopped 0.3 s after Stop" in notice["message"]
    killed = await tab.wait_for("error", 15, where=lambda m: "did not stop its turn within 1 s"
                                in m["message"])
    assert killed["code"] == "agent_slow_cancel"
    result = await acp.result()
    assert result["stop_reason"] == "cancelled" and result["result"] == ""
    await tab.say("again")  # a new agent process
    assert (await acp.result())["result"] == "echo: again"
    assert len(acp.received("initialize")) == 2
    await acp.close()


async def test_a_restart_resumes_the_agent_session_with_session_load(
        make_acp: MakeAcp, tmp_path: Path) -> None:
    script = {"load_session": True, "turns": {"[recall]": [{"recall": True}]}}
    acp = await make_acp(script)
    await acp.tab.say("pineapple")
    assert (await acp.result())["result"] == "echo: pineapple"
    first_id = acp.server.session.agent_session_id
    assert first_id and first_id.startswith("peer-")
    await acp.close()
    stored = load_session(acp.workspace, "slide", "acp")
    assert stored.agent_session_id == first_id
    session = Session(stored.session_id, mode="slide", workspace=acp.workspace,
                      backend_name="acp", conversation=open_conversation(acp.workspace, stored),
                      last_seq=stored.last_seq, agent_session_id=stored.agent_session_id)
    again = await make_acp(script, workspace=acp.workspace, session=session)
    await again.tab.say("[recall]")
    result = await again.result()
    assert result["result"].startswith("recall: pineapple")
    assert again.received("session/load")[0]["params"]["sessionId"] == first_id
    assert not again.received("session/new")
    # The replayed conversation is the page's history already: not sent again.
    replayed = [m for m in again.tab.received if m.get("type") == "assistant"
                and "echo: pineapple" in str(m)]
    assert not replayed
    # The new reply is a message of its own, not merged into an earlier one.
    history = next(m for m in again.tab.received if m.get("type") == "message_history")
    old_ids = {m["message"]["id"] for m in history["messages"] if m.get("type") == "assistant"}
    new_ids = {m["message"]["id"] for m in again.tab.received if m.get("type") == "assistant"
               and "seq" in m}
    assert old_ids and new_ids and not old_ids & new_ids
    await again.close()


async def test_an_agent_without_load_session_starts_anew_and_says_so(
        make_acp: MakeAcp, tmp_path: Path) -> None:
    _mode, ws = seeded_slide_workspace(tmp_path)
    session = Session(str(uuid.uuid4()), mode="slide", workspace=ws, backend_name="acp",
                      agent_session_id="peer-gone")
    acp = await make_acp({"load_session": False}, workspace=ws, session=session)
    await acp.tab.say("hi")
    notice = await acp.tab.wait_for("error", 15, where=lambda m: m["code"] == "agent_notice")
    assert "cannot load sessions" in notice["message"]
    assert (await acp.result())["result"] == "echo: hi"
    assert acp.received("session/new") and not acp.received("session/load")
    assert acp.server.session.agent_session_id != "peer-gone"
    await acp.close()


async def test_closing_while_the_agent_starts_leaves_no_process(make_acp: MakeAcp) -> None:
    acp = await make_acp({"initialize": "hang"})
    await acp.tab.say("hello")
    await acp.wait_received("initialize")
    pid = acp.received("_started")[0]["pid"]
    await acp.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
