"""``W/.pneuma/session.json`` (ids, saved atomically) and the conversation
log ``conversation.db``: every message durable as it is broadcast, the next
run in the same workspace resumes the conversation, a long one stays small
in memory and reaches a new tab a page at a time."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from pneuma.core import files
from pneuma.server import session as session_module
from pneuma.server.conversation_log import ConversationLog
from pneuma.server.persistence import load_session, open_conversation, save_session
from pneuma.server.session import Session
from tests.stored_conversation import logged

# What the session records of a turn after its changes, from worker threads
# of their own (issue 28): its description in the mode's terms, its checks.
AFTER_THE_TURN = ("turn_described", "turn_checked")


def state_files(workspace):
    return sorted(p.name for p in (workspace / ".pneuma").iterdir())


def write_legacy_history(workspace, session_id, messages, last_seq=0):
    """A workspace as an earlier Pneuma left it: session.json + history.json."""
    save_session(workspace, session_id=session_id, mode="slide", backend="fake",
                 agent_session_id="cli-1", last_seq=last_seq)
    (workspace / ".pneuma" / "history.json").write_text(json.dumps(
        {"version": 1, "lastSeq": last_seq, "messages": messages}))


async def talk(server):
    tab = await server.tab()
    await tab.send({"type": "user_message", "content": "make a deck about tides",
                    "client_msg_id": "c1"})
    await server.backend.wait_call("send_user_message")
    server.backend.emit({"type": "stream_event", "event": {"delta": "Sure"}})
    server.backend.emit({"type": "assistant", "message": {
        "id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": "Sure."}]}})
    server.backend.emit({"type": "assistant", "message": {
        "id": "msg_1", "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": {}}]}})
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    server.session.set_agent_session_id("cli-session-42")
    # The end of the turn is recorded in a worker thread; its changes come
    # after, then the turn in the mode's terms (from a thread of its own).
    for _ in range(500):
        kinds = {m["type"] for m in server.session.history}
        if {"turn_changes", "turn_described"} <= kinds:
            break
        await asyncio.sleep(0.01)
    return tab


async def test_a_turn_that_ends_as_the_server_stops_keeps_what_it_changed(make_server):
    # The end of a turn is recorded in a worker thread and then logged; a
    # server stopping at that moment used to close the log under it (SQLite
    # then crashed the process). Now the stop waits for it: after a
    # restart the chat still shows what the turn changed.
    server = await make_server()
    tab = await server.tab()
    await tab.send({"type": "user_message", "content": "retitle the deck", "client_msg_id": "c1"})
    await server.backend.wait_call("send_user_message")
    slide = server.workspace / "slides" / "01-title.html"
    slide.write_text(slide.read_text() + "\n<h1>New title</h1>\n")
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    await server.close()  # at once: the turn's end is still being recorded
    # The turn in the mode's terms (turn_described) may follow its changes.
    records = [m for m in logged(server.workspace) if m["type"] not in AFTER_THE_TURN]
    kinds = [m["type"] for m in records]
    assert kinds[-1] == "turn_changes", kinds
    changes = records[-1]["changes"]
    assert changes["modified"] == ["slides/01-title.html"], changes


async def test_shutdown_saves_and_the_next_run_resumes(make_server):
    server = await make_server()
    await talk(server)
    history = json.loads(json.dumps(server.session.history))
    last_seq = server.session.seq
    await server.close()  # runs the app cleanup
    assert server.backend.stopped

    workspace = server.workspace
    meta = json.loads((workspace / ".pneuma" / "session.json").read_text())
    assert meta["sessionId"] == server.session.id
    assert meta["agentSessionId"] == "cli-session-42"
    assert meta["mode"] == "slide" and meta["backend"] == "fake"
    assert logged(workspace) == history
    # The turn's checkpoint follows the message that started it, once stored
    # while the agent works (docs/checkpoints.md, "Turns are never held
    # up"); what the turn changed follows its result.
    kinds = [m["type"] for m in history if m["type"] not in AFTER_THE_TURN]
    assert kinds[0] == "user_message" and kinds[-1] == "turn_changes", kinds
    assert sorted(kinds[1:-1]) == ["assistant", "result", "turn_checkpoint"], kinds
    assistant = next(m for m in history if m["type"] == "assistant")
    assert len(assistant["message"]["content"]) == 2  # merged, not two entries
    assert not [n for n in state_files(workspace) if n.endswith(".tmp")]
    # Closed cleanly: the log is one file again, no WAL left beside it.
    assert "conversation.db-wal" not in state_files(workspace)

    stored = load_session(workspace, "slide", "fake")
    assert stored.resumed
    assert stored.session_id == server.session.id
    assert stored.agent_session_id == "cli-session-42"
    assert stored.last_seq == last_seq

    # A second server on the same workspace shows the conversation and
    # keeps counting where the first one stopped.
    session = Session(stored.session_id, mode="slide", workspace=workspace,
                      backend_name="fake", conversation=open_conversation(workspace, stored),
                      last_seq=stored.last_seq, agent_session_id=stored.agent_session_id)
    again = await make_server(workspace=workspace, session=session, seed=False)
    assert again.backend.options.agent_session_id == "cli-session-42"
    assert again.backend.options.greeting is None  # not a fresh session
    tab = await again.tab(subscribe=False)
    replay = await tab.subscribe(0)
    assert replay["messages"] == history
    assert replay["has_more"] is False
    again.backend.emit({"type": "stream_event", "event": {}})
    assert (await tab.wait_for("stream_event"))["seq"] == last_seq + 1
    # The same client_msg_id after a restart is not a duplicate of anything
    # this run has seen, but the history still holds the first one once.
    assert [m["content"] for m in replay["messages"] if m["type"] == "user_message"] == [
        "make a deck about tides"]


async def test_a_fresh_session_gets_the_greeting(make_server):
    server = await make_server()
    assert server.backend.options.greeting  # the slide manifest has one
    assert server.backend.options.agent_session_id is None


async def test_each_message_is_in_the_log_as_it_is_broadcast(make_server):
    # No periodic save runs (save_interval is an hour): what a kill -9
    # would leave is what the log already holds.
    server = await make_server()
    tab = await server.tab()
    for i in range(3):
        await tab.send({"type": "user_message", "content": f"note {i}", "client_msg_id": f"c{i}"})
        await tab.wait_for("user_message")
        assert [m["content"] for m in logged(server.workspace) if m["type"] == "user_message"] \
            == [f"note {n}" for n in range(i + 1)]
        # The turn ends, or the next message would wait in the queue (follow_ups.py).
        server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    # The blocks of one assistant message are one row, updated in place.
    for text in ("one", "two"):
        server.backend.emit({"type": "assistant", "message": {
            "id": "m1", "role": "assistant", "content": [{"type": "text", "text": text}]}})
    assistants = [m for m in logged(server.workspace) if m["type"] == "assistant"]
    assert [[b["text"] for b in m["message"]["content"]] for m in assistants] == [["one", "two"]]


async def test_a_turns_long_text_is_kept_once(make_server):
    server = await make_server()
    tab = await server.tab()
    text = "tide " * 5000
    server.backend.emit({"type": "assistant", "message": {
        "id": "m1", "role": "assistant", "content": [{"type": "text", "text": text}]}})
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False,
                                                    "result": text, "num_turns": 1}})
    live = await tab.wait_for("result")
    assert live["data"]["result"] == text  # the live tab gets it as the agent sent it
    stored = [m for m in logged(server.workspace) if m["type"] == "result"][0]
    assert "result" not in stored["data"]
    assert stored["data"]["result_length"] == len(text)
    assert stored["data"]["num_turns"] == 1
    short = {"subtype": "error_during_execution", "is_error": True, "result": "Prompt is too long"}
    server.backend.emit({"type": "result", "data": short})
    assert [m for m in logged(server.workspace) if m["type"] == "result"][-1]["data"] == short


async def test_a_long_conversation_reaches_a_new_tab_in_pages(make_server, monkeypatch):
    monkeypatch.setattr(session_module, "HISTORY_PAGE_BYTES", 3000)
    server = await make_server()
    server.session._window_limit = 4000  # a small window: most is only in the log
    for i in range(200):
        server.backend.emit({"type": "system_note", "text": f"note {i:03} " + "x" * 40})
    tab = await server.tab(subscribe=False)
    first = await tab.subscribe(0)
    assert first["has_more"] is True
    assert 0 < len(first["messages"]) < 200
    assert sum(len(json.dumps(m)) for m in first["messages"]) <= 4000 + 200
    notes = [m["text"] for m in first["messages"]]
    before = first["before"]
    pages = 0
    while before is not None:
        await tab.send({"type": "history_page", "before": before})
        page = await tab.wait_for("history_page")
        notes = [m["text"] for m in page["messages"]] + notes
        pages += 1
        before = page["before"] if page["has_more"] else None
    assert notes == [f"note {i:03} " + "x" * 40 for i in range(200)]
    assert pages >= 3
    # Live messages keep flowing to the tab meanwhile, in order.
    server.backend.emit({"type": "system_note", "text": "after"})
    assert (await tab.wait_for("system_note"))["text"] == "after"


async def test_a_bad_history_page_request_gets_an_error_not_a_disconnect(make_server):
    server = await make_server()
    tab = await server.tab()
    server.backend.emit({"type": "system_note", "text": "only"})
    for before in (-1, 10**30, "x"):
        await tab.send({"type": "history_page", "before": before})
        assert (await tab.wait_for("error"))["code"] == "bad_message"
        tab.received.clear()
    # Any row id in range is a fine cursor: "before the end" is everything.
    await tab.send({"type": "history_page", "before": 2**63 - 1})
    page = await tab.wait_for("history_page")
    assert [m["text"] for m in page["messages"]] == ["only"]
    assert page["has_more"] is False


def test_memory_holds_a_window_not_the_conversation(tmp_path):
    conversation = ConversationLog.open(tmp_path / ".pneuma")
    session = Session("s1", mode="slide", workspace=tmp_path, backend_name="none",
                      conversation=conversation)
    for i in range(2000):
        session.emit({"type": "user_message", "content": f"turn {i} " + "y" * 2000})
    assert session._window_bytes <= session_module.HISTORY_WINDOW_BYTES
    assert len(session.history) < 2000
    assert session.history[-1]["content"].startswith("turn 1999 ")
    conversation.close()
    assert len(logged(tmp_path)) == 2000


def test_an_older_history_json_is_imported_once(tmp_path):
    messages = [{"type": "user_message", "content": "hello", "seq": 1},
                {"type": "assistant", "message": {"id": "m1", "content": [
                    {"type": "text", "text": "hi"}]}, "seq": 2},
                {"type": "result", "data": {"subtype": "success"}, "seq": 3}]
    write_legacy_history(tmp_path, "s1", messages, last_seq=3)
    stored = load_session(tmp_path, "slide", "fake")
    conversation = open_conversation(tmp_path, stored)
    assert (tmp_path / ".pneuma" / "history.json.imported").exists()
    assert not (tmp_path / ".pneuma" / "history.json").exists()
    session = Session("s1", mode="slide", workspace=tmp_path, backend_name="fake",
                      conversation=conversation, last_seq=stored.last_seq)
    assert session.history == messages
    # The merged assistant message keeps its id: its next block updates it.
    session.emit({"type": "assistant", "message": {"id": "m1", "content": [
        {"type": "text", "text": "there"}]}})
    conversation.close()
    assert [b["text"] for b in logged(tmp_path)[1]["message"]["content"]] == ["hi", "there"]
    # A second start finds nothing to import and the log as it was.
    stored = load_session(tmp_path, "slide", "fake")
    again = open_conversation(tmp_path, stored)
    assert len(Session("s1", mode="slide", workspace=tmp_path, backend_name="fake",
                       conversation=again).history) == 3
    again.close()


def test_a_damaged_log_is_moved_aside_and_a_new_one_started(tmp_path, caplog):
    (tmp_path / ".pneuma").mkdir()
    (tmp_path / ".pneuma" / "conversation.db").write_bytes(b"not a database " * 100)
    with caplog.at_level(logging.WARNING):
        conversation = ConversationLog.open(tmp_path / ".pneuma")
    [backup] = (tmp_path / ".pneuma").glob("conversation.db.corrupt-*")
    assert backup.read_bytes().startswith(b"not a")
    session = Session("s1", mode="slide", workspace=tmp_path, backend_name="none",
                      conversation=conversation)
    session.emit({"type": "user_message", "content": "still works"})
    conversation.close()
    assert [m["content"] for m in logged(tmp_path)] == ["still works"]
    assert any("conversation.db" in r.getMessage() for r in caplog.records
               if r.levelno == logging.WARNING)


def test_the_log_is_the_owners_alone(tmp_path):
    conversation = ConversationLog.open(tmp_path / ".pneuma")
    Session("s1", mode="slide", workspace=tmp_path, backend_name="none",
            conversation=conversation).emit({"type": "user_message", "content": "x"})
    for name in ("conversation.db", "conversation.db-wal"):
        assert (tmp_path / ".pneuma" / name).stat().st_mode & 0o777 == 0o600
    conversation.close()


def test_writes_are_atomic(tmp_path, monkeypatch):
    workspace = tmp_path
    save_session(workspace, session_id="s1", mode="slide", backend="fake",
                 agent_session_id=None, last_seq=1)
    before = (workspace / ".pneuma" / "session.json").read_bytes()

    def disk_full(fd: int) -> None:
        raise OSError("disk full")  # the new content is in the temp file, not yet renamed

    monkeypatch.setattr(files.os, "fsync", disk_full)
    with pytest.raises(OSError):
        save_session(workspace, session_id="s1", mode="slide", backend="fake",
                     agent_session_id=None, last_seq=2)
    assert (workspace / ".pneuma" / "session.json").read_bytes() == before
    assert state_files(workspace) == ["session.json"]


def test_state_files_are_the_owners_alone(tmp_path):
    save_session(tmp_path, session_id="s1", mode="slide", backend="fake",
                 agent_session_id=None, last_seq=1)
    assert (tmp_path / ".pneuma" / "session.json").stat().st_mode & 0o777 == 0o600


def test_a_corrupt_history_is_moved_aside_with_a_warning(tmp_path, caplog):
    write_legacy_history(tmp_path, "s1", [{"type": "user_message"}], last_seq=3)
    (tmp_path / ".pneuma" / "history.json").write_text('{"messages": [{"ty')
    with caplog.at_level(logging.WARNING):
        stored = load_session(tmp_path, "slide", "fake")
    assert stored.session_id == "s1"  # the session itself is kept
    assert stored.agent_session_id == "cli-1"
    assert stored.history == []
    assert (tmp_path / ".pneuma" / "history.json.corrupt").read_text() == '{"messages": [{"ty'
    assert not (tmp_path / ".pneuma" / "history.json").exists()
    assert any("history.json" in r.getMessage() for r in caplog.records
               if r.levelno == logging.WARNING)


@pytest.mark.parametrize("content", ['{"sessionId": ', "[]", '"x"', "\xff\xfe",
                                     '{"sessionId": 5, "mode": "slide", "backend": "fake"}'])
def test_a_corrupt_session_file_starts_a_new_session(tmp_path, content):
    (tmp_path / ".pneuma").mkdir()
    (tmp_path / ".pneuma" / "session.json").write_text(content, encoding="latin-1")
    stored = load_session(tmp_path, "slide", "fake")
    assert not stored.resumed
    assert stored.history == []


def test_odd_history_shapes_do_not_crash(tmp_path):
    for content in ('{"messages": {"a": 1}}', '[1, 2]', '{"messages": [1, {"type": "x"}]}',
                    '{"messages": [], "lastSeq": "many"}',
                    '{"messages": [{"type": 5}, {"type": "assistant", "message": []}]}'):
        write_legacy_history(tmp_path, "s1", [])
        (tmp_path / ".pneuma" / "history.json").write_text(content)
        stored = load_session(tmp_path, "slide", "fake")
        assert stored.session_id == "s1"
        assert all(isinstance(m, dict) for m in stored.history)
        open_conversation(tmp_path, stored).close()


def test_a_different_mode_or_backend_gets_a_new_session(tmp_path):
    save_session(tmp_path, session_id="s1", mode="slide", backend="claude-code",
                 agent_session_id="cli-1", last_seq=3)
    assert load_session(tmp_path, "slide", "claude-code").session_id == "s1"
    for mode, backend in (("doc", "claude-code"), ("slide", "codex")):
        stored = load_session(tmp_path, mode, backend)
        assert stored.session_id != "s1"
        assert not stored.resumed
        assert stored.agent_session_id is None and stored.history == []


def test_a_lone_surrogate_in_the_conversation_is_saved_and_read_back(tmp_path):
    # An agent can send "\ud800" as a JSON escape; it has no UTF-8 form.
    conversation = ConversationLog.open(tmp_path / ".pneuma")
    session = Session("s1", mode="slide", workspace=tmp_path, backend_name="none",
                      conversation=conversation)
    session.emit({"type": "user_message", "content": "bad \ud800 half"})
    session.emit({"type": "assistant", "message": {"id": "m", "content": "日本語"}})
    expected = session.history
    conversation.close()
    assert logged(tmp_path) == expected
    assert expected[0]["content"] == "bad \ud800 half"
    again = ConversationLog.open(tmp_path / ".pneuma")
    assert Session("s1", mode="slide", workspace=tmp_path, backend_name="none",
                   conversation=again).history == expected
    again.close()


async def test_periodic_saves_happen_while_serving_and_the_last_one_wins(make_server):
    server = await make_server(save_interval=0.05)
    server.session.set_agent_session_id("cli-1")
    for _ in range(200):  # saved in the background, without a shutdown
        meta_file = server.workspace / ".pneuma" / "session.json"
        if json.loads(meta_file.read_text()).get("agentSessionId") == "cli-1":
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the agent's session id was never saved while the server ran")
    server.session.set_agent_session_id("cli-2")
    await server.close()
    assert json.loads((server.workspace / ".pneuma" / "session.json").read_text())[
        "agentSessionId"] == "cli-2"
