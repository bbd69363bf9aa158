"""Follow-ups sent while the agent works are queued by the server, shown
as queued, editable and cancellable until the agent takes them (issue 25,
item 8; pneuma/server/follow_ups.py). Real server, real socket, the fake
agent of the server tests."""

from __future__ import annotations


async def _busy(server, tab) -> None:
    """The person's first message: the agent is working on it."""
    await tab.say("first", client_msg_id="c-first")
    await server.backend.wait_call("send_user_message")
    await tab.wait_for("status_change", where=lambda m: m.get("status") == "running")


async def _queue(tab, text: str, client_id: str) -> dict:
    await tab.say(text, client_msg_id=client_id)
    return await tab.wait_for("user_message_queued", where=lambda m: m.get("client_msg_id") == client_id)


def _sent(server) -> list[str]:
    return [text for text, _ in server.backend.user_messages]


async def test_a_message_sent_while_the_agent_works_is_queued_not_sent(server):
    tab = await server.tab()
    other = await server.tab()
    await _busy(server, tab)
    queued = await _queue(tab, "second", "c-second")
    assert queued["content"] == "second"
    assert queued["queue_id"]
    # Every tab shows it as queued; the agent has not got it; no echo yet.
    seen = await other.wait_for("user_message_queued")
    assert seen["queue_id"] == queued["queue_id"]
    assert _sent(server) == ["first"]
    assert not [m for m in tab.received if m.get("type") == "user_message" and m["content"] == "second"]

    # The turn ends: the agent takes it, and then it is an ordinary message.
    server.backend.reply("done with first")
    taken = await tab.wait_for("queued_message_taken")
    assert taken["queue_id"] == queued["queue_id"]
    echo = await tab.wait_for("user_message", where=lambda m: m["content"] == "second")
    assert echo["client_msg_id"] == "c-second"
    assert echo["seq"] > taken["seq"]
    await server.backend.wait_call("send_user_message", count=2)
    assert _sent(server) == ["first", "second"]


async def test_an_edited_follow_up_reaches_the_agent_as_edited(server):
    tab = await server.tab()
    await _busy(server, tab)
    queued = await _queue(tab, "make it blue", "c-blue")
    await tab.send({"type": "queued_message_edit", "queue_id": queued["queue_id"],
                     "content": "make it green"})
    edited = await tab.wait_for("queued_message_edited")
    assert edited == {**edited, "queue_id": queued["queue_id"], "content": "make it green"}
    server.backend.reply("ok")
    await tab.wait_for("user_message", where=lambda m: m["content"] == "make it green")
    await server.backend.wait_call("send_user_message", count=2)
    assert _sent(server) == ["first", "make it green"]


async def test_a_cancelled_follow_up_never_reaches_the_agent(server):
    tab = await server.tab()
    await _busy(server, tab)
    dropped = await _queue(tab, "never mind", "c-drop")
    kept = await _queue(tab, "this one", "c-keep")
    await tab.send({"type": "queued_message_cancel", "queue_id": dropped["queue_id"]})
    cancelled = await tab.wait_for("queued_message_cancelled")
    assert cancelled["queue_id"] == dropped["queue_id"]
    server.backend.reply("ok")
    taken = await tab.wait_for("queued_message_taken")
    assert taken["queue_id"] == kept["queue_id"]
    await server.backend.wait_call("send_user_message", count=2)
    assert _sent(server) == ["first", "this one"]
    assert not [m for m in tab.received if m.get("type") == "user_message" and m["content"] == "never mind"]


async def test_cancel_or_edit_after_the_agent_took_it_is_a_conflict(server):
    tab = await server.tab()
    await _busy(server, tab)
    queued = await _queue(tab, "second", "c-second")
    server.backend.reply("ok")
    await tab.wait_for("queued_message_taken")
    await tab.send({"type": "queued_message_cancel", "queue_id": queued["queue_id"]})
    refused = await tab.wait_for("error")
    assert refused["code"] == "E_CONFLICT"
    assert "seq" not in refused  # for this tab only
    assert "already has this message" in refused["message"]
    await tab.send({"type": "queued_message_edit", "queue_id": queued["queue_id"], "content": "late"})
    refused = await tab.wait_for("error")
    assert refused["code"] == "E_CONFLICT"
    await server.backend.wait_call("send_user_message", count=2)
    assert _sent(server) == ["first", "second"]


async def test_follow_ups_keep_their_order_one_turn_each(server):
    tab = await server.tab()
    await _busy(server, tab)
    for n in range(3):
        await _queue(tab, f"follow-up {n}", f"c{n}")
    for n in range(3):
        server.backend.reply(f"answer {n}")
        await server.backend.wait_call("send_user_message", count=n + 2)
        # One at a time: the next waits for this turn to end.
        assert _sent(server)[-1] == f"follow-up {n}"
        assert len(server.session.follow_ups) == 2 - n


async def test_a_tab_that_loads_later_sees_what_is_still_queued(server):
    tab = await server.tab()
    await _busy(server, tab)
    queued = await _queue(tab, "second", "c-second")
    late = await server.tab(subscribe=False)
    history = await late.subscribe(0)
    assert history["type"] == "message_history"
    assert [q["queue_id"] for q in history["queued_messages"]] == [queued["queue_id"]]
    assert history["queued_messages"][0]["content"] == "second"
    # Not part of the conversation: the history's messages do not hold it.
    assert all(m.get("content") != "second" for m in history["messages"])


async def test_an_empty_edit_is_refused_and_the_message_stays(server):
    tab = await server.tab()
    await _busy(server, tab)
    queued = await _queue(tab, "keep me", "c-keep")
    await tab.send({"type": "queued_message_edit", "queue_id": queued["queue_id"], "content": "  "})
    refused = await tab.wait_for("error")
    assert refused["code"] == "bad_message"
    server.backend.reply("ok")
    await server.backend.wait_call("send_user_message", count=2)
    assert _sent(server) == ["first", "keep me"]


async def test_a_follow_up_the_agent_cannot_take_is_an_error_in_the_chat_not_a_stuck_queue(server, monkeypatch):
    tab = await server.tab()
    await _busy(server, tab)
    await _queue(tab, "second", "c-second")
    await _queue(tab, "third", "c-third")

    async def broken(text, images):
        raise RuntimeError("the agent's pipe is gone")

    monkeypatch.setattr(server.backend, "send_user_message", broken)
    server.backend.reply("ok")
    error = await tab.wait_for("error", where=lambda m: "seq" in m)
    assert error["code"] == "internal" and "queued message" in error["message"]
    monkeypatch.undo()
    # The next turn end takes the next one, as ever.
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    await tab.wait_for("user_message", where=lambda m: m["content"] == "third")
    await server.backend.wait_call("send_user_message", count=2)
    assert _sent(server) == ["first", "third"]
