"""``W/.pneuma/session.json`` and ``history.json``: saved atomically, and
the next run in the same workspace resumes the conversation."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from pneuma.tools import files
from pneuma.server.persistence import load_session, save_session
from pneuma.server.session import Session


def state_files(workspace):
    return sorted(p.name for p in (workspace / ".pneuma").iterdir())


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
    return tab


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
    saved = json.loads((workspace / ".pneuma" / "history.json").read_text())
    assert saved["messages"] == history
    assert [m["type"] for m in history] == ["user_message", "assistant", "result"]
    assert len(history[1]["message"]["content"]) == 2  # merged, not two entries
    assert not [n for n in state_files(workspace) if n.endswith(".tmp")]

    stored = load_session(workspace, "slide", "fake")
    assert stored.resumed
    assert stored.session_id == server.session.id
    assert stored.agent_session_id == "cli-session-42"
    assert stored.history == history
    assert stored.last_seq == last_seq

    # A second server on the same workspace shows the conversation and
    # keeps counting where the first one stopped.
    session = Session(stored.session_id, mode="slide", workspace=workspace,
                      backend_name="fake", history=stored.history,
                      last_seq=stored.last_seq, agent_session_id=stored.agent_session_id)
    again = await make_server(workspace=workspace, session=session, seed=False)
    assert again.backend.options.agent_session_id == "cli-session-42"
    assert again.backend.options.greeting is None  # not a fresh session
    tab = await again.tab(subscribe=False)
    replay = await tab.subscribe(0)
    assert replay["messages"] == history
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


def test_writes_are_atomic(tmp_path, monkeypatch):
    workspace = tmp_path
    save_session(workspace, session_id="s1", mode="slide", backend="fake",
                 agent_session_id=None, last_seq=1, history=[{"type": "user_message"}])
    before = (workspace / ".pneuma" / "history.json").read_bytes()

    def disk_full(fd: int) -> None:
        raise OSError("disk full")  # the new content is in the temp file, not yet renamed

    monkeypatch.setattr(files.os, "fsync", disk_full)
    with pytest.raises(OSError):
        save_session(workspace, session_id="s1", mode="slide", backend="fake",
                     agent_session_id=None, last_seq=2, history=[])
    assert (workspace / ".pneuma" / "history.json").read_bytes() == before
    assert state_files(workspace) == ["history.json", "session.json"]


def test_state_files_are_the_owners_alone(tmp_path):
    save_session(tmp_path, session_id="s1", mode="slide", backend="fake",
                 agent_session_id=None, last_seq=1, history=[{"type": "user_message"}])
    for name in ("history.json", "session.json"):
        assert (tmp_path / ".pneuma" / name).stat().st_mode & 0o777 == 0o600


def test_a_corrupt_history_is_moved_aside_with_a_warning(tmp_path, caplog):
    save_session(tmp_path, session_id="s1", mode="slide", backend="fake",
                 agent_session_id="cli-1", last_seq=3, history=[{"type": "user_message"}])
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
    save_session(tmp_path, session_id="s1", mode="slide", backend="fake",
                 agent_session_id=None, last_seq=3, history=[])
    for content in ('{"messages": {"a": 1}}', '[1, 2]', '{"messages": [1, {"type": "x"}]}',
                    '{"messages": [], "lastSeq": "many"}'):
        (tmp_path / ".pneuma" / "history.json").write_text(content)
        stored = load_session(tmp_path, "slide", "fake")
        assert stored.session_id == "s1"
        assert all(isinstance(m, dict) for m in stored.history)


def test_a_different_mode_or_backend_gets_a_new_session(tmp_path):
    save_session(tmp_path, session_id="s1", mode="slide", backend="claude-code",
                 agent_session_id="cli-1", last_seq=3, history=[{"type": "user_message"}])
    assert load_session(tmp_path, "slide", "claude-code").session_id == "s1"
    for mode, backend in (("doc", "claude-code"), ("slide", "none")):
        stored = load_session(tmp_path, mode, backend)
        assert stored.session_id != "s1"
        assert not stored.resumed
        assert stored.agent_session_id is None and stored.history == []


def test_a_lone_surrogate_in_the_conversation_is_saved_and_read_back(tmp_path):
    # An agent can send "\ud800" as a JSON escape; it has no UTF-8 form.
    history = [{"type": "user_message", "content": "bad \ud800 half", "seq": 1},
               {"type": "assistant", "message": {"id": "m", "content": "日本語"}, "seq": 2}]
    save_session(tmp_path, session_id="s1", mode="slide", backend="fake",
                 agent_session_id=None, last_seq=2, history=history)
    stored = load_session(tmp_path, "slide", "fake")
    assert stored.resumed and stored.history == history


async def test_periodic_saves_happen_while_serving_and_the_last_one_wins(make_server):
    server = await make_server(save_interval=0.05)
    tab = await server.tab()
    for i in range(5):
        await tab.send({"type": "user_message", "content": f"note {i}",
                        "client_msg_id": f"c{i}"})
        await server.backend.wait_call("send_user_message")
        history = server.workspace / ".pneuma" / "history.json"
        for _ in range(200):  # saved in the background, without a shutdown
            saved = json.loads(history.read_text())["messages"] if history.exists() else []
            if any(m.get("content") == f"note {i}" for m in saved):
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError(f"note {i} was never saved while the server ran")
    await server.close()
    saved = json.loads((server.workspace / ".pneuma" / "history.json").read_text())["messages"]
    assert [m["content"] for m in saved if m["type"] == "user_message"] == \
        [f"note {i}" for i in range(5)]
