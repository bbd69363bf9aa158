"""The agent itself drives the webcraft and diagram viewers, in Chromium.

`pneuma run --mode webcraft|diagram` runs the REAL Claude Code CLI (the
binary bundled in claude-agent-sdk==0.2.187) against the fake Anthropic
Messages API of tests/fakes/anthropic_api.py, served from a background
thread; the shell is open in Debian's Chromium. The person types a message
in the composer; the scripted model answers with Bash tool calls whose
commands are the `curl … /api/viewer/action` the workspace's CLAUDE.md
teaches. The CLI runs curl, the server hands the action to the open page,
the mode's real viewer carries it out and answers, and that answer is the
curl's output, which the CLI sends back to the model as the tool_result of
its next request. Each test checks both ends: what the person sees change in
the page, and what the agent read.

Everything runs in the loopback-only network namespace of the root
conftest; the ``loopback_only_network`` fixture refuses to start the CLI
anywhere else.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import send, viewer_answer
from tests.e2e.pneuma_run import CLAUDE_BIN
from tests.fakes.anthropic_api import FakeAnthropicAPI, ToolUseBlock, text, tool_use
from tests.loopback import fail_unless_loopback_only

TURN = 60_000  # ms an agent turn of the real CLI (three API round trips, two curls) may take
RENDERED = ".pneuma-diagram[data-state=rendered] .dg-stage svg"

# The generic command of CLAUDE.md's "Actions" section, up to its payload.
TAUGHT_PREFIX = (
    'curl -s -X POST "$PNEUMA_API/api/viewer/action" -H "Authorization: Bearer $PNEUMA_TOKEN" '
    "-H 'Content-Type: application/json'"
)

pytestmark = pytest.mark.skipif(
    CLAUDE_BIN is None,
    reason="the real Claude Code CLI is not installed: pip install claude-agent-sdk==0.2.187",
)


# --- the fake Messages API, on a loop of its own -------------------------------------


class ThreadedFakeAPI:
    """tests/fakes/anthropic_api.py on an event loop in a background thread:
    the browser tests are synchronous (Playwright's sync API owns the main
    thread's loop). Every touch of the fake goes through that loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.api = FakeAnthropicAPI()
        self.base_url: str = self._call(self.api.start())

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def _on_loop(self, function: Any) -> Any:
        async def run() -> Any:
            return function()

        return self._call(run())

    def push(self, *blocks: Any) -> None:
        """Queue the model's next reply (text and tool_use blocks)."""
        self._on_loop(lambda: self.api.push(*blocks))

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool_result block the CLI sent back to the model, oldest first."""
        return self._on_loop(self.api.tool_results)

    def pending(self) -> int:
        """Scripted replies no request has taken yet."""
        return self._on_loop(lambda: self.api.pending)

    def close(self) -> None:
        self._call(self.api.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    """Refuse to start the real CLI where it could reach beyond this machine."""
    fail_unless_loopback_only("the agent viewer-action tests", "tests/browser/test_agent_viewer_actions.py")


@pytest.fixture
def fake_api() -> Iterator[ThreadedFakeAPI]:
    if shutil.which("curl") is None:
        pytest.fail("curl is needed for the agent's viewer actions: apt-get install -y curl")
    api = ThreadedFakeAPI()
    yield api
    api.close()


def start_with_real_cli(pneuma_server: Any, fake_api: ThreadedFakeAPI, mode: str) -> Any:
    """`pneuma run --mode <mode>` whose agent is the real CLI talking to the fake API."""
    return pneuma_server(mode, claude_bin=CLAUDE_BIN, env={
        "ANTHROPIC_BASE_URL": fake_api.base_url,
        "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        # As root the CLI refuses bypassPermissions (both modes' default)
        # unless told that this machine is a sandbox.
        "IS_SANDBOX": "1",
    })  # fmt: skip


# --- what CLAUDE.md teaches, what the agent read back -----------------------------------


def taught_curl(workspace: Path, action_id: str, params: dict[str, Any]) -> str:
    """The viewer-action command as the workspace's CLAUDE.md teaches it,
    for ``action_id`` with ``params``: CLAUDE.md's own command line with this
    payload. The action must be in CLAUDE.md's table of actions, and where
    CLAUDE.md shows an example for it, the example names the same params."""
    claude_md = (workspace / "CLAUDE.md").read_text(encoding="utf-8")
    commands = re.findall(r"^curl .*/api/viewer/action.*$", claude_md, re.MULTILINE)
    assert commands, "CLAUDE.md shows no curl command for /api/viewer/action"
    prefix, _, _ = commands[0].partition(" -d '")
    assert prefix == TAUGHT_PREFIX, prefix
    assert f"| `{action_id}` |" in claude_md, f"CLAUDE.md does not list the action {action_id}"
    for command in commands:
        payload = json.loads(command.partition(" -d '")[2].rstrip("'").replace("{...}", "{}"))
        if payload["actionId"] == action_id:
            assert set(payload["params"]) <= set(params), (payload, params)
    return f"{prefix} -d {shlex.quote(json.dumps({'actionId': action_id, 'params': params}, separators=(',', ':')))}"


def bash(command: str, description: str) -> ToolUseBlock:
    return tool_use("Bash", {"command": command, "description": description})


def block_text(content: Any) -> str:
    """The text of a tool_result's content (a str or text blocks)."""
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def answer_read_by_agent(fake_api: ThreadedFakeAPI, call: ToolUseBlock) -> dict[str, Any]:
    """What the curl of ``call`` printed, as the CLI sent it back to the model,
    parsed: the viewer's answer, or a failed assertion if curl got none."""
    results = [r for r in fake_api.tool_results() if r["tool_use_id"] == call.id]
    assert results, f"the CLI sent no tool_result for {call.input['command']}"
    (result,) = results
    assert not result.get("is_error"), result
    output = block_text(result["content"]).strip()
    try:
        answer = json.loads(output)
    except json.JSONDecodeError:
        raise AssertionError(f"curl printed no JSON answer: {output!r}") from None
    assert isinstance(answer, dict) and answer.get("success") is True, answer
    return answer


def agent_turn(page: Any, fake_api: ThreadedFakeAPI, message: str, turns: int) -> None:
    """The person sends ``message``; wait until the page shows ``turns``
    finished turns and the CLI took every scripted reply."""
    send(page, message)
    expect(page.locator(".result-line")).to_have_count(turns, timeout=TURN)
    assert fake_api.pending() == 0, "the CLI did not ask for every scripted reply"


# --- webcraft -------------------------------------------------------------------------


def webcraft_frame_ready(page: Any, viewport: str) -> None:
    """Wait until the preview frame of that width shows the seed's heading."""
    inner = page.frame_locator(f'iframe.webcraft-frame[data-viewport="{viewport}"]')
    expect(inner.locator("h1")).to_have_text("Notes that think with you.", timeout=15_000)


def test_the_agent_switches_the_webcraft_preview_to_phone_and_reads_the_view(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:
    fake_api.push(text("Hi! A starter landing page is open. What site do you want?"))
    server = start_with_real_cli(pneuma_server, fake_api, "webcraft")
    page = open_page(server)
    webcraft_frame_ready(page, "desktop")
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn
    expect(page.locator("iframe.webcraft-frame")).to_have_count(1)

    to_phone = bash(taught_curl(server.workspace, "set-viewport", {"viewport": "phone"}),
                    "Show the preview at phone width")
    describe = bash(taught_curl(server.workspace, "describe-view", {}), "See what the person sees")
    fake_api.push(text("Let me look at it on a phone."), to_phone)
    fake_api.push(describe)
    fake_api.push(text("This is the landing page at phone width."))
    agent_turn(page, fake_api, "How does it look on a phone?", turns=2)

    # What the person sees: the preview went to the phone width.
    phone = page.locator("iframe.webcraft-frame")
    expect(phone).to_have_count(1)
    expect(phone).to_have_attribute("data-viewport", "phone")
    webcraft_frame_ready(page, "phone")
    inner = page.locator('iframe.webcraft-frame[data-viewport="phone"]').element_handle().content_frame()
    assert inner.evaluate("innerWidth") == 390
    expect(page.locator('.tool-card.done[data-tool="Bash"]')).to_have_count(2)
    expect(page.get_by_text("This is the landing page at phone width.")).to_be_visible()
    shot(page, "agent-webcraft-phone")

    # What the agent read: the viewer's own answers, as curl printed them.
    assert answer_read_by_agent(fake_api, to_phone) == {
        "success": True, "message": "Preview at phone (390 px)", "data": {"viewport": "phone", "widths": [390]}}
    described = answer_read_by_agent(fake_api, describe)
    view = described["data"]
    assert view["page"] == "index.html" and view["title"].startswith("Lumen"), view
    assert view["viewport"] == "phone" and view["widths"] == [390], view
    assert view["pages"] == ["index.html", "about.html"], view
    assert described["message"].startswith("The person sees index.html"), described
    # The same question asked now gets the same answer: it came from this page.
    assert viewer_answer(server, "describe-view")["data"] == view
    assert page.console_errors == []


# --- diagram ----------------------------------------------------------------------------


def test_the_agent_opens_another_diagram_and_turns_it_dark(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:
    fake_api.push(text("Hi! This is a diagram of Pneuma itself. What do you want to draw?"))
    server = start_with_real_cli(pneuma_server, fake_api, "diagram")
    page = open_page(server, viewport={"width": 1400, "height": 900})
    page.wait_for_selector(RENDERED, timeout=20_000)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn
    selected_tab = page.locator(".dg-tab[aria-selected=true]")
    expect(selected_tab).to_have_attribute("data-path", "architecture.mmd")
    expect(page.locator(".pneuma-diagram")).to_have_attribute("data-theme", "light")

    navigate = bash(taught_curl(server.workspace, "navigate-to", {"file": "message-flow.mmd"}),
                    "Show the message flow")
    darken = bash(taught_curl(server.workspace, "ui:set-theme", {"theme": "dark"}), "Switch to the dark theme")
    fake_api.push(text("Here is the message flow."), navigate)
    fake_api.push(darken)
    fake_api.push(text("The message flow is on your screen, in the dark theme."))
    agent_turn(page, fake_api, "Show me the message flow, in dark please.", turns=2)

    # What the person sees: the other diagram's tab, drawn, dark.
    expect(selected_tab).to_have_attribute("data-path", "message-flow.mmd")
    expect(page.locator(".pneuma-diagram")).to_have_attribute("data-theme", "dark")
    page.wait_for_selector(RENDERED, timeout=20_000)
    expect(page.locator(".dg-stage [data-type=participant][data-id=Agent]").first).to_be_visible()
    expect(page.locator('.tool-card.done[data-tool="Bash"]')).to_have_count(2)
    expect(page.get_by_text("The message flow is on your screen, in the dark theme.")).to_be_visible()
    shot(page, "agent-diagram-dark-flow")

    # What the agent read: the viewer's own answers, as curl printed them.
    shown = answer_read_by_agent(fake_api, navigate)
    assert shown["data"]["file"] == "message-flow.mmd" and shown["data"]["rendered"] is True, shown
    assert shown["data"]["type"] == "sequence" and "Agent" in shown["data"]["nodes"], shown
    assert shown["data"]["tabs"] == ["architecture.mmd", "message-flow.mmd"], shown
    assert shown["message"].startswith("Showing message-flow.mmd (sequence,"), shown
    assert answer_read_by_agent(fake_api, darken) == {
        "success": True, "message": "Theme: dark", "data": {"theme": "dark"}}
    now = viewer_answer(server, "describe-view")["data"]
    assert (now["file"], now["theme"], now["nodes"]) == ("message-flow.mmd", "dark", shown["data"]["nodes"])
    assert page.console_errors == []
