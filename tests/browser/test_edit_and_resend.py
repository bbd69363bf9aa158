""""Edit and resend" forks the REAL Claude Code CLI's conversation, and the
old branch comes back (issue 28, item 4's "Done when"; docs/conversations.md,
"Branches").

`pneuma run --mode doc` runs the real CLI against the fake Anthropic
Messages API (tests/fakes/anthropic_api.py), the shell open in Debian's
Chromium. The person sends three messages, then edits the first in place
and presses Enter: the chat shows the edited message alone, and the model's
next request holds the edited first message and none of the later turns
(the CLI resumed its session cut before that message, as a new session).
"2 versions · show the other" switches back: the chat shows the old three
turns, and the next message reaches a CLI that resumed the old session (its
request holds the three old turns).

Everything runs in the loopback-only network namespace of the root conftest.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import send
from tests.browser.test_agent_viewer_actions import (
    TURN,
    ThreadedFakeAPI,
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

FIRST, SECOND, THIRD = "Write about tides", "Now about the moon", "And about the sun"
EDITED = "Write about rivers instead"


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    fail_unless_loopback_only("the edit-and-resend test", "tests/browser/test_edit_and_resend.py")


def said_by_person(request: dict[str, Any]) -> list[str]:
    """The person's texts in one request to the model, oldest first (the
    CLI's own reminders and Pneuma's notes left out)."""
    texts = []
    for message in request.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message["content"]
        blocks = [content] if isinstance(content, str) else [
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        for block in blocks:
            for said in (FIRST, SECOND, THIRD, EDITED, "Go on"):
                if block.rstrip().endswith(said):
                    texts.append(said)
    return texts


def last_request(fake_api: ThreadedFakeAPI) -> dict[str, Any]:
    requests: list[dict[str, Any]] = fake_api._on_loop(fake_api.api.conversation_requests)
    return requests[-1]


def test_edit_and_resend_forks_the_cli_and_the_old_branch_resumes(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:
    fake_api.push(text("Hi! What shall we write?"))
    server = start_with_real_cli(pneuma_server, fake_api, "doc")
    page = open_page(server)
    results = page.locator(".result-line")
    expect(results).to_have_count(1, timeout=TURN)  # the greeting turn
    for n, (said, answer) in enumerate([(FIRST, "Tides done."), (SECOND, "Moon done."),
                                        (THIRD, "Sun done.")]):
        fake_api.push(text(answer))
        send(page, said)
        expect(results).to_have_count(n + 2, timeout=TURN)
    assert said_by_person(last_request(fake_api)) == [FIRST, SECOND, THIRD]

    # Edit the first message in place; Enter sends it on a new branch.
    first = page.locator(".msg.user").filter(has_text=FIRST)
    first.locator(".branch-edit-button").click()
    box = page.locator(".branch-edit-text")
    expect(box).to_be_focused()
    expect(box).to_have_value(FIRST)
    fake_api.push(text("Rivers done."))
    box.fill(EDITED)
    shot(page, "edit-and-resend-1-editing")
    box.press("Enter")
    expect(page.locator(".msg.user .bubble")).to_have_text([EDITED], timeout=TURN)
    expect(results).to_have_count(2, timeout=TURN)  # the greeting, the edited turn
    expect(page.locator(".msg.assistant").last).to_contain_text("Rivers done.")
    assert fake_api.pending() == 0
    forked = last_request(fake_api)
    assert said_by_person(forked) == [EDITED]
    # The greeting stays, as the agent's own message: its session was forked.
    assert any(m["role"] == "assistant" and "Hi! What shall we write?" in str(m["content"])
               for m in forked["messages"])
    for later in ("Tides done.", "Moon done.", "Sun done."):
        assert later not in str(forked["messages"])

    # The edited message says where the versions split; back to the old one.
    edited = page.locator(".msg.user").filter(has_text=EDITED)
    expect(edited.locator(".branch-versions")).to_contain_text("2 versions")
    shot(page, "edit-and-resend-2-versions")
    edited.locator(".branch-show-other").click()
    expect(page.locator(".msg.user .bubble")).to_have_text([FIRST, SECOND, THIRD], timeout=TURN)
    expect(page.locator(".msg.user").filter(has_text=FIRST).locator(".branch-versions")).to_contain_text(
        "2 versions")

    # The agent resumed the old session: its next request holds the old turns.
    fake_api.push(text("Going on."))
    send(page, "Go on")
    expect(page.locator(".msg.assistant").last).to_contain_text("Going on.", timeout=TURN)
    resumed = last_request(fake_api)
    assert said_by_person(resumed) == [FIRST, SECOND, THIRD, "Go on"]
    assert EDITED not in str(resumed["messages"])
