"""Rewinding the conversation forks the native runtime's own log (issue 28,
item 4; docs/conversations.md, "Branches").

Three messages; "Edit and resend" on the second (POST
/api/conversation/rewind): the model's next request holds the first turn
and the edited message, none of the later turns (a new session of
``native.sqlite3`` holding the conversation up to before it). Switching
back to the old branch goes on in the old session: its next request holds
every old turn.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.anthropic_api import text


def said(request: dict[str, Any]) -> list[str]:
    """The person's and the model's texts in one request, oldest first."""
    texts = []
    for message in request["messages"]:
        content = message["content"]
        blocks = [content] if isinstance(content, str) else [
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        texts += [b.split("\n\n")[-1] for b in blocks if b]
    return texts


async def turn(server: Any, tab: Any, message: str, answer: str, fake_api: Any, n: int) -> None:
    fake_api.push(text(answer))
    await tab.say(message, client_msg_id=f"m{n}")
    await tab.wait_for("result", 30)


async def test_edit_and_resend_forks_the_native_conversation(make_native, fake_api):
    server = await make_native()
    tab = await server.tab()
    for n, (message, answer) in enumerate([("one", "first answer"), ("two", "second answer"),
                                           ("three", "third answer")], start=1):
        await turn(server, tab, message, answer, fake_api, n)
    assert said(fake_api.conversation_requests()[-1]) == [
        "one", "first answer", "two", "second answer", "three"]

    fake_api.push(text("edited answer"))
    status, answer = await server.post_json("/api/conversation/rewind",
                                            {"clientMsgId": "m2", "text": "two, edited"})
    assert status == 200, answer
    await tab.wait_for("result", 30)
    assert said(fake_api.conversation_requests()[-1]) == ["one", "first answer", "two, edited"]

    status, listing = await server.get_json("/api/conversation/branches")
    old = next(b["id"] for b in listing["branches"] if not b["current"])
    status, _ = await server.post_json(f"/api/conversation/branches/{old}/switch", {})
    assert status == 200
    await tab.wait_for("conversation_switched")
    await turn(server, tab, "four", "fourth answer", fake_api, 4)
    assert said(fake_api.conversation_requests()[-1]) == [
        "one", "first answer", "two", "second answer", "three", "third answer", "four"]
    await server.close()
