"""Questions and plans only the person can answer (issue 26, item 4):
Claude Code's AskUserQuestion / ExitPlanMode and Codex's requestUserInput
reach the page as a permission request in AskUserQuestion's shape, in every
permission mode, and the person's answers go back in each agent's own form.

The real CLI's side of this is in tests/browser/test_question_cards.py; here
the translation alone, fast: the stream-json bridge with a recording link,
the Codex backend with a recording JSON-RPC peer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pneuma.agents.codex.backend import CodexBackend
from pneuma.agents.codex.questions import codex_answers, question_input
from pneuma.agents.stream_json import AgentLink, StreamJsonBridge
from pneuma.core.backend import BackendOptions
from pneuma.host.registry import get_mode
from tests.fakes.sink import RecordingSink

QUESTIONS = {"questions": [
    {"question": "Which colour?", "header": "Colour", "multiSelect": False,
     "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]},
    {"question": "Which sections?", "header": "Sections", "multiSelect": True,
     "options": [{"label": "Intro", "description": ""}, {"label": "Pricing", "description": ""}]},
]}


class RecordingLink(AgentLink):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict[str, Any]] = []

    async def send_text(self, line: str) -> None:
        self.lines.append(json.loads(line))


def can_use_tool(request_id: str, tool: str, tool_input: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"type": "control_request", "request_id": request_id, "request": {
        "subtype": "can_use_tool", "tool_name": tool, "input": tool_input,
        "tool_use_id": f"toolu_{request_id}", **extra}}) + "\n"


async def settled(bridge: StreamJsonBridge) -> None:
    for _ in range(5):
        await asyncio.sleep(0)
    if bridge._tasks:
        await asyncio.gather(*bridge._tasks)


def bridge_in(mode: str) -> tuple[StreamJsonBridge, RecordingSink, RecordingLink]:
    sink, link = RecordingSink(), RecordingLink()
    bridge = StreamJsonBridge(sink, permission_mode=mode)
    bridge.link = link
    return bridge, sink, link


@pytest.mark.parametrize("tool", ["AskUserQuestion", "ExitPlanMode"])
async def test_bypass_permissions_still_asks_the_person_a_question_or_a_plan(tool: str) -> None:
    bridge, sink, link = bridge_in("bypassPermissions")
    bridge.feed(link, can_use_tool("q1", tool, QUESTIONS if tool == "AskUserQuestion" else {}))
    bridge.feed(link, can_use_tool("b1", "Bash", {"command": "ls"}))
    await settled(bridge)
    (asked,) = sink.of("permission_request")
    assert asked["request"]["tool_name"] == tool and asked["request"]["request_id"] == "q1"
    # Bash was answered in the person's place, as bypassPermissions says.
    assert [line["response"]["request_id"] for line in link.lines] == ["b1"]


async def test_a_tool_that_requires_the_person_is_asked_whatever_its_name() -> None:
    bridge, sink, link = bridge_in("bypassPermissions")
    bridge.feed(link, can_use_tool("n1", "SomeFutureQuestion", {}, requires_user_interaction=True))
    await settled(bridge)
    assert [m["request"]["request_id"] for m in sink.of("permission_request")] == ["n1"]
    assert link.lines == []


async def test_the_answers_go_back_as_the_updated_input_the_cli_reads() -> None:
    bridge, sink, link = bridge_in("bypassPermissions")
    bridge.feed(link, can_use_tool("q1", "AskUserQuestion", QUESTIONS))
    await settled(bridge)
    answers = {"Which colour?": "Blue", "Which sections?": "Intro, Pricing"}
    await bridge.answer_permission("q1", "allow", {**QUESTIONS, "answers": answers})
    (line,) = link.lines
    assert line["response"] == {"subtype": "success", "request_id": "q1", "response": {
        "behavior": "allow", "updatedInput": {**QUESTIONS, "answers": answers}}}


async def test_keep_planning_is_a_denial_carrying_the_persons_note() -> None:
    bridge, sink, link = bridge_in("plan")
    bridge.feed(link, can_use_tool("p1", "ExitPlanMode", {}))
    await settled(bridge)
    await bridge.answer_permission("p1", "deny", None, "Add tests first.")
    (line,) = link.lines
    assert line["response"]["response"] == {"behavior": "deny", "message": "Add tests first."}


# --- Codex ---------------------------------------------------------------------------

CODEX_PARAMS = {"threadId": "t", "turnId": "u", "itemId": "item-7", "isBlocking": True, "questions": [
    {"id": "colour", "header": "Colour", "question": "Which colour?",
     "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]},
    {"id": "token", "header": "Token", "question": "Your token?", "isOther": True, "isSecret": True,
     "options": None},
    {"id": "junk", "header": 5},  # no question text: left out
    "not a question",
]}


def test_codex_questions_take_the_cards_shape_and_answers_go_back_by_id() -> None:
    card = question_input(CODEX_PARAMS)
    assert card == {"questions": [
        {"id": "colour", "question": "Which colour?", "header": "Colour", "multiSelect": False,
         "secret": False, "options": [{"label": "Red", "description": "warm"},
                                      {"label": "Blue", "description": "cool"}]},
        {"id": "token", "question": "Your token?", "header": "Token", "multiSelect": False,
         "secret": True, "options": []},
    ]}
    answered = {**card, "answers": {"Which colour?": "Blue", "Your token?": "s3cret, with a comma"}}
    assert codex_answers(card, answered) == {"answers": {
        "colour": {"answers": ["Blue"]}, "token": {"answers": ["s3cret, with a comma"]}}}
    assert codex_answers(card, None) == {"answers": {}}


class RecordingPeer:
    def __init__(self) -> None:
        self.responses: list[tuple[Any, Any]] = []

    async def respond(self, rpc_id: Any, result: Any) -> None:
        self.responses.append((rpc_id, result))

    async def respond_error(self, rpc_id: Any, code: int, message: str) -> None:
        self.responses.append((rpc_id, {"error": message}))


async def test_codex_asks_the_person_even_in_bypass_and_answers_with_their_choice(tmp_path: Path) -> None:
    sink = RecordingSink()
    options = BackendOptions(workspace=tmp_path, mode=get_mode("doc"), api_url="http://127.0.0.1:1",
                             token="t", session_id="s", permission_mode="bypassPermissions")
    backend = CodexBackend(options, sink)
    peer = RecordingPeer()
    backend._peer = peer  # type: ignore[assignment]
    await backend._on_request("item/tool/requestUserInput", CODEX_PARAMS, 41)
    (asked,) = sink.of("permission_request")
    request = asked["request"]
    assert (request["request_id"], request["tool_name"], request["tool_use_id"]) == (
        "codex-41", "AskUserQuestion", "item-7")
    assert peer.responses == []  # nobody answered in the person's place
    await backend.answer_permission("codex-41", "allow",
                                    {**request["input"], "answers": {"Which colour?": "Red"}})
    assert peer.responses == [(41, {"answers": {"colour": {"answers": ["Red"]}}})]
