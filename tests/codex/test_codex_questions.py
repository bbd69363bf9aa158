"""Codex asks the person (issue 26, item 4): the REAL Codex CLI's
request_user_input tool, called by the fake Responses API's model, reaches
the tab as the AskUserQuestion-shaped request the page's question card
shows (pneuma/agents/codex/questions.py), and the person's answer, keyed by
the question's text, is what the model reads back, by Codex's question id."""

from __future__ import annotations

import json

from tests.codex.conftest import requires_codex
from tests.codex.test_codex_backend_e2e import TURN, open_session, say

pytestmark = requires_codex

QUESTIONS = {"questions": [
    {"id": "colour", "header": "Colour", "question": "Which colour?",
     "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]},
    # Codex wants options for every question; isOther lets the person type their own.
    {"id": "name", "header": "Name", "question": "What should the page be called?", "isOther": True,
     "options": [{"label": "Lumen", "description": ""}, {"label": "Notes", "description": ""}]},
]}


async def test_codex_questions_are_answered_on_the_card_and_read_by_the_model(fake_responses, start_codex,
                                                                             connect):
    # bypassPermissions: nothing else is asked, the questions still are.
    run, client = await open_session(start_codex, connect, "--permission-mode", "bypassPermissions")
    mark = await say(client, "[call: request_user_input " + json.dumps(QUESTIONS) + "]", "msg-q-1")
    request = (await client.wait_type("permission_request", since=mark, timeout=TURN))["request"]
    assert request["tool_name"] == "AskUserQuestion"
    assert request["input"]["questions"] == [
        {"id": "colour", "question": "Which colour?", "header": "Colour", "multiSelect": False, "secret": False,
         "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]},
        {"id": "name", "question": "What should the page be called?", "header": "Name", "multiSelect": False,
         "secret": False, "options": [{"label": "Lumen", "description": ""}, {"label": "Notes", "description": ""}]},
    ]
    answers = {"Which colour?": "Blue", "What should the page be called?": "Lumen, notes that think"}
    await client.send({"type": "permission_response", "request_id": request["request_id"], "behavior": "allow",
                       "updated_input": {**request["input"], "answers": answers}})
    await client.wait_turn_done(since=mark, timeout=TURN)
    assert json.loads(fake_responses.tool_outputs()[-1]) == {"answers": {
        "colour": {"answers": ["Blue"]}, "name": {"answers": ["Lumen, notes that think"]}}}

    # Skipped: Codex reads every question as unanswered, and the turn ends.
    mark = await say(client, "[call: request_user_input " + json.dumps(QUESTIONS) + "]", "msg-q-2")
    request = (await client.wait_type("permission_request", since=mark, timeout=TURN))["request"]
    await client.send({"type": "permission_response", "request_id": request["request_id"], "behavior": "deny",
                       "message": "The person skipped these questions in the Pneuma page."})
    await client.wait_turn_done(since=mark, timeout=TURN)
    assert json.loads(fake_responses.tool_outputs()[-1]) == {"answers": {}}
