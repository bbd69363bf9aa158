"""The session's hooks (pneuma.server.session_hooks): features subscribe to
a user turn on its way to the agent, the end of a turn, changed files and
browser messages of the types they declare, in the order they subscribed;
a feature that fails is logged and the session goes on (issue 24, item 1)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from pneuma.server.handle import PNEUMA
from pneuma.server.session_hooks import SessionHooks, UserTurn


class Recorder:
    """A feature that notes what it saw, and puts ``prefix`` before each turn."""

    def __init__(self, prefix: str, seen: list[str]) -> None:
        self.prefix = prefix
        self.seen = seen

    async def before_turn(self, turn: UserTurn) -> None:
        self.seen.append(f"{self.prefix} before {turn.content} seq={turn.echo.get('seq')}")
        turn.prefixes.append(f"[{self.prefix}]")

    def turn_ended(self, result: dict[str, Any]) -> None:
        self.seen.append(f"{self.prefix} ended {result['data']['subtype']}")

    def files_changed(self, files: list[dict[str, Any]]) -> None:
        self.seen.append(f"{self.prefix} files {[f['path'] for f in files]}")


class Broken:
    async def before_turn(self, turn: UserTurn) -> None:
        raise RuntimeError("broken before the turn")

    def turn_ended(self, result: dict[str, Any]) -> None:
        raise RuntimeError("broken at the end")

    def files_changed(self, files: list[dict[str, Any]]) -> None:
        raise RuntimeError("broken on files")


async def test_features_see_the_turn_in_the_order_they_subscribed(make_server):
    server = await make_server()
    seen: list[str] = []
    server.session.hooks.add("first", Recorder("a", seen))
    server.session.hooks.add("second", Recorder("b", seen))
    tab = await server.tab()

    await tab.send({"type": "user_message", "content": "hello", "client_msg_id": "h1"})
    text = await server.backend.next_user_message()
    # Each feature's text goes before the message, in order; the person's last.
    assert text.startswith("[a]\n\n[b]\n\n") and text.endswith("hello")
    echo = await tab.wait_for("user_message")
    assert seen[-2:] == [f"a before hello seq={echo['seq']}", f"b before hello seq={echo['seq']}"]

    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    await tab.wait_for("result")
    assert seen[-2:] == ["a ended success", "b ended success"]

    server.pneuma.files_changed([{"path": "slides/01-title.html", "content": "x"}])
    update = await tab.wait_for("content_update")
    assert update["files"][0]["path"] == "slides/01-title.html"
    assert seen[-2:] == ["a files ['slides/01-title.html']", "b files ['slides/01-title.html']"]


async def test_a_failing_feature_is_logged_and_the_session_goes_on(make_server, caplog):
    server = await make_server()
    seen: list[str] = []
    server.session.hooks.add("broken", Broken())
    server.session.hooks.add("after", Recorder("a", seen))
    tab = await server.tab()
    caplog.set_level(logging.ERROR, "pneuma.server.session_hooks")

    await tab.send({"type": "user_message", "content": "go on", "client_msg_id": "g1"})
    assert (await server.backend.next_user_message()).endswith("go on")
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    assert (await tab.wait_for("result"))["data"]["subtype"] == "success"
    server.pneuma.files_changed([{"path": "slides/01-title.html", "content": "x"}])
    await tab.wait_for("content_update")

    assert [line.split(" seq=")[0] for line in seen] == [
        "a before go on", "a ended success", "a files ['slides/01-title.html']"]
    failures = [r.getMessage() for r in caplog.records if r.exc_info]
    assert failures == ["broken failed before the turn", "broken failed at the end of the turn",
                        "broken failed on changed files"]
    # The next turn works as before.
    await tab.send({"type": "user_message", "content": "again", "client_msg_id": "g2"})
    assert (await server.backend.next_user_message()).endswith("again")


class Picker:
    message_types = ("select_browser",)

    def __init__(self) -> None:
        self.picked: list[str] = []

    async def handle_message(self, connection: Any, msg: Any) -> None:
        self.picked.append(msg.clientId)


async def test_a_feature_answers_the_message_types_it_declares(make_server):
    server = await make_server()
    tab = await server.tab()
    # No feature handles select_browser here: the catalogue's refusal.
    await tab.send({"type": "select_browser", "clientId": "c1", "client_msg_id": "p1"})
    assert (await tab.wait_for("error"))["code"] == "not_native"

    picker = Picker()
    server.session.hooks.add("picker", picker)
    await tab.send({"type": "select_browser", "clientId": "c2", "client_msg_id": "p2"})
    await tab.send({"type": "select_browser", "clientId": "c2", "client_msg_id": "p2"})  # a resend
    await tab.send({"type": "conversation_list"})
    await tab.wait_for("conversations")
    assert picker.picked == ["c2"]

    server.session.hooks.remove("picker")
    await tab.send({"type": "select_browser", "clientId": "c3", "client_msg_id": "p3"})
    assert (await tab.wait_for("error"))["code"] == "not_native"


async def test_an_unknown_message_type_gets_the_same_error(make_server):
    server = await make_server()
    tab = await server.tab()
    await tab.send({"type": "no_such_message"})
    error = await tab.wait_for("error")
    assert error["code"] == "bad_message"
    assert error["message"].startswith("unknown message type; expected one of user_message")
    assert "select_browser" in error["message"] and "conversation_list" in error["message"]


def test_one_feature_a_message_type_and_a_name_is_replaced():
    hooks = SessionHooks()
    first, second = Picker(), Picker()
    hooks.add("picker", first)
    with pytest.raises(ValueError, match="'other' handles 'select_browser'"):
        hooks.add("other", second)
    assert hooks.handler_for("select_browser") is first and hooks.get("other") is None
    hooks.add("picker", second)  # a restarted backend subscribes its own again
    assert hooks.handler_for("select_browser") is second
    hooks.remove("picker", first)  # the old one leaving takes nothing away
    assert hooks.handler_for("select_browser") is second
    hooks.remove("picker", second)
    assert hooks.handler_for("select_browser") is None and hooks.names() == []


async def test_the_built_in_features_are_subscribers(make_server):
    server = await make_server()
    assert server.app[PNEUMA].session is server.session
    # The conversations answer conversation_*; the follow-ups queued_message_*;
    # checkpoints, the turns.
    assert server.session.hooks.names()[:3] == ["conversations", "queue", "checkpoints"]


class Notes:
    history_types = ("feature_note",)


async def test_a_features_broadcasts_are_kept_in_the_conversation_when_it_says_so(make_server):
    server = await make_server()
    session = server.session
    session.emit({"type": "feature_note", "text": "before"})
    session.hooks.add("notes", Notes())
    session.emit({"type": "feature_note", "text": "kept"})
    session.hooks.remove("notes")
    session.emit({"type": "feature_note", "text": "after"})
    # A tab that opens now gets the conversation: only the note sent while
    # the feature that declared it was subscribed.
    tab = await server.tab()
    history = next(m for m in tab.received if m["type"] == "message_history")
    assert [m["text"] for m in history["messages"] if m["type"] == "feature_note"] == ["kept"]


class FailingHandler:
    message_types = ("select_browser",)

    async def handle_message(self, connection: Any, msg: Any) -> None:
        raise RuntimeError("the handler broke")


async def test_a_failing_message_handler_answers_that_tab_and_the_socket_lives_on(make_server):
    server = await make_server()
    server.session.hooks.add("failing", FailingHandler())
    tab = await server.tab()
    await tab.send({"type": "select_browser", "clientId": "c1", "client_msg_id": "f1"})
    error = await tab.wait_for("error")
    assert error["code"] == "internal" and "the handler broke" in error["message"]
    await tab.send({"type": "user_message", "content": "still here", "client_msg_id": "f2"})
    assert (await server.backend.next_user_message()).endswith("still here")


class Follower:
    """Follows the conversation's log as the conversations list does."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def user_message_logged(self, message: dict[str, Any]) -> None:
        self.seen.append(f"logged {message['content']}")

    def agent_session_changed(self, agent_session_id: str | None) -> None:
        self.seen.append(f"agent session {agent_session_id}")

    def history_fields(self) -> dict[str, Any]:
        return {"follower": len(self.seen)}


async def test_a_feature_follows_the_log_and_adds_to_the_history(make_server):
    server = await make_server()
    follower = Follower()
    server.session.hooks.add("follower", follower)
    tab = await server.tab()
    await tab.send({"type": "user_message", "content": "note this", "client_msg_id": "n1"})
    await server.backend.next_user_message()
    server.session.set_agent_session_id("agent-1")
    assert follower.seen == ["logged note this", "agent session agent-1"]
    # A tab that opens now gets the feature's fields beside the conversation's.
    second = await server.tab()
    history = next(m for m in second.received if m["type"] == "message_history")
    assert history["follower"] == 2 and history["conversation"]["id"] == server.session.id
