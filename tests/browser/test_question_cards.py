"""The agent asks, the person answers on a card (issue 26, item 4), in Chromium.

`pneuma run --mode doc` runs the REAL Claude Code CLI against the fake
Anthropic Messages API (tests/fakes/anthropic_api.py, on a thread of its own,
as in tests/browser/test_agent_viewer_actions.py). The scripted model calls
AskUserQuestion, or ExitPlanMode in plan mode; the CLI asks the page through
`can_use_tool`; the person answers on the question card or the plan card
(pneuma/web/lib/question-cards.js); and what the CLI then sent the model as
that tool's result is checked at the fake API, beside what the page showed.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_agent_viewer_actions import (  # noqa: F401  (fixtures)
    CLAUDE_BIN,
    TURN,
    ThreadedFakeAPI,
    block_text,
    fake_api,
    loopback_only_network,
)
from tests.fakes.anthropic_api import ToolUseBlock, text, tool_use

pytestmark = pytest.mark.skipif(
    CLAUDE_BIN is None,
    reason="the real Claude Code CLI is not installed: pip install claude-agent-sdk==0.2.187",
)

HOSTILE_LABEL = '<img src=x onerror="window.__owned=1">Bold'
QUESTIONS = {"questions": [
    {"question": "Which colour should the headings be?", "header": "Colour", "multiSelect": False,
     "options": [{"label": "Red", "description": "Warm and loud"},
                 {"label": "Blue", "description": "Calm, the house colour"}]},
    {"question": "Which sections should the summary cover?", "header": "Sections", "multiSelect": True,
     "options": [{"label": "Intro", "description": ""}, {"label": "Pricing", "description": ""},
                 {"label": "FAQ", "description": ""}]},
    {"question": "Which tone?", "header": "Tone", "multiSelect": False,
     "options": [{"label": "Formal", "description": ""}, {"label": HOSTILE_LABEL, "description": ""}]},
]}
OWN_TONE = "Friendly, like a note to a colleague"


def result_of(fake_api: ThreadedFakeAPI, call: ToolUseBlock) -> dict[str, Any]:
    results = [r for r in fake_api.tool_results() if r["tool_use_id"] == call.id]
    assert len(results) == 1, f"the CLI sent {len(results)} tool_results for {call.name}"
    return results[0]


def greeted(pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, *args: str) -> tuple[Any, Any]:
    fake_api.push(text("Hi! What shall we write?"))
    server = pneuma_server("doc", claude_bin=CLAUDE_BIN, args=args, env={
        "ANTHROPIC_BASE_URL": fake_api.base_url, "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
        "IS_SANDBOX": "1",  # as root the CLI refuses bypassPermissions, doc's default, without it
    })
    page = open_page(server)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn
    return server, page


def test_the_persons_choices_on_a_question_card_are_the_tool_result_the_model_reads(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:
    server, page = greeted(pneuma_server, fake_api, open_page)
    ask = tool_use("AskUserQuestion", QUESTIONS)
    fake_api.push(text("Before I start, a few choices."), ask)
    fake_api.push(text("Blue headings, a summary of the intro and pricing, in a friendly tone."))
    page.locator(".composer textarea").fill("Write me a product page")
    page.locator(".composer textarea").press("Enter")

    card = page.locator(".question-card")
    expect(card).to_be_visible(timeout=TURN)
    expect(page.locator(".permission:not(.question-card)")).to_have_count(0)  # not the generic card
    expect(page.locator('.tool-card[data-tool="AskUserQuestion"] .tool-status')).to_have_text("needs your answer")
    expect(page.locator(".working")).to_have_text("Waiting for your answer…")
    questions = card.locator("fieldset.question")
    expect(questions).to_have_count(3)
    expect(questions.nth(0).locator("legend")).to_contain_text("Which colour should the headings be?")
    expect(questions.nth(0).locator(".question-chip")).to_have_text("Colour")
    expect(questions.nth(0).locator('[data-option="1"] .option-description')).to_have_text("Calm, the house colour")
    expect(questions.nth(0).locator("input[type=radio]")).to_have_count(3)  # two options and Other
    expect(questions.nth(1).locator("input[type=checkbox]")).to_have_count(4)
    # The agent's label is text on the card, never markup.
    expect(questions.nth(2).locator('[data-option="1"] .option-label')).to_have_text(HOSTILE_LABEL)
    expect(card.locator("img")).to_have_count(0)

    submit = card.locator("button.submit")
    expect(submit).to_be_disabled()
    questions.nth(0).get_by_text("Red", exact=True).click()
    questions.nth(0).get_by_text("Blue", exact=True).click()  # single choice: Blue replaces Red
    questions.nth(1).get_by_text("Intro", exact=True).click()
    questions.nth(1).get_by_text("FAQ", exact=True).click()
    questions.nth(1).get_by_text("Pricing", exact=True).click()
    questions.nth(1).get_by_text("FAQ", exact=True).click()  # unticked again
    expect(submit).to_be_disabled()  # the tone is not answered yet
    questions.nth(2).locator(".other-text").fill(OWN_TONE)
    expect(questions.nth(2).locator('[data-option="other"] input[type=radio]')).to_be_checked()
    expect(submit).to_be_enabled()
    shot(page, "question-card-answered")
    questions.nth(2).locator(".other-text").press("Enter")  # as Send answers

    expect(card).to_have_count(0)
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    assert fake_api.pending() == 0, "the CLI did not ask for the reply after the answers"
    result = result_of(fake_api, ask)
    assert not result.get("is_error"), result
    said = block_text(result["content"])
    for question, answer in (("Which colour should the headings be?", "Blue"),
                             ("Which sections should the summary cover?", "Intro, Pricing"),
                             ("Which tone?", OWN_TONE)):
        assert f'"{question}"="{answer}"' in said, said
    expect(page.get_by_text("Blue headings, a summary of the intro and pricing")).to_be_visible()
    assert page.evaluate("() => window.__owned") is None
    assert page.console_errors == []


def test_keep_planning_sends_the_note_and_approve_lets_the_agent_go_on(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:
    server, page = greeted(pneuma_server, fake_api, open_page, "--permission-mode", "plan")
    first = tool_use("ExitPlanMode", {"plan": "# Product page\n\n1. **Outline** the sections\n2. Write them"})
    second = tool_use("ExitPlanMode", {"plan": "# Product page\n\n1. Write the tests\n2. Outline\n3. Write"})
    fake_api.push(text("Here is my plan."), first)
    fake_api.push(text("Tests first, then."), second)
    fake_api.push(text("Plan approved; writing the page now."))
    page.locator(".composer textarea").fill("Plan a product page")
    page.locator(".composer textarea").press("Enter")

    card = page.locator(".plan-card")
    expect(card).to_be_visible(timeout=TURN)
    # The plan is Markdown, drawn by the page's renderer.
    expect(card.locator(".plan-text h1")).to_have_text("Product page")
    expect(card.locator(".plan-text strong")).to_have_text("Outline")
    card.locator("button.keep-planning").click()
    card.locator(".plan-note").fill("Write the tests first.")
    shot(page, "plan-card-keep-planning")
    card.locator("button.keep-planning").click()

    expect(card.locator(".plan-text li").first).to_have_text("Write the tests", timeout=TURN)
    card.locator("button.approve").click()
    expect(card).to_have_count(0)
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    assert fake_api.pending() == 0, "the agent did not go on after the approval"

    denied = result_of(fake_api, first)
    assert denied.get("is_error") is True and "Write the tests first." in block_text(denied["content"]), denied
    approved = result_of(fake_api, second)
    assert not approved.get("is_error"), approved
    assert "approved" in block_text(approved["content"]), approved
    expect(page.get_by_text("Plan approved; writing the page now.")).to_be_visible()
    assert page.console_errors == []
