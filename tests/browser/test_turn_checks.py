"""The checks after every turn with the REAL Claude Code CLI (issue 28,
item 5, "Done when"; docs/checks.md).

`pneuma run --mode diagram` with the real CLI against the fake Anthropic
Messages API (tests/fakes/anthropic_api.py), the shell open in Debian's
Chromium. A turn writes a diagram with a syntax error: its badge fails,
naming the file and the line, and exactly one repair turn goes to the agent
holding that error (the fake API's recorded request); the repair fixes the
diagram and its badge passes. With the "repair" switch off, a turn that
breaks the diagram again gets its failing badge and no repair turn: the
next request the model gets is the person's own message. A reload shows
every badge again.

Everything runs in the loopback-only network namespace of the root conftest.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_agent_viewer_actions import (
    TURN,
    ThreadedFakeAPI,
    agent_turn,
    bash,
    fake_api,  # noqa: F401 (the fixture)
    start_with_real_cli,
)
from tests.e2e.pneuma_run import CLAUDE_BIN
from tests.fakes.anthropic_api import text
from tests.loopback import fail_unless_loopback_only

pytestmark = pytest.mark.skipif(
    CLAUDE_BIN is None,
    reason="the real Claude Code CLI is not installed: pip install claude-agent-sdk==0.2.187",
)
REPAIR_OPENING = "Pneuma's checks after your last turn found problems"
BROKEN = "printf 'flowchart TD\\n  A --> B\\n  B --> (C\\n' > flow.mmd"
FIXED = "printf 'flowchart TD\\n  A --> B\\n  B --> C\\n' > flow.mmd"


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    fail_unless_loopback_only("the turn checks tests", "tests/browser/test_turn_checks.py")


def user_texts(fake_api: ThreadedFakeAPI) -> list[str]:
    """Every user text the model was sent, in the order of the conversation
    as the newest request holds it."""
    requests = fake_api._on_loop(fake_api.api.conversation_requests)
    texts: list[str] = []
    for message in requests[-1]["messages"] if requests else []:
        content = message["content"]
        if message["role"] != "user":
            continue
        if isinstance(content, str):
            texts.append(content)
            continue
        joined = "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
        if joined.strip():
            texts.append(joined)
    return texts


def test_a_broken_diagram_fails_its_badge_and_gets_one_repair_turn_unless_repair_is_off(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:
    fake_api.push(text("Hi! What do you want to draw?"))
    server = start_with_real_cli(pneuma_server, fake_api, "diagram")
    page = open_page(server, viewport={"width": 1400, "height": 900})
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn

    # The turn breaks the diagram; the repair turn fixes it.
    fake_api.push(text("Drawing the flow."), bash(BROKEN, "Write the flow"))
    fake_api.push(text("The flow is drawn."))
    agent_turn(page, fake_api, "Draw a flow from A to C", turns=2)
    # The repair waits a few seconds (the person may cancel it): its replies are queued now.
    fake_api.push(text("Fixing the bracket."), bash(FIXED, "Fix the flow"))
    fake_api.push(text("Fixed: B --> C."))

    first = page.locator(".msg.user").nth(0).locator(".turn-checks")
    expect(first).to_have_attribute("data-status", "failed", timeout=30_000)
    expect(first.locator(".turn-checks-badge")).to_contain_text("1 problem")
    expect(first.locator(".turn-checks-where")).to_have_text("flow.mmd:3")
    # The repair turn is announced under the failed turn, then sent by itself.
    expect(first.locator(".turn-checks-repair")).to_be_visible()
    expect(page.locator(".result-line")).to_have_count(3, timeout=TURN)
    expect(first.locator(".turn-checks-repair")).to_have_attribute("data-state", "sent")
    expect(page.locator(".msg.user").nth(1).locator(".turn-checks-repair-label")).to_be_visible()
    repairs = [t for t in user_texts(fake_api) if REPAIR_OPENING in t]
    assert len(repairs) == 1, repairs
    assert "flow.mmd:3: Parse error on line 3:" in repairs[0] and "[parse]" in repairs[0], repairs[0]
    second = page.locator(".msg.user").nth(1).locator(".turn-checks")
    expect(second).to_have_attribute("data-status", "passed", timeout=30_000)
    assert (server.workspace / "flow.mmd").read_text() == "flowchart TD\n  A --> B\n  B --> C\n"

    first.locator(".turn-checks-badge").click()
    expect(first.locator(".turn-check-problem")).to_have_attribute("data-line", "3")
    shot(page, "turn-checks-failed-then-repaired")

    # Repair off (the switch under the problems): a broken turn gets no repair.
    switch = first.locator(".turn-checks-repair-switch input")
    expect(switch).to_be_checked()
    switch.uncheck()
    expect(switch).not_to_be_checked()
    fake_api.push(text("Breaking it again."), bash(BROKEN, "Write the flow"))
    fake_api.push(text("Done."))
    agent_turn(page, fake_api, "Put the bracket back", turns=4)
    third = page.locator(".msg.user").nth(2).locator(".turn-checks")
    expect(third).to_have_attribute("data-status", "failed", timeout=30_000)
    expect(third.locator(".turn-checks-repair")).to_have_count(0)
    fake_api.push(text("Leaving it as it is."))
    agent_turn(page, fake_api, "Thanks, leave it", turns=5)
    texts = user_texts(fake_api)
    assert [t for t in texts if REPAIR_OPENING in t] == repairs
    assert texts[-1].endswith("Thanks, leave it") and texts[-2].endswith("Put the bracket back"), texts[-3:]

    # A reload shows every turn's badge again (kept with the conversation).
    page.reload()
    badges = page.locator(".msg.user .turn-checks")
    expect(badges).to_have_count(3, timeout=15_000)
    assert [badges.nth(i).get_attribute("data-status") for i in range(3)] == ["failed", "passed", "failed"]
    expect(badges.nth(0).locator(".turn-checks-where")).to_have_text("flow.mmd:3")
    assert page.console_errors == []
