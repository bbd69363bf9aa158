"""Hostile questions and plans in Chromium (issue 26, item 4;
pneuma/web/lib/question-cards.js): an AskUserQuestion or ExitPlanMode
request with missing fields, 500 options, huge texts, HTML in its labels,
nested junk, or random JSON. Every one shows a card that can be answered
(the question or plan card, or the generic permission card under a line
saying why), never markup from the request, never a page error; and every
answer reaches the agent, so no turn is left waiting."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.browser_helpers import CHROMIUM, browser_problems
from tests.browser.test_history_paging import ThreadServer
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

TIME_CAP = 3.0  # seconds for the random part
HTML = '<img src=x onerror="window.__owned=(window.__owned||0)+1"><script>window.__owned=1</script>'
BIG = "A very long question that goes on. " * 2_500  # ~90 kB: under the card's 100,000 characters


def asks(*questions: Any) -> dict[str, Any]:
    return {"questions": list(questions)}


def q(text: Any = "Which one?", options: Any = None, **more: Any) -> dict[str, Any]:
    if options is None:
        options = [{"label": "One", "description": "the first"}, {"label": "Two", "description": ""}]
    return {"question": text, "header": "Pick", "options": options, "multiSelect": False, **more}


# (name, tool, input, the card expected: question | plan | generic)
CASES: list[tuple[str, str, Any, str]] = [
    ("no input", "AskUserQuestion", None, "generic"),
    ("input is a list", "AskUserQuestion", [1, 2], "generic"),
    ("no questions", "AskUserQuestion", {}, "generic"),
    ("questions not a list", "AskUserQuestion", {"questions": "Which?"}, "generic"),
    ("no questions at all", "AskUserQuestion", asks(), "generic"),
    ("a question without text", "AskUserQuestion", asks(q(text="")), "generic"),
    ("question text a number", "AskUserQuestion", asks(q(text=42)), "generic"),
    ("500 options", "AskUserQuestion", asks(q(options=[{"label": f"o{i}"} for i in range(500)])), "generic"),
    ("nested junk for a label", "AskUserQuestion", asks(q(options=[{"label": {"a": [[[{}]]]}}])), "generic"),
    ("options not a list", "AskUserQuestion", asks(q(options="a,b")), "generic"),
    ("nine questions", "AskUserQuestion", asks(*[q(text=f"Q{i}?") for i in range(9)]), "generic"),
    ("the same question twice", "AskUserQuestion", asks(q(), q()), "generic"),
    ("a label of 200 kB", "AskUserQuestion", asks(q(options=[{"label": "x" * 200_000}])), "generic"),
    ("HTML everywhere", "AskUserQuestion",
     asks({"question": HTML, "header": HTML, "multiSelect": True,
           "options": [{"label": HTML, "description": HTML}, {"label": "Plain", "description": HTML}]}), "question"),
    ("a huge question", "AskUserQuestion", asks(q(text=BIG)), "question"),
    ("multiSelect as a string", "AskUserQuestion", asks(q(multiSelect="yes")), "question"),
    ("free text only (options null)", "AskUserQuestion", asks(q(options=None) | {"options": None}), "question"),
    ("a plan with markup", "ExitPlanMode", {"plan": f"# Plan\n\n{HTML}\n\n1. step"}, "plan"),
    ("a huge plan", "ExitPlanMode", {"plan": "- step\n" * 20_000}, "plan"),
    ("a plan that is an object", "ExitPlanMode", {"plan": {"steps": [1, 2]}}, "plan"),
    ("no plan", "ExitPlanMode", None, "plan"),
]


def junk(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value, biased toward the shapes a question has."""
    kinds = ["str", "int", "none", "bool", "list", "dict", "question", "option"]
    kind = rng.choice(kinds if depth < 4 else kinds[:4])
    if kind == "str":
        return rng.choice(["", "Which?", HTML, "x" * rng.randint(0, 3000), "\u202e\u0000é"])
    if kind == "int":
        return rng.randint(-5, 5)
    if kind == "none":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "list":
        return [junk(rng, depth + 1) for _ in range(rng.randint(0, 6))]
    if kind == "dict":
        return {rng.choice(["question", "questions", "options", "label", "plan", "header", "x"]): junk(rng, depth + 1)
                for _ in range(rng.randint(0, 4))}
    if kind == "question":
        return {"question": junk(rng, depth + 1), "header": junk(rng, depth + 1),
                "options": junk(rng, depth + 1), "multiSelect": junk(rng, depth + 1)}
    return {"label": junk(rng, depth + 1), "description": junk(rng, depth + 1)}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ThreadServer]:
    server = ThreadServer(tmp_path / "ws")
    yield server
    server.close()


def answered(served: ThreadServer) -> dict[str, tuple[Any, ...]]:
    return {call[1]: call for call in list(served.server.agent.calls) if call[0] == "answer_permission"}


def test_hostile_questions_and_plans_always_show_an_answerable_card(served: ThreadServer) -> None:
    problems = browser_problems()
    if problems:
        pytest.skip("; ".join(problems))
    from playwright.sync_api import expect, sync_playwright

    from pneuma.tools.chromium import CHROMIUM_ARGS

    rng = random.Random(26)
    seen = {"question": 0, "plan": 0, "generic": 0}
    page_errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.on("pageerror", lambda error: page_errors.append(str(error)))
            page.goto(served.url)
            page.wait_for_selector('.pill[data-state="open"]', timeout=20_000)

            def ask(n: int, tool: str, tool_input: Any) -> tuple[str, Any]:
                request_id = f"req-{n}"
                served.emit({"type": "permission_request", "request": {
                    "request_id": request_id, "tool_name": tool, "input": tool_input, "tool_use_id": f"toolu_{n}"}})
                card = page.locator(f'.perm-dock [data-request="{request_id}"]')
                expect(card).to_be_visible(timeout=10_000)
                return request_id, card

            def kind_of(card: Any) -> str:
                classes = card.get_attribute("class") or ""
                return "question" if "question-card" in classes else "plan" if "plan-card" in classes else "generic"

            def answer(request_id: str, card: Any, kind: str) -> None:
                if kind == "question":
                    card.locator("button.skip").click()
                elif kind == "plan":
                    card.locator("button.approve").click()
                else:
                    card.locator("button.allow").click()
                expect(card).to_have_count(0, timeout=10_000)
                deadline = time.monotonic() + 10
                while request_id not in answered(served):
                    assert time.monotonic() < deadline, f"the agent never heard the answer to {request_id}"
                    time.sleep(0.02)
                seen[kind] += 1

            for n, (name, tool, tool_input, expected) in enumerate(CASES):
                request_id, card = ask(n, tool, tool_input)
                assert kind_of(card) == expected, name
                if expected == "generic":
                    expect(page.locator(f'.question-fallback [data-request="{request_id}"]')).to_have_count(
                        1 if tool == "AskUserQuestion" else 0)
                # Bounded on screen, whatever the size of what the agent sent.
                box = page.locator(".perm-dock").bounding_box()
                assert box and box["height"] <= 800, (name, box)
                assert page.locator(".perm-dock img, .perm-dock script").count() == 0, name
                if name == "HTML everywhere":
                    # Choosing the HTML label sends it back exactly as the agent wrote it.
                    card.locator('[data-option="0"]').click()
                    card.locator("button.submit").click()
                    expect(card).to_have_count(0, timeout=10_000)
                    deadline = time.monotonic() + 10
                    while request_id not in answered(served):
                        assert time.monotonic() < deadline
                        time.sleep(0.02)
                    call = answered(served)[request_id]
                    assert call[2] == "allow" and call[3]["answers"] == {HTML: HTML}, call
                    seen["question"] += 1
                    continue
                answer(request_id, card, expected)

            started = time.monotonic()
            fuzzed = 0
            while time.monotonic() - started < TIME_CAP and fuzzed < 80:
                n = len(CASES) + fuzzed
                tool = rng.choice(["AskUserQuestion", "AskUserQuestion", "ExitPlanMode"])
                roll = rng.random()
                tool_input = (junk(rng) if roll < 0.3 else {"questions": junk(rng), "plan": junk(rng)} if roll < 0.6
                              else asks(*[q(text=f"{junk(rng)!r:.40}?{i}", options=[
                                  {"label": f"{junk(rng)!r:.60}", "description": f"{junk(rng)!r:.80}"}
                                  for _ in range(rng.randint(0, 5))]) for i in range(rng.randint(1, 4))]))
                request_id, card = ask(n, tool, tool_input)
                answer(request_id, card, kind_of(card))
                fuzzed += 1
            assert page.evaluate("() => window.__owned") is None
            assert page_errors == []
            expect(page.locator(".perm-dock")).to_have_count(0)
        finally:
            browser.close()
    assert fuzzed >= 10 and seen["question"] and seen["plan"] and seen["generic"]
    record("26.4 hostile questions and plans",
           f"{len(CASES)} crafted and {count(fuzzed)} random AskUserQuestion/ExitPlanMode requests: "
           f"{seen['question']} question cards, {seen['plan']} plan cards, {seen['generic']} generic cards; "
           "every one answered and heard by the agent, 0 page errors, 0 markup from the request")
