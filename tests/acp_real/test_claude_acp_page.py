"""A real ACP agent in the page: `pneuma run --mode doc --backend acp:claude`.

The agent is the Claude Code ACP adapter that scripts/install puts into
.venv/acp (npm @agentclientprotocol/claude-agent-acp, pinned), which runs
its own Claude Code against the fake Anthropic Messages API of
tests/fakes/anthropic_api.py, served from a background thread. Pneuma
speaks ACP to it over stdio; the person works in Debian's Chromium: a turn
streams into the chat, a file is written once the person allows it on the
permission card, a turn is stopped mid-stream and the next one works, and
after `pneuma run` is restarted the agent still knows the earlier turn
(session/load). What the agent was told is read back from the fake API's
recorded requests; what was written, from the disk and the viewer.

Everything runs in the loopback-only network namespace of the root
conftest; ``loopback_only_network`` refuses to start the agent elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from pneuma.agents.acp.presets import presets
from tests.browser.browser_helpers import kill_process_group, send
from tests.browser.test_agent_viewer_actions import ThreadedFakeAPI
from tests.fakes.anthropic_api import text, tool_use
from tests.loopback import fail_unless_loopback_only

TURN = 30_000  # ms a turn of the adapter (one or two API round trips) may take
ADAPTER = next(p for p in presets({"PATH": "", "ANTHROPIC_API_KEY": "k"}) if p.name == "claude")

pytestmark = pytest.mark.skipif(
    not ADAPTER.usable, reason="the Claude Code ACP adapter is not installed (scripts/install)")


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    fail_unless_loopback_only("the real ACP agent tests", "tests/acp_real")


@pytest.fixture
def fake_api() -> Iterator[ThreadedFakeAPI]:
    api = ThreadedFakeAPI()
    yield api
    api.close()


def agent_env(fake_api: ThreadedFakeAPI, home: Path) -> dict[str, str]:
    """What `pneuma run` passes on to the adapter: the fake API, no traffic
    of its own, and one HOME for both runs (the adapter's sessions live in
    $CLAUDE_CONFIG_DIR, which session/load reads after a restart)."""
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    return {
        "ANTHROPIC_BASE_URL": fake_api.base_url, "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
        # After each turn the CLI would ask the model for a suggested next
        # prompt, with tools: that request would take the next scripted reply.
        "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION": "false",
        "IS_SANDBOX": "1",
        "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
    }  # fmt: skip


def start(pneuma_server: Any, fake_api: ThreadedFakeAPI, home: Path,
          workspace: Path | None = None) -> Any:
    """`pneuma run --mode doc --backend acp:claude`, asking before each write."""
    return pneuma_server("doc", backend="acp:claude", args=("--permission-mode", "default"),
                         workspace=workspace, env=agent_env(fake_api, home))


def greeted(pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, home: Path) -> tuple[Any, Any]:
    """A fresh doc session whose hidden greeting turn has ended in the page."""
    fake_api.push(text("Hello! The starter guide is open. What shall we write?"))
    server = start(pneuma_server, fake_api, home)
    page = open_page(server)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)
    return server, page


def requests(fake_api: ThreadedFakeAPI) -> list[dict[str, Any]]:
    """The agent loop's own requests to the fake API, oldest first."""
    return fake_api._on_loop(fake_api.api.conversation_requests)  # type: ignore[no-any-return]


def push_slow(fake_api: ThreadedFakeAPI, words: str, delay: float) -> None:
    """A reply streamed one small piece every ``delay`` seconds."""
    fake_api._on_loop(lambda: fake_api.api.push(text(words, chunk=6), delay=delay))


def test_a_turn_streams_a_write_waits_for_the_card_a_stop_ends_the_turn_and_a_restart_resumes(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any,
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    server, page = greeted(pneuma_server, fake_api, open_page, home)

    # A turn streams: the text grows in the page before the turn ends.
    push_slow(fake_api, "Markdown documents live in this folder, one file per document. " * 3, 0.05)
    send(page, "What is in this workspace?")
    expect(page.locator(".md.streaming")).to_contain_text("Markdown", timeout=TURN)
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    expect(page.locator(".msg.assistant").last).to_contain_text("one file per document")

    # A write waits for the person's OK on the permission card.
    note = server.workspace / "notes" / "acp.md"
    fake_api.push(tool_use("Write", {"file_path": str(note), "content": "# Written over ACP\n\nHello.\n"}))
    fake_api.push(text("I wrote notes/acp.md."))
    send(page, "Write a short note in notes/acp.md")
    card = page.locator(".permission")
    expect(card).to_be_visible(timeout=TURN)
    expect(card).to_contain_text("acp.md")
    assert not note.exists(), "the agent wrote before the person allowed it"
    shot(page, "acp-claude-permission")
    card.locator("button.allow").click()
    expect(page.locator(".result-line")).to_have_count(3, timeout=TURN)
    assert note.read_text() == "# Written over ACP\n\nHello.\n"
    assert any("acp.md" in json.dumps(r["content"]) for r in fake_api.tool_results())
    tab = page.locator('.pd-tab[data-path="notes/acp.md"]')
    expect(tab).to_be_visible(timeout=10_000)
    tab.click()
    expect(page.locator(".pd-doc h1")).to_contain_text("Written over ACP")

    # Stop mid-turn: the turn ends as stopped, the next one works.
    push_slow(fake_api, "A very long answer that takes its time. " * 40, 0.05)
    send(page, "Tell me everything")
    expect(page.locator(".md.streaming")).to_contain_text("very long", timeout=TURN)
    page.locator(".send.stop").click()
    expect(page.locator(".result-line").last).to_contain_text("Stopped", timeout=TURN)
    expect(page.locator(".result-line")).to_have_count(4)
    fake_api.push(text("Back, and listening."))
    send(page, "Shorter, please")
    expect(page.locator(".result-line")).to_have_count(5, timeout=TURN)
    expect(page.locator(".msg.assistant").last).to_contain_text("Back, and listening.")
    assert "Shorter, please" in json.dumps(requests(fake_api)[-1]["messages"][-1])
    assert page.console_errors == []

    # After a restart of `pneuma run` the agent resumes its session: the
    # page shows the conversation and the agent is told the earlier turns.
    page.close()
    kill_process_group(server.process)
    again = start(pneuma_server, fake_api, home, workspace=server.workspace)
    page = open_page(again)
    expect(page.locator(".msg.user", has_text="Write a short note in notes/acp.md")).to_have_count(1)
    before = len(requests(fake_api))
    fake_api.push(text("You asked for a note in notes/acp.md."))
    send(page, "What did I ask you to write?")
    expect(page.locator(".msg.assistant").last).to_contain_text("You asked for a note", timeout=TURN)
    told = json.dumps(requests(fake_api)[before]["messages"])
    assert "Write a short note in notes/acp.md" in told and "I wrote notes/acp.md." in told
    assert page.console_errors == []
