"""Rewinding the conversation, and its branches (issue 28, item 4;
docs/conversations.md, "Branches").

A served slide session with the fake agent (``pneuma.testing.FakeAgent``),
and with a fake agent that forks its own conversation the way Claude
Code's backend does (``fork_at``): "Edit and resend" on an earlier message
goes back to before it on a new branch, the agent is forked just before
that message (or, one that cannot fork, handed what was said before it),
the old branch stays whole and can be shown again with its agent session
resumed. The real CLI's part is tests/browser/test_edit_and_resend.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from pneuma.core.backend import AgentEventSink, AgentPoint, BackendOptions, BackendSpec
from pneuma.testing import FakeAgent
from tests.server.conftest import Server
from tests.server.test_conversations import listing as listing_of
from tests.server.test_conversations import restart, texts

REWIND = "/api/conversation/rewind"
BRANCHES = "/api/conversation/branches"


class ForkingAgent(FakeAgent):
    """A fake agent whose conversation has points (one per reply) and forks."""

    name = "fake"

    def __init__(self, options: BackendOptions, sink: AgentEventSink) -> None:
        super().__init__(options, sink)
        self.replies = 0
        self.forks: list[AgentPoint] = []

    def reply(self, text: str) -> str:
        self.replies += 1
        return super().reply(text)

    def conversation_point(self) -> AgentPoint | None:
        if self.forks and self.replies == 0:
            return self.forks[-1]
        session = self.options.agent_session_id or "agent-session"
        return AgentPoint("fake", session, f"after-{self.replies}") if self.replies else None

    async def fork_at(self, point: AgentPoint) -> bool:
        self.forks.append(point)
        return True


@pytest.fixture
def forking(make_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """make_server's agents fork their conversation."""

    def spec(created: list[Any] | None = None) -> BackendSpec:
        def factory(options: BackendOptions, sink: AgentEventSink) -> ForkingAgent:
            agent = ForkingAgent(options, sink)
            if created is not None:
                created.append(agent)
            return agent

        return BackendSpec(name="fake", description="forks", factory=factory)

    # The fixture's own module (pytest may import conftest under another name).
    monkeypatch.setitem(make_server.__globals__, "fake_agent_spec", spec)


async def three_turns(server: Server, tab: Any) -> None:
    for n, (said, answer) in enumerate([("Make a deck about tides", "Tides it is."),
                                        ("Add a slide on the moon", "Moon added."),
                                        ("Make it blue", "Blue now.")]):
        await tab.say(said, client_msg_id=f"m{n + 1}")
        agent = server.built[-1]
        assert (await agent.next_user_message()).endswith(said)
        agent.reply(answer)
        await tab.wait_for("result", where=lambda m, n=n: True)
    server.session.set_agent_session_id("agent-session")


async def rewind(server: Server, **body: Any) -> Any:
    response = await server.post(REWIND, json=body)
    return response.status, await response.json()


async def test_edit_and_resend_forks_the_agent_before_that_message_and_keeps_the_old_branch(
        make_server: Any, forking: None) -> None:
    server = await make_server()
    tab = await server.tab()
    await three_turns(server, tab)
    first_branch = server.session.conversation_id

    status, answer = await rewind(server, clientMsgId="m2", text="Add a slide on the sun")
    assert status == 200, answer
    switched = await tab.wait_for("conversation_switched")
    # The chat shows what came before that message, then the edited one.
    assert texts(switched["messages"]) == ["Make a deck about tides", "Tides it is."]
    # The list of conversations has one entry for it: the version shown.
    assert [c["id"] for c in switched["conversations"]] == [answer["branch"]]
    echo = await tab.wait_for("user_message")
    assert echo["content"] == "Add a slide on the sun"

    agent = server.built[-1]
    assert agent is not server.built[0] and agent.options.agent_session_id is None
    sent = await agent.next_user_message()
    # Forked where the agent stood just before "Add a slide on the moon".
    assert agent.forks == [AgentPoint("fake", "agent-session", "after-1")]
    assert sent.endswith("Add a slide on the sun")
    assert "<conversation-rewound>" in sent and "Moon" not in sent
    agent.reply("Sun added.")
    await tab.wait_for("result")

    listing = await (await server.get(BRANCHES)).json()
    versions = {b["id"]: b for b in listing["branches"]}
    assert set(versions) == {first_branch, answer["branch"]}
    assert versions[answer["branch"]]["current"] and versions[answer["branch"]]["parentId"] == first_branch
    assert versions[answer["branch"]]["forkedAtMessage"] == "m2"
    assert versions[first_branch]["lastMessagePreview"] == "Blue now."
    # The chat marks the edited message: the other version goes on from there.
    assert listing["splits"] == [{"messageId": answer["clientMsgId"], "versions": [first_branch]}]

    # Back to the old branch: its three turns, and its own agent session resumed.
    response = await server.post(f"{BRANCHES}/{first_branch}/switch")
    assert response.status == 200
    back = await tab.wait_for("conversation_switched")
    assert [c["id"] for c in back["conversations"]] == [first_branch]
    assert texts(back["messages"])[-2:] == ["Make it blue", "Blue now."]
    assert server.built[-1].options.agent_session_id == "agent-session"
    old_listing = await (await server.get(BRANCHES)).json()
    assert old_listing["splits"] == [{"messageId": "m2", "versions": [answer["branch"]]}]


async def test_an_agent_that_cannot_fork_is_handed_what_was_said_before_the_message(
        server: Server) -> None:
    tab = await server.tab()
    await three_turns(server, tab)

    status, answer = await rewind(server, clientMsgId="m3", text="Make it green")
    assert status == 200, answer
    agent = server.built[-1]
    sent = await agent.next_user_message()
    assert sent.endswith("Make it green")
    assert "Add a slide on the moon" in sent and "Moon added." in sent
    assert "Make it blue" not in sent and "Blue now." not in sent


async def test_a_conversation_rewind_without_text_waits_and_tells_the_agent_once(
        make_server: Any, forking: None) -> None:
    server = await make_server()
    tab = await server.tab()
    await three_turns(server, tab)

    status, answer = await rewind(server, clientMsgId="m1")
    assert status == 200
    switched = await tab.wait_for("conversation_switched")
    assert switched["messages"] == []
    assert server.built[-1].calls_named("send_user_message") == []

    for n, said in enumerate(["A deck about rivers", "Two slides"]):
        await tab.say(said, client_msg_id=f"r{n}")
        sent = await server.built[-1].next_user_message()
        assert ("<conversation-rewound>" in sent) == (n == 0), sent
        assert "tides" not in sent
        server.built[-1].reply("ok")
        await tab.wait_for("result")
    # Back to before the first message: titled by the branch's own first one.
    listing = await listing_of(tab)
    assert [(c["id"], c["title"]) for c in listing["conversations"]] == [
        (answer["branch"], "A deck about rivers")]


async def test_refusals(make_server: Any) -> None:
    server = await make_server()
    tab = await server.tab()
    await three_turns(server, tab)

    status, answer = await rewind(server, clientMsgId="no-such-message")
    assert (status, answer["error"]["code"]) == (404, "E_NOT_FOUND")
    status, answer = await rewind(server, text="no message named")
    assert (status, answer["error"]["code"]) == (400, "E_BAD_ARGS")
    response = await server.post(f"{BRANCHES}/not-a-branch/switch")
    assert (response.status, (await response.json())["error"]["code"]) == (404, "E_NOT_FOUND")

    await tab.say("One more", client_msg_id="m4")
    await server.built[-1].next_user_message()
    status, answer = await rewind(server, clientMsgId="m1", text="mid-turn")
    assert (status, answer["error"]["code"]) == (409, "E_CONFLICT")
    assert len(server.built) == 1  # nothing was switched


async def test_a_branch_forks_its_agent_at_its_first_turn_even_after_a_restart(
        make_server: Any, forking: None) -> None:
    server = await make_server()
    tab = await server.tab()
    await three_turns(server, tab)
    stamp = next(m["timestamp"] for m in (await tab.full_history())
                 if m["type"] == "user_message" and m.get("client_msg_id") == "m3")

    # Named by its time, as a page names a message sent without a client id.
    status, answer = await rewind(server, timestamp=stamp * 1000)
    assert status == 200 and answer["forkedAtMessage"] == "m3"

    again = await restart(make_server, server)
    assert again.session.conversation_id == answer["branch"]
    assert again.built[0].options.agent_session_id is None
    tab = await again.tab()
    await tab.say("Make it green", client_msg_id="g1")
    sent = await again.built[0].next_user_message()
    assert again.built[0].forks == [AgentPoint("fake", "agent-session", "after-2")]
    assert "<conversation-rewound>" in sent and sent.endswith("Make it green")
