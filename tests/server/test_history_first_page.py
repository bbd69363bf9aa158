"""A long conversation opens at once (docs/conversations.md, "A long
conversation opens at once"): a new tab gets the newest page, bounded in
bytes whatever the conversation's length, older pages as it asks; a tab
that holds the conversation gets, after a restart, only what it missed
(``history_resume``), read from the log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pneuma.server.conversation_log import ConversationLog
from pneuma.server.persistence import SeqReservation, load_session, open_conversation
from pneuma.server.session import Session
from tests.server.test_persistence import write_legacy_history

TURNS = 2000
FIRST_FRAME_LIMIT = 128 * 1024
RESUME_LIMIT = 64 * 1024


def turn(i: int, seq: int) -> list[dict[str, Any]]:
    """Turn ``i`` as the log keeps it, its messages numbered from ``seq``:
    the person asks, the agent reads a slide and answers."""
    text = f"Answer {i:04}: the tide tables differ by forty minutes on slide {i % 40}. " * 4
    return [
        {"type": "user_message", "content": f"Question {i:04}", "timestamp": 1_700_000_000 + i,
         "client_msg_id": f"q{i}", "seq": seq},
        {"type": "assistant", "message": {"id": f"msg_{i:04}_read", "role": "assistant",
                                          "content": [{"type": "tool_use", "id": f"tool_{i:04}",
                                                       "name": "Read",
                                                       "input": {"file_path": f"s/{i}.html"}}]},
         "parent_tool_use_id": None, "seq": seq + 1},
        {"type": "tool_result", "tool_use_id": f"tool_{i:04}", "content": "<p>slide</p>" * 20,
         "is_error": False, "seq": seq + 2},
        {"type": "assistant", "message": {"id": f"msg_{i:04}", "role": "assistant",
                                          "content": [{"type": "text", "text": text}]},
         "parent_tool_use_id": None, "seq": seq + 3},
        {"type": "result", "data": {"subtype": "success", "is_error": False, "num_turns": 1,
                                    "duration_ms": 1200, "result": text}, "seq": seq + 4},
    ]


def conversation(turns: int) -> list[dict[str, Any]]:
    return [m for i in range(1, turns + 1) for m in turn(i, i * 10)]


def questions(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["type"] == "user_message"]


async def start(make_server, workspace: Path, *, seed: bool) -> Any:
    """A server on ``workspace`` resuming its stored session, as ``pneuma run`` does."""
    stored = load_session(workspace, "slide", "fake")
    session = Session(stored.session_id, mode="slide", workspace=workspace, backend_name="fake",
                      conversation=open_conversation(workspace, stored),
                      last_seq=stored.last_seq, conversation_id=stored.conversation_id)
    return await make_server(workspace=workspace, session=session, seed=seed)


async def long_server(make_server, tmp_path: Path) -> Any:
    workspace = (tmp_path / "deck").resolve()
    first = await make_server(workspace=workspace)
    session_id = first.session.id
    await first.close()
    messages = conversation(TURNS)
    write_legacy_history(workspace, session_id, messages, last_seq=messages[-1]["seq"] + 1)
    return await start(make_server, workspace, seed=False)


def sized(tab: Any) -> list[int]:
    """The sizes (bytes) of the frames ``tab`` receives from now on."""
    sizes: list[int] = []
    tab._on_frame = lambda data: sizes.append(len(data.encode("utf-8")))
    return sizes


async def test_a_2000_turn_conversation_opens_with_its_newest_turn_in_under_128_kb(
        make_server, tmp_path):
    server = await long_server(make_server, tmp_path)
    tab = await server.tab(subscribe=False)
    sizes = sized(tab)
    first = await tab.subscribe(0)
    assert first["type"] == "message_history"
    assert sizes[0] < FIRST_FRAME_LIMIT, f"the first frame is {sizes[0]:,} bytes"
    assert questions(first["messages"])[-1] == f"Question {TURNS:04}"
    assert first["messages"][-1]["type"] == "result"
    # Whole turns: it starts with the person's message.
    assert first["messages"][0]["type"] == "user_message"
    assert first["has_more"] is True

    # Asking page after page gives every turn once, in order, each page
    # bounded and starting with a turn.
    shown = list(first["messages"])
    before = first["before"]
    while before is not None:
        page_sizes = len(sizes)
        await tab.send({"type": "history_page", "before": before})
        page = await tab.wait_for("history_page")
        assert sizes[page_sizes] < FIRST_FRAME_LIMIT
        assert page["messages"][0]["type"] == "user_message"
        shown[:0] = page["messages"]
        before = page["before"] if page["has_more"] else None
    assert questions(shown) == [f"Question {i:04}" for i in range(1, TURNS + 1)]
    assert shown == conversation(TURNS)


def log_turn_after(workspace: Path, conversation_id: str, after_seq: int) -> list[dict[str, Any]]:
    """One more turn in the workspace's log, numbered after ``after_seq``
    (as the run that logged it would have), its seq reserved; returns its
    messages."""
    missed = turn(TURNS + 1, after_seq + 1)
    log = ConversationLog.open(workspace / ".pneuma")
    next_row = log.tail(conversation_id, 1).next_row_id
    for row, message in enumerate(missed):
        inner = message.get("message")
        log.append(conversation_id, next_row + row, message["seq"], message["type"],
                   inner["id"] if isinstance(inner, dict) else None, json.dumps(message))
    log.close()
    SeqReservation(workspace).release(missed[-1]["seq"])
    return missed


async def test_a_tab_back_after_a_restart_gets_only_the_turn_it_missed(make_server, tmp_path):
    server = await long_server(make_server, tmp_path)
    workspace = server.workspace
    tab = await server.tab(subscribe=False)
    history = await tab.subscribe(0)
    held_seq, conversation_id = history["last_seq"], history["conversation"]["id"]
    await server.close()

    # One more turn, logged after the tab lost its connection, then a restart.
    missed = log_turn_after(workspace, conversation_id, held_seq)

    again = await start(make_server, workspace, seed=False)
    back = await again.tab(subscribe=False)
    sizes = sized(back)
    await back.send({"type": "session_subscribe", "last_seq": held_seq,
                     "conversation_id": conversation_id})
    resume = await back.wait_for("history_resume")
    status = await back.wait_for("status_change")
    assert "seq" not in status
    assert sum(sizes) < RESUME_LIMIT, f"{sum(sizes):,} bytes after a restart"
    got = [m for m in back.received if "seq" in m]
    assert got == missed  # each with its seq, nothing twice, nothing from before
    assert not [m for m in back.received if m["type"] == "message_history"]
    assert resume["conversation"]["id"] == conversation_id
    assert resume["last_seq"] == again.session.seq >= missed[-1]["seq"]
    assert resume["pending_permissions"] == []
    # Then live, counting on from there.
    again.backend.emit({"type": "system_note", "text": "live"})
    live = await back.wait_for("system_note")
    assert live["seq"] == resume["last_seq"] + 1


async def test_a_tab_of_another_conversation_or_another_count_gets_the_first_page(
        make_server, tmp_path):
    server = await long_server(make_server, tmp_path)
    tab = await server.tab(subscribe=False)
    history = await tab.subscribe(0)
    seq, conversation_id = history["last_seq"], history["conversation"]["id"]
    server.backend.emit({"type": "system_note", "text": "one more"})
    cases = [
        {"last_seq": seq - 5, "conversation_id": "another-conversation"},
        {"last_seq": seq + 10_000, "conversation_id": conversation_id},  # beyond the server's
        {"last_seq": seq - 5},  # a page that does not say which conversation it shows
    ]
    # An older page's count the replay buffer no longer holds (as after a restart).
    server.session.replay.clear()
    for case in cases:
        other = await server.tab(subscribe=False)
        sizes = sized(other)
        await other.send({"type": "session_subscribe", **case})
        first = await other.recv()
        assert first["type"] == "message_history", case
        assert questions(first["messages"])[-1] == f"Question {TURNS:04}", case
        assert sizes[0] < FIRST_FRAME_LIMIT, case
        assert not [m for m in other.received if m["type"] == "history_resume"], case


async def test_a_tab_that_missed_more_than_a_page_gets_the_first_page(make_server, tmp_path):
    server = await long_server(make_server, tmp_path)
    tab = await server.tab(subscribe=False)
    history = await tab.subscribe(0)
    server.session.replay.clear()
    # A tab that held only the first hundred turns.
    other = await server.tab(subscribe=False)
    await other.send({"type": "session_subscribe", "last_seq": 100 * 10 + 5,
                      "conversation_id": history["conversation"]["id"]})
    first = await other.recv()
    assert first["type"] == "message_history"
    assert questions(first["messages"])[-1] == f"Question {TURNS:04}"


async def test_a_message_larger_than_a_page_comes_as_a_preview_and_whole_on_request(
        make_server, tmp_path):
    server = await long_server(make_server, tmp_path)
    whole_file = "".join(f"<p>line {i} of a very long slide</p>\n" for i in range(12_000))
    server.backend.emit({"type": "user_message", "content": "Read the whole deck"})
    server.backend.emit({"type": "assistant", "message": {
        "id": "msg_big", "role": "assistant", "content": [
            {"type": "tool_use", "id": "tool_big", "name": "Read", "input": {"file_path": "a"}}]}})
    server.backend.emit({"type": "tool_result", "tool_use_id": "tool_big", "content": whole_file,
                         "is_error": False})
    tab = await server.tab(subscribe=False)
    sizes = sized(tab)
    first = await tab.subscribe(0)
    assert len(whole_file) > 400_000 and sizes[0] < FIRST_FRAME_LIMIT
    shown = first["messages"][-1]
    assert shown["type"] == "tool_result" and shown["tool_use_id"] == "tool_big"
    assert shown["content"].startswith("<p>line 0 of") and len(shown["content"]) < 4000
    assert shown["preview"]["bytes"] > 400_000
    await tab.send({"type": "history_message", "row": shown["preview"]["row"]})
    whole = await tab.wait_for("history_message")
    assert whole["row"] == shown["preview"]["row"]
    assert whole["message"]["content"] == whole_file
    # A row of no message of this conversation is refused, for this tab only.
    await tab.send({"type": "history_message", "row": 10**9})
    refused = await tab.wait_for("error")
    assert refused["code"] == "history_unavailable" and "seq" not in refused


def test_a_session_without_a_log_shows_all_it_holds_in_memory(tmp_path):
    # The log could not be opened (docs/conversations.md): the window is
    # the whole conversation there is, so a new tab gets all of it, whole.
    big = {"type": "tool_result", "tool_use_id": "t", "content": "x" * 100_000, "is_error": False}
    session = Session("no-log", mode="slide", workspace=tmp_path, backend_name="none",
                      history=[*conversation(300), big])
    frame = json.loads(session.conversation_frame('{"type":"message_history"', {}))
    assert questions(frame["messages"]) == [f"Question {i:04}" for i in range(1, 301)]
    assert frame["messages"][-1] == big and frame["has_more"] is False
