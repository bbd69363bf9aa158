"""A CoAuthor profile on the gateway's openai provider: the plan comes from
an OpenAI-compatible server (the fake Chat Completions API), the patch from
the Anthropic fake, through the one gateway; a wrong profile blocks the task
with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from pneuma_coauthor.domain.model import ArtifactRef
from pneuma_coauthor.llm import GatewayLLM
from pneuma_coauthor.workflow.agent import AgentHost, DefaultCoAuthorAgent
from pneuma_coauthor.workflow.usecases import CoAuthor
from tests.fakes.anthropic_api import tool_use
from tests.fakes.openai_chat import FakeOpenAIChat, tool_call

from .conftest import INTRO

INTRO_PATH = "sections/intro.tex"
PLAN = {
    "goal": "Fix the subject-verb agreement in the thesis sentence",
    "issues": ["'This paper argue' lacks agreement"], "strategy": ["Change 'argue' to 'argues'"],
    "scope": [f"{INTRO_PATH}:4"], "risks": [], "questions": [], "files": [INTRO_PATH], "patchNeeded": True,
}


def write_profiles(paper: Path, reasoning: str) -> None:
    (paper / ".pneuma/coauthor.toml").write_text(
        '[build]\nlatexmk = "off"\n[profiles.fast]\nmodel = "fast-model"\n'
        '[profiles.writer]\nmodel = "writer-model"\n' + reasoning, encoding="utf-8")


@pytest.fixture
async def deepseek(monkeypatch: pytest.MonkeyPatch):
    async with FakeOpenAIChat(require_key="sk-deepseek") as fake:
        monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek")
        yield fake


async def run_agent(app: CoAuthor) -> None:
    llm = GatewayLLM(app.config)
    try:
        await AgentHost(app, {"coauthor": DefaultCoAuthorAgent(app, llm)}).run_until_idle()
    finally:
        await llm.close()


async def test_the_reasoning_profile_plans_through_an_openai_compatible_server(paper, anthropic, deepseek):
    write_profiles(paper, f'[profiles.reasoning]\nprovider = "openai"\nmodel = "deepseek-reasoner"\n'
                          f'base_url = "{deepseek.base_url}"\napi_key_env = "DEEPSEEK_API_KEY"\n')
    app = CoAuthor(paper)
    deepseek.push(tool_call("post_plan", PLAN))
    anthropic.push(tool_use("propose_edits", {"summary": "agreement", "edits": [
        {"path": INTRO_PATH, "lineStart": 4, "lineEnd": 4,
         "replacement": "This paper argues that every change should be a patch."}]}))
    task = app.create_task("fix the grammar of the thesis sentence", refs=[ArtifactRef.parse(f"{INTRO_PATH}:4-4")])
    await run_agent(app)

    assert app.task(task.task_id).status.value == "awaiting_review"
    traces = [e.payload for e in app.billboard.events(task_id=task.task_id) if e.type == "LlmCallTraced"]
    assert [(t.profile, t.model, t.error) for t in traces] == [
        ("reasoning", "deepseek-reasoner", None), ("writer", "writer-model", None)]
    assert traces[0].input_tokens > 0 and traces[0].output_tokens > 0 and traces[0].stop_reason == "tool_use"
    # The plan call went to the OpenAI-compatible server, with its key, forced to post_plan...
    (sent,) = deepseek.requests
    assert deepseek.keys == ["Bearer sk-deepseek"] and sent["model"] == "deepseek-reasoner"
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "post_plan"}}
    assert ">    4| This paper argue that" in sent["messages"][-1]["content"]
    # ...and only the patch to Anthropic.
    assert [r["model"] for r in anthropic.conversation_requests()] == ["writer-model"]
    app.accept_patch(task.task_id, "latest")
    assert (app.workspace / INTRO_PATH).read_text() == INTRO.replace("paper argue ", "paper argues ")


async def test_a_profile_with_a_wrong_provider_blocks_the_task_with_the_reason(paper, anthropic, deepseek):
    write_profiles(paper, '[profiles.reasoning]\nprovider = "openia"\nmodel = "gpt-4.1"\n')
    app = CoAuthor(paper)
    task = app.create_task("anything", refs=[ArtifactRef.parse(f"{INTRO_PATH}:3-3")])
    await run_agent(app)
    view = app.task(task.task_id)
    assert view.status.value == "blocked" and "openia" in view.failure and "'openai'" in view.failure
    assert deepseek.requests == [] and anthropic.requests == []
