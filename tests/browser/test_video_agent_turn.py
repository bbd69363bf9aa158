"""One turn of the REAL Claude Code CLI against the fake Anthropic API in the
video mode (issue 30, "Done when"; docs/video.md): the person points at a
scene's heading on the player's stage and asks for a new line; the model's
request carries that element with its scene and time, the scripted model
edits the scene file with a Bash call, and the player in Debian's Chromium
shows the new text at the same frame.

Everything runs in the loopback-only network namespace of the root conftest.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import send, viewer_answer
from tests.browser.test_agent_viewer_actions import (
    TURN,
    ThreadedFakeAPI,
    bash,
    fake_api,  # noqa: F401 (the fixture)
    start_with_real_cli,
)
from tests.browser.test_video_player import CURRENT, HOST, OUTRO, PLAYER, click_in_scene
from tests.e2e.pneuma_run import CLAUDE_BIN
from tests.fakes.anthropic_api import text
from tests.loopback import fail_unless_loopback_only


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    fail_unless_loopback_only("the video turn test", "tests/browser/test_video_agent_turn.py")


def user_texts(fake_api: ThreadedFakeAPI) -> list[str]:
    """The text of every block the person's side sent the model, oldest first."""
    requests = fake_api._on_loop(lambda: fake_api.api.conversation_requests())
    return [block["text"] if isinstance(block, dict) else str(block)
            for request in requests for message in request["messages"] if message["role"] == "user"
            for block in (message["content"] if isinstance(message["content"], list) else [message["content"]])
            if not isinstance(block, dict) or block.get("type") == "text"]


NEW_OUTRO = "Made by you, frame by frame"
RETITLE = (f"python3 -c \"p='scenes/03-outro.html'; s=open(p).read(); "
           f"open(p, 'w').write(s.replace('Your turn: tell the agent what to make', '{NEW_OUTRO}'))\"")


@pytest.mark.skipif(CLAUDE_BIN is None, reason="the real Claude Code CLI is not installed: "
                    "pip install claude-agent-sdk==0.2.187")
def test_the_agent_edits_the_scene_the_person_pointed_at_and_the_player_shows_it(
        pneuma_server: Any, fake_api: ThreadedFakeAPI,  # noqa: F811
        open_page: Any, shot: Any) -> None:
    fake_api.push(text("Hi! A starter video of about eight seconds is playing."))
    server = start_with_real_cli(pneuma_server, fake_api, "video")
    page = open_page(server, viewport={"width": 1400, "height": 900})
    page.wait_for_function(f"() => window.pneuma && {HOST} && {HOST}.instance && {HOST}.instance.viewer")
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn
    viewer_answer(server, "navigate-to", {"scene": "outro", "time": 1.5})
    click_in_scene(page, "h2")
    page.wait_for_function(f"() => {PLAYER}.selection !== null")

    fake_api.push(text("Changing the outro's line."), bash(RETITLE, "Rewrite the outro's heading"))
    fake_api.push(text("The outro now says it."))
    send(page, "Make this line say that the person made it")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    assert fake_api.pending() == 0

    # The agent got the element the person pointed at, with its scene and time.
    said = [text for text in user_texts(fake_api) if "Make this line say" in text]
    assert said, "the person's message did not reach the model"
    assert ('<viewer-context mode="video" file="scenes/03-outro.html" scene="outro" time="7.5" scene-time="1.5" '
            'frame="225" selector="section.outro &gt; h2" tag="h2">Your turn: tell the agent what to make'
            '</viewer-context>') in said[-1], said[-1]
    # The file changed on disk and the player shows it, at the same time.
    assert NEW_OUTRO in (server.workspace / "scenes" / "03-outro.html").read_text(encoding="utf-8")
    expect(page.frame_locator(CURRENT).locator("h2")).to_have_text(NEW_OUTRO, timeout=10_000)
    assert page.get_attribute(".video-stage", "data-frame") == str(OUTRO + 45)
    shot(page, "video-agent-turn")

    # Compare draws both states through the same player, read-only, at the changed scene.
    page.locator('.turn-changes[data-ref="1"] .compare-btn').click()
    expect(page.locator(".compare-panel")).to_have_attribute("data-ready", "true", timeout=TURN)
    for side, heading in (("before", "Your turn: tell the agent what to make"), ("after", NEW_OUTRO)):
        where = page.locator(f'.compare-side[data-side="{side}"]')
        expect(where.locator(".video-stage")).to_have_attribute("data-scene", "outro")
        expect(where.frame_locator(CURRENT).locator("h2")).to_have_text(heading)
        assert where.locator(".video-player").get_attribute("data-readonly") == "1"
    assert page.console_errors == []
