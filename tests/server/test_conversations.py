"""Several conversations per workspace (issue 16, item 2; docs/conversations.md).

A served session with the fake agent: a new conversation, switching back
(the agent restarted resuming that conversation's own agent session),
history per conversation, every tab following a switch, the refusal while
a turn runs, rename, delete, a restart resuming the current conversation,
an older single-conversation workspace opening intact, and
``pneuma conversations list``.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from pneuma.checkpoints import Checkpoints
from pneuma.server import session as session_module
from pneuma.server.conversations import read_conversations
from pneuma.server.persistence import load_session, open_conversation, save_session
from pneuma.server.session import Session
from tests.server.conftest import Server
from tests.server.test_seq_after_crash import Run, messages, restarted_history, say, tab
from tests.stored_conversation import logged

PNEUMA = str(Path(sys.executable).with_name("pneuma"))


async def turn(server: Server, tab: Any, text: str, reply: str) -> None:
    """The person says ``text``, the current agent answers ``reply``."""
    agent = server.built[-1]
    await tab.say(text)
    assert (await agent.next_user_message()).endswith(text)
    agent.reply(reply)
    await tab.wait_for("result")


def texts(messages: list[dict[str, Any]]) -> list[str]:
    """What the person and the agent said, in order."""
    out = []
    for m in messages:
        if m["type"] == "user_message":
            out.append(m["content"])
        elif m["type"] == "assistant":
            out.extend(b["text"] for b in m["message"]["content"] if b.get("type") == "text")
    return out


async def listing(tab: Any) -> dict[str, Any]:
    await tab.send({"type": "conversation_list"})
    return await tab.wait_for("conversations", where=lambda m: "seq" not in m)


async def test_a_new_conversation_then_back_to_the_first(make_server):
    server = await make_server()
    first_id = server.session.conversation_id
    tab, other_tab = await server.tab(), await server.tab()
    await turn(server, tab, "Make a deck about   tides and the moon", "Tides it is.")
    server.session.set_agent_session_id("cli-first")

    await tab.send({"type": "conversation_new"})
    switched = await tab.wait_for("conversation_switched")
    followed = await other_tab.wait_for("conversation_switched")
    assert followed["seq"] == switched["seq"]
    second_id = switched["conversation"]["id"]
    assert second_id != first_id and switched["messages"] == []
    assert [c["id"] for c in switched["conversations"] if c["current"]] == [second_id]
    # The agent was stopped and a fresh one started: no resume, the greeting.
    assert server.built[0].stopped
    assert len(server.built) == 2
    assert server.built[1].options.agent_session_id is None
    assert server.built[1].options.greeting

    await turn(server, other_tab, "A poem about rivers", "Rivers flow.")
    server.session.set_agent_session_id("cli-second")
    listed = {c["id"]: c for c in (await listing(tab))["conversations"]}
    assert listed[first_id]["title"] == "Make a deck about tides and the moon"
    assert listed[second_id]["title"] == "A poem about rivers"
    assert listed[first_id]["messages"] == listed[second_id]["messages"] == 2
    assert listed[second_id]["current"] and not listed[first_id]["current"]

    # A model picked in the page stays picked across the switch.
    await tab.send({"type": "set_model", "model": "claude-picked-model"})
    await tab.wait_for("session_update")
    await other_tab.send({"type": "conversation_switch", "conversation_id": first_id})
    back = await tab.wait_for("conversation_switched")
    assert server.built[2].options.model == "claude-picked-model"
    assert texts(back["messages"]) == ["Make a deck about   tides and the moon", "Tides it is."]
    assert back["conversation"] == {"id": first_id,
                                    "title": "Make a deck about tides and the moon"}
    # Resumed: the first conversation's own agent session, no greeting.
    assert server.built[1].stopped
    assert server.built[2].options.agent_session_id == "cli-first"
    assert server.built[2].options.greeting is None
    assert server.session.agent_session_id == "cli-first"
    # A tab opened now sees the first conversation only, and which one it is.
    late = await server.tab(subscribe=False)
    history = await late.subscribe(0)
    assert history["conversation"]["id"] == first_id
    assert texts(history["messages"]) == texts(back["messages"])
    await turn(server, late, "Add a slide on spring tides", "Added.")
    assert texts(logged(server.workspace, first_id))[-2:] == ["Add a slide on spring tides",
                                                              "Added."]
    assert texts(logged(server.workspace, second_id)) == ["A poem about rivers", "Rivers flow."]
    # Each turn's checkpoint names the conversation it belongs to (stored
    # while the agent works: the session's background work is let finish).
    await server.session.settle()
    recorded = [c.conversation for c in Checkpoints.open_existing(server.workspace).checkpoints()
                if c.kind == "turn"]
    assert recorded == [first_id, second_id, first_id]


async def test_history_pages_are_those_of_the_current_conversation(make_server, monkeypatch,
                                                                   tmp_path):
    monkeypatch.setattr(session_module, "HISTORY_PAGE_BYTES", 2000)
    workspace = tmp_path / "paged"
    session = Session("s-paged", mode="slide", workspace=workspace.resolve(),
                      backend_name="fake", history_window_bytes=1500)
    server = await make_server(workspace=workspace, session=session)
    tab = await server.tab()
    said = []
    for i in range(12):
        await turn(server, tab, f"first conversation, message {i} " + "x" * 100, f"ok {i}")
        said += [f"first conversation, message {i} " + "x" * 100, f"ok {i}"]
    await tab.send({"type": "conversation_new"})
    await tab.wait_for("conversation_switched")
    for i in range(3):
        await turn(server, tab, f"second {i}", f"fine {i}")
    await tab.send({"type": "conversation_switch", "conversation_id": "s-paged"})
    back = await tab.wait_for("conversation_switched")
    assert back["has_more"] is True  # the window holds only the newest part
    assert texts(await tab.full_history()) == said


async def test_tabs_that_missed_the_switch_get_the_new_history(server):
    tab = await server.tab()
    await turn(server, tab, "hello", "hi")
    long_away = await server.tab()
    await long_away.close()
    server.built[0].emit({"type": "stream_event", "event": {"type": "ping"}})
    await tab.send({"type": "conversation_new"})
    switched = await tab.wait_for("conversation_switched")
    await turn(server, tab, "new topic", "sure")

    # Its last_seq is older than the switch: not a replay of the other
    # conversation's events but the new one's history (numbers only grow).
    again = await server.tab(last_seq=long_away.last_seq)
    history = await again.recv()
    assert history["type"] == "message_history"
    assert history["conversation"]["id"] == switched["conversation"]["id"]
    assert texts(history["messages"]) == ["new topic", "sure"]
    assert history["last_seq"] == server.session.seq > switched["seq"] > long_away.last_seq
    # Gone just before the switch (it saw everything up to it): the switch
    # itself is replayed (it carries the history), then what followed it.
    again = await server.tab(last_seq=switched["seq"] - 1)
    replayed = [m for m in await again.drain() if "seq" in m]
    assert replayed[0] == switched
    assert texts([m for m in replayed if m["type"] in ("user_message", "assistant")]) == [
        "new topic", "sure"]


async def test_switching_is_refused_while_a_turn_runs(server):
    tab = await server.tab()
    await tab.say("long task")
    await server.built[0].next_user_message()
    await tab.send({"type": "conversation_new"})
    refused = await tab.wait_for("error")
    assert refused["code"] == "turn_running" and "interrupt" in refused["message"]
    assert len(server.built) == 1 and not server.built[0].stopped
    assert len((await listing(tab))["conversations"]) == 1
    server.built[0].reply("done")
    await tab.wait_for("result")
    await tab.send({"type": "conversation_new"})
    await tab.wait_for("conversation_switched")
    assert len(server.built) == 2


async def test_rename_and_delete(server):
    tab, other = await server.tab(), await server.tab()
    first = server.session.conversation_id
    await turn(server, tab, "tides", "ok")
    await tab.send({"type": "conversation_new"})
    second = (await tab.wait_for("conversation_switched"))["conversation"]["id"]
    await turn(server, tab, "rivers", "ok")
    await tab.send({"type": "conversation_new"})
    third = (await tab.wait_for("conversation_switched"))["conversation"]["id"]

    await tab.send({"type": "conversation_rename", "conversation_id": first,
                    "title": "  Tides\n deck  "})
    renamed = await other.wait_for("conversations")
    assert {c["id"]: c["title"] for c in renamed["conversations"]}[first] == "Tides deck"
    await tab.send({"type": "conversation_rename", "conversation_id": first, "title": "  "})
    assert (await tab.wait_for("error"))["code"] == "bad_message"
    await tab.send({"type": "conversation_switch", "conversation_id": "nope"})
    assert (await tab.wait_for("error"))["code"] == "unknown_conversation"

    # A conversation that is not current goes, with its messages.
    await tab.send({"type": "conversation_delete", "conversation_id": second})
    after = await other.wait_for("conversations")
    assert [c["id"] for c in after["conversations"]] == [third, first]
    assert logged(server.workspace, second) == []
    # The current one: the most recent other becomes current.
    await turn(server, tab, "clouds", "ok")
    await tab.send({"type": "conversation_delete", "conversation_id": third})
    switched = await other.wait_for("conversation_switched")
    assert switched["conversation"] == {"id": first, "title": "Tides deck"}
    assert [c["id"] for c in switched["conversations"]] == [first]
    assert texts(switched["messages"]) == ["tides", "ok"]
    assert logged(server.workspace, third) == []
    # The last one: a fresh conversation takes its place.
    await tab.send({"type": "conversation_delete", "conversation_id": first})
    fresh = await other.wait_for("conversation_switched")
    assert fresh["messages"] == [] and fresh["conversation"]["id"] not in (first, second, third)
    assert [c["id"] for c in fresh["conversations"]] == [fresh["conversation"]["id"]]
    assert logged(server.workspace) == []


async def restart(make_server, server: Server) -> Server:
    await server.close()
    stored = load_session(server.workspace, "slide", "fake")
    session = Session(stored.session_id, mode="slide", workspace=server.workspace,
                      backend_name="fake", conversation=open_conversation(server.workspace, stored),
                      last_seq=stored.last_seq, agent_session_id=stored.agent_session_id,
                      conversation_id=stored.conversation_id)
    return await make_server(workspace=server.workspace, session=session, seed=False)


async def test_a_restart_resumes_the_current_conversation(make_server):
    server = await make_server()
    tab = await server.tab()
    await turn(server, tab, "tides", "ok")
    server.session.set_agent_session_id("cli-first")
    await tab.send({"type": "conversation_new"})
    second = (await tab.wait_for("conversation_switched"))["conversation"]["id"]
    await turn(server, tab, "rivers", "flowing")
    server.session.set_agent_session_id("cli-second")
    last_seq = server.session.seq

    again = await restart(make_server, server)
    assert again.session.id == server.session.id  # same URL, same session
    assert again.session.conversation_id == second
    assert again.built[0].options.agent_session_id == "cli-second"
    tab = await again.tab(subscribe=False)
    history = await tab.subscribe(0)
    assert texts(history["messages"]) == ["rivers", "flowing"]
    assert history["conversation"] == {"id": second, "title": "rivers"}
    assert history["last_seq"] >= last_seq

    out = subprocess.run([PNEUMA, "conversations", "list", "-w", str(again.workspace), "--json"],
                         capture_output=True, text=True, check=True)
    rows = json.loads(out.stdout)["conversations"]
    assert [(r["title"], r["messages"], r["current"]) for r in rows] == [
        ("rivers", 2, True), ("tides", 2, False)]
    assert rows[0]["last_message"] == {"role": "assistant", "text": "flowing"}
    plain = subprocess.run([PNEUMA, "conversations", "list", "-w", str(again.workspace)],
                           capture_output=True, text=True, check=True).stdout
    assert f"* {second}" in plain and "tides" in plain


def old_workspace(workspace: Path) -> None:
    """A workspace as the Pneuma before several conversations left it: a
    log with one conversation and no list, session.json without
    conversationId."""
    state = workspace / ".pneuma"
    state.mkdir(parents=True)
    db = sqlite3.connect(state / "conversation.db")
    db.executescript("""
        CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,
            seq INTEGER NOT NULL, kind TEXT NOT NULL, message_id TEXT, body TEXT NOT NULL);
        CREATE INDEX messages_by_session ON messages (session_id, id);
        PRAGMA user_version=1;
    """)
    bodies = [
        ("user_message", None, {"type": "user_message", "content": "An old deck about bees",
                                "timestamp": 1_700_000_000.0, "seq": 1}),
        ("assistant", "m1", {"type": "assistant", "seq": 2, "message": {
            "id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Buzz."}]}}),
        ("result", None, {"type": "result", "seq": 3, "data": {"subtype": "success"}}),
    ]
    db.executemany("INSERT INTO messages (session_id, seq, kind, message_id, body)"
                   " VALUES ('old-session', ?, ?, ?, ?)",
                   [(b["seq"], kind, mid, json.dumps(b)) for kind, mid, b in bodies])
    db.commit()
    db.close()
    save_session(workspace, session_id="old-session", mode="slide", backend="fake",
                 agent_session_id="cli-old", last_seq=3)


async def test_an_old_single_conversation_workspace_opens_intact(make_server, tmp_path):
    workspace = (tmp_path / "old").resolve()
    workspace.mkdir()
    old_workspace(workspace)
    # Read-only first (a launcher, the CLI): listed without migrating anything.
    [summary] = read_conversations(workspace)
    assert (summary.id, summary.title, summary.messages, summary.current) == (
        "old-session", "An old deck about bees", 2, True)
    db = sqlite3.connect(workspace / ".pneuma" / "conversation.db")
    assert db.execute("SELECT name FROM sqlite_master WHERE name = 'conversations'").fetchall() == []
    db.close()

    stored = load_session(workspace, "slide", "fake")
    session = Session(stored.session_id, mode="slide", workspace=workspace, backend_name="fake",
                      conversation=open_conversation(workspace, stored),
                      last_seq=stored.last_seq, agent_session_id=stored.agent_session_id,
                      conversation_id=stored.conversation_id)
    server = await make_server(workspace=workspace, session=session)
    assert server.built[0].options.agent_session_id == "cli-old"
    tab = await server.tab(subscribe=False)
    history = await tab.subscribe(0)
    assert texts(history["messages"]) == ["An old deck about bees", "Buzz."]
    assert history["conversation"] == {"id": "old-session", "title": "An old deck about bees"}
    [entry] = (await listing(tab))["conversations"]
    assert (entry["id"], entry["messages"], entry["current"]) == ("old-session", 2, True)
    assert entry["created"] == 1_700_000_000.0
    # The first conversation keeps the session.json it always had.
    await server.close()
    meta = json.loads((workspace / ".pneuma" / "session.json").read_text())
    assert "conversationId" not in meta and meta["agentSessionId"] == "cli-old"


def test_the_listing_for_a_launcher_imports_no_server():
    # A launcher lists many workspaces without serving any: the function
    # must stay cheap to import.
    code = ("import sys; from pneuma.server.conversations import read_conversations; "
            "print(sorted(m for m in ('aiohttp', 'pydantic', 'pneuma.server.session')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_a_real_run_resumes_the_conversation_switched_to_even_after_a_kill_9(tmp_path):
    workspace = tmp_path / "deck"
    workspace.mkdir()
    run = Run(workspace)
    try:
        await say(run, "first topic")
        async with tab(run, 0) as ws:
            await ws.send_str(json.dumps({"type": "conversation_new"}))
            async for message in messages(ws):
                if message["type"] == "conversation_switched":
                    switched_to = message["conversation"]["id"]
                    break
        await say(run, "second topic")
        # The switch was saved at once: no periodic save is needed for it.
        run.proc.send_signal(signal.SIGKILL)
        run.proc.wait()
    finally:
        run.proc.kill()
        run.proc.wait()

    again, history = await restarted_history(workspace)
    assert again.session_id == run.session_id
    assert history["conversation"] == {"id": switched_to, "title": "second topic"}
    assert [m["content"] for m in history["messages"] if m["type"] == "user_message"] == [
        "second topic"]
    assert [(c.title, c.current) for c in read_conversations(workspace)] == [
        ("second topic", True), ("first topic", False)]
