"""M1-M4: the default agent against a fake Anthropic Messages API (SSE).

The real anthropic SDK streams from tests/fakes/anthropic_api.py; each test
scripts the model's tool calls and checks the events, the files and what the
model was sent (profiles, models, the context package)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pneuma.api import LLMGateway, LLMSettings
from pneuma_coauthor.domain.model import ArtifactRef
from pneuma_coauthor.llm import PLAN_TOOL, GatewayLLM
from pneuma_coauthor.workflow.agent import AgentHost, DefaultCoAuthorAgent, apply_edits
from pneuma_coauthor.workflow.usecases import CoAuthor
from tests.fakes.anthropic_api import FakeAnthropicAPI, tool_use

from .conftest import INTRO

INTRO_PATH = "sections/intro.tex"
MODELS = '[profiles.fast]\nmodel = "fast-model"\n[profiles.writer]\nmodel = "writer-model"\n[profiles.reasoning]\nmodel = "reasoning-model"\n'


def plan(questions: list[str] | None = None, files: list[str] | None = None, **extra) -> object:
    return tool_use("post_plan", {
        "goal": "Fix the subject-verb agreement in the thesis sentence",
        "issues": ["'This paper argue' lacks agreement"], "strategy": ["Change 'argue' to 'argues'"],
        "scope": [f"{INTRO_PATH}:4"], "risks": [], "questions": questions or [],
        "files": files if files is not None else [INTRO_PATH], "patchNeeded": True, **extra,
    })


def edits(line: int, replacement: str, summary: str = "agreement") -> object:
    return tool_use("propose_edits", {"summary": summary, "edits": [
        {"path": INTRO_PATH, "lineStart": line, "lineEnd": line, "replacement": replacement}]})


@pytest.fixture
def api(anthropic: FakeAnthropicAPI) -> FakeAnthropicAPI:
    return anthropic  # tests/coauthor/conftest.py


@pytest.fixture
def app(paper: Path) -> CoAuthor:
    (paper / ".pneuma/coauthor.toml").write_text('[build]\nlatexmk = "off"\n' + MODELS, encoding="utf-8")
    return CoAuthor(paper)


async def run_agent(app: CoAuthor) -> list[tuple[str, str, str]]:
    seen: list[tuple[str, str, str]] = []
    llm = GatewayLLM(app.config)
    agent = DefaultCoAuthorAgent(app, llm, observer=lambda *a: seen.append(a))
    try:
        await AgentHost(app, {"coauthor": agent}).run_until_idle()
    finally:
        await llm.close()
    return seen


def types(app: CoAuthor, task_id: str) -> list[str]:
    return [e.type for e in app.billboard.events(task_id=task_id)]


async def test_full_loop_plan_patch_accept(app: CoAuthor, api: FakeAnthropicAPI):
    api.push(plan())
    api.push(edits(4, "This paper argues that every change should be a patch."))
    task = app.create_task("fix the grammar of the thesis sentence", refs=[ArtifactRef.parse(f"{INTRO_PATH}:4-4")])
    seen = await run_agent(app)

    view = app.task(task.task_id)
    assert view.status.value == "awaiting_review"
    assert types(app, task.task_id) == ["TaskCreated", "TaskRouted", "TaskClaimed", "TaskStarted", "LlmCallTraced",
                                        "AgentPlanPosted", "LlmCallTraced", "PatchProposed"]
    assert (app.workspace / INTRO_PATH).read_text() == INTRO  # nothing written before review
    # M3: the plan came from the reasoning profile, the patch from the writer, each traced.
    traces = [e.payload for e in app.billboard.events(task_id=task.task_id) if e.type == "LlmCallTraced"]
    assert [(t.profile, t.model, t.purpose) for t in traces] == [
        ("reasoning", "reasoning-model", "plan"), ("writer", "writer-model", "patch")]
    assert all(t.input_tokens > 0 and t.output_tokens > 0 and t.error is None for t in traces)
    assert [r["model"] for r in api.conversation_requests()] == ["reasoning-model", "writer-model"]
    # M4: the context package carries OUTLINE and BRIEF, and the selected lines numbered.
    sent = api.conversation_requests()[0]["messages"][0]["content"]
    assert '<document path="OUTLINE.md">' in sent and "silent edits lose trust" in sent
    assert '<document path="BRIEF.md">' in sent and "STYLE.md does not exist" in sent
    assert ">    4| This paper argue that" in sent
    assert any(kind == "stage" and "reasoning" in text for _, kind, text in seen)
    assert any(kind == "json" for _, kind, _ in seen)  # the tool input streamed in deltas

    (proposal,) = view.pending_proposals()
    assert proposal.files[0]["baseRevision"] == view.base_revisions[INTRO_PATH]
    result = app.accept_patch(task.task_id, "latest")
    assert result.status == "applied"
    assert (app.workspace / INTRO_PATH).read_text() == INTRO.replace("paper argue ", "paper argues ")
    assert app.task(task.task_id).status.value == "done"


async def test_reject_then_new_plan_and_patch(app: CoAuthor, api: FakeAnthropicAPI):
    api.push(plan())
    api.push(edits(4, "We argue that every change must be a patch."))
    task = app.create_task("fix the thesis sentence", refs=[ArtifactRef.parse(f"{INTRO_PATH}:4-4")])
    await run_agent(app)
    app.reject_patch(task.task_id, "latest", "keep 'This paper', only fix the verb")
    api.push(plan())
    api.push(edits(4, "This paper argues that every change should be a patch."))
    await run_agent(app)
    view = app.task(task.task_id)
    assert view.proposals["t-001-p1"].state == "rejected"
    assert view.proposals["t-001-p2"].state == "proposed"
    replan = api.conversation_requests()[2]["messages"][0]["content"]
    assert "keep 'This paper', only fix the verb" in replan  # the rejection reason reaches the new plan
    assert app.proposal_event(task.task_id, "t-001-p2").supersedes == "t-001-p1"


async def test_undescribed_figure_blocks_instead_of_guessing(app: CoAuthor, api: FakeAnthropicAPI):
    # The model is ready to write; the rule still blocks: BRIEF.md says nothing about results.pdf.
    api.push(plan())
    task = app.create_task("write a caption for figures/results.pdf saying what it shows")
    await run_agent(app)
    view = app.task(task.task_id)
    assert view.status.value == "blocked" and view.waiting_on == "person"
    assert any("figures/results.pdf" in q for q in view.plan.questions)
    assert "PatchProposed" not in types(app, task.task_id)
    assert len(api.conversation_requests()) == 1  # no patch was even asked for
    # The person answers; the agent plans again and proposes.
    app.post_feedback(task.task_id, "It plots review time per patch; longer patches take longer.", kind="answer")
    api.push(plan())
    api.push(edits(5, "A patch can be read before it lands (Figure~\\ref{fig:results})."))
    await run_agent(app)
    assert app.task(task.task_id).status.value == "awaiting_review"
    assert "review time per patch" in api.conversation_requests()[-1]["messages"][0]["content"]


async def test_model_questions_block_the_task(app: CoAuthor, api: FakeAnthropicAPI):
    api.push(plan(questions=["Which venue is this for?"]))
    task = app.create_task("fit the paper to the venue's page limit")
    await run_agent(app)
    assert app.task(task.task_id).status.value == "blocked"
    assert app.task(task.task_id).plan.questions == ["Which venue is this for?"]


async def test_edit_during_review_is_kept_and_the_agent_rebases(app: CoAuthor, api: FakeAnthropicAPI):
    api.push(plan())
    api.push(edits(4, "This paper argues that every change should be a patch."))
    task = app.create_task("fix the thesis sentence", refs=[ArtifactRef.parse(f"{INTRO_PATH}:4-4")])
    await run_agent(app)
    edited = INTRO.replace("Writing tools", "Assistants")  # the person edits line 3 meanwhile
    (app.workspace / INTRO_PATH).write_text(edited)
    assert app.accept_patch(task.task_id, "latest").status == "needs_rebase"
    assert (app.workspace / INTRO_PATH).read_text() == edited
    api.push(plan())
    api.push(edits(4, "This paper argues that every change should be a patch."))
    await run_agent(app)
    kinds = types(app, task.task_id)
    assert kinds.index("TaskNeedsRebase") < kinds.index("TaskRebased") < len(kinds) - 1
    rebased = next(e.payload for e in app.billboard.events(task_id=task.task_id) if e.type == "TaskRebased")
    assert "auto-rebase" in rebased.reason and rebased.drifted[0].path == INTRO_PATH
    assert "<drift>" in api.conversation_requests()[-1]["messages"][0]["content"]
    assert app.accept_patch(task.task_id, "latest").status == "applied"
    final = (app.workspace / INTRO_PATH).read_text()
    assert final.startswith("\\section{Introduction}\n\\label{sec:intro}\nAssistants that edit")
    assert "This paper argues" in final


async def test_tweak_offers_n_alternatives_from_the_fast_profile(app: CoAuthor, api: FakeAnthropicAPI):
    api.push(plan())
    api.push(tool_use("offer_candidates", {"candidates": [
        {"summary": "shorter", "replacement": "Silent edits lose trust."},
        {"summary": "concrete", "replacement": "Tools that rewrite text unseen lose the author's trust."}]}))
    task = app.create_task("punchier", refs=[ArtifactRef.parse(f"{INTRO_PATH}:3-3")], intent_data={"command": "tweak", "n": 2})
    await run_agent(app)
    view = app.task(task.task_id)
    assert [p.candidate for p in view.pending_proposals()] == [1, 2]
    assert [r["model"] for r in api.conversation_requests()] == ["reasoning-model", "fast-model"]
    app.accept_patch(task.task_id, "t-001-p2")
    assert "unseen lose" in (app.workspace / INTRO_PATH).read_text()
    assert app.task(task.task_id).proposals["t-001-p1"].state == "superseded"


async def test_a_question_is_answered_without_a_patch(app: CoAuthor, api: FakeAnthropicAPI):
    api.push(plan(files=[], patchNeeded=False, answer="The introduction makes one claim: silent edits lose trust."))
    task = app.create_task("what does the introduction claim?")
    await run_agent(app)
    view = app.task(task.task_id)
    assert view.status.value == "done" and "one claim" in view.summary


async def test_api_failure_blocks_the_task_with_the_reason(app: CoAuthor, api: FakeAnthropicAPI):
    api.fail_always(401, "authentication_error", "invalid x-api-key")
    task = app.create_task("anything", refs=[ArtifactRef.parse(f"{INTRO_PATH}:3-3")])
    await run_agent(app)
    view = app.task(task.task_id)
    assert view.status.value == "blocked" and "invalid x-api-key" in view.failure
    trace = next(e.payload for e in app.billboard.events(task_id=task.task_id) if e.type == "LlmCallTraced")
    assert trace.error and trace.profile == "reasoning"


async def test_profiles_are_per_call_settings_of_the_hosts_gateway(app: CoAuthor, api: FakeAnthropicAPI):
    # One gateway (the host's client, its retry policy); each profile only
    # chooses the model and the limits of its own calls.
    gateway = LLMGateway(LLMSettings(model="unused", max_tokens=99, max_retries=0))
    llm = GatewayLLM(app.config, gateway)
    api.push(plan())
    try:
        result = await llm.call_tool("reasoning", "plan", "the system prompt", "the prompt", PLAN_TOOL)
    finally:
        await llm.close()
    assert llm.settings("reasoning").max_retries == 0
    (sent,) = api.conversation_requests()
    assert (sent["model"], sent["max_tokens"]) == ("reasoning-model", app.config.profiles["reasoning"].max_tokens)
    assert sent["tool_choice"] == {"type": "tool", "name": "post_plan"}
    assert result.input["goal"].startswith("Fix the subject-verb agreement")
    trace = result.trace
    assert (trace.profile, trace.model, trace.purpose, trace.error) == ("reasoning", "reasoning-model", "plan", None)
    assert trace.input_tokens > 0 and trace.output_tokens > 0


def test_apply_edits_line_ranges():
    text = "a\nb\nc\nd\n"
    assert apply_edits(text, []) == text
    from pneuma_coauthor.workflow.agent import Edit, WorkflowError

    assert apply_edits(text, [Edit("x", 2, 3, "B\nC"), Edit("x", 4, 3, "new")]) == "a\nB\nC\nnew\nd\n"
    assert apply_edits("a\nb", [Edit("x", 2, 2, "B")]) == "a\nB"
    with pytest.raises(WorkflowError, match="overlap"):
        apply_edits(text, [Edit("x", 2, 3, "x"), Edit("x", 3, 3, "y")])
