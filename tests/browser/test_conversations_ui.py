"""The conversation menu at the head of the chat (pneuma/web/lib/conversations.js)
in Chromium, against `pneuma run` with the fake Claude Code CLI.

A person starts a second conversation, talks in it, switches back to the
first one (its messages come back, and the agent resumes its own session),
renames it, deletes the other one after confirming, and a second tab
follows every switch.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send

TURN = 15_000  # ms a fake CLI turn may take in the page
GREETING = "Hello from the fake CLI!"


def idle_after(page: Any, results: int) -> None:
    expect(page.locator(".result-line")).to_have_count(results, timeout=TURN)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle")


def resumed_ids(fake_claude: Any) -> list[str | None]:
    """For each start of the CLI, the session it was told to resume."""
    starts = [e["argv"] for e in fake_claude.entries() if "argv" in e]
    return [argv[argv.index("--resume") + 1] if "--resume" in argv else None for argv in starts]


def agent_session_of(workspace: Any, title: str) -> str | None:
    """The agent session the workspace's list keeps for a conversation."""
    db = sqlite3.connect(workspace / ".pneuma" / "conversation.db")
    try:
        row = db.execute("SELECT agent_session_id FROM conversations WHERE title = ?",
                         (title,)).fetchone()
    finally:
        db.close()
    return row[0] if row else None


def test_two_conversations_switch_rename_delete(pneuma_server, fake_claude, open_page, shot):
    server = pneuma_server("slide", claude_bin=fake_claude.bin)
    page = open_page(server)
    idle_after(page, 1)  # the hidden greeting turn of a fresh conversation
    bar = page.locator(".conv-bar")
    expect(bar.locator(".conv-title")).to_have_text("Untitled conversation")
    send(page, "Tides for slide one")
    idle_after(page, 2)
    expect(bar.locator(".conv-title")).to_have_text("Tides for slide one")
    shot(page, "conversations-bar")
    follower = open_page(server, color_scheme="dark")
    expect(follower.locator(".msg.user .bubble")).to_have_text(["Tides for slide one"])

    # A second conversation: the chat empties, the agent starts afresh.
    bar.locator(".conv-new").click()
    expect(page.locator(".msg.user")).to_have_count(0)
    idle_after(page, 1)  # a fresh conversation has its greeting turn too
    send(page, "Rivers deck, please")
    idle_after(page, 2)
    expect(bar.locator(".conv-title")).to_have_text("Rivers deck, please")
    expect(follower.locator(".msg.user .bubble")).to_have_text(["Rivers deck, please"])

    bar.locator(".conv-current").click()
    rows = page.locator(".conv-row")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("Rivers deck, please")
    expect(rows.first).to_contain_text("3 messages")  # the greeting's reply, the question, the answer
    expect(rows.nth(1)).to_contain_text("Tides for slide one")
    shot(page, "conversations-menu")

    # Back to the first: its messages are shown again, in both tabs.
    rows.nth(1).locator(".conv-pick").click()
    expect(page.locator(".conv-pop")).to_have_count(0)
    expect(page.locator(".msg.user .bubble")).to_have_text(["Tides for slide one"])
    expect(follower.locator(".msg.user .bubble")).to_have_text(["Tides for slide one"])
    expect(bar.locator(".conv-title")).to_have_text("Tides for slide one")
    send(page, "Add the spring tides")
    expect(page.locator(".msg.user .bubble")).to_have_text(
        ["Tides for slide one", "Add the spring tides"])
    idle_after(page, 3)
    # The CLI was started again resuming the first conversation's session.
    first_agent_session = agent_session_of(server.workspace, "Tides for slide one")
    assert first_agent_session
    assert resumed_ids(fake_claude)[-1] == first_agent_session
    assert len(set(resumed_ids(fake_claude))) == 2  # started fresh twice (None), resumed once

    # Rename it inline.
    bar.locator(".conv-current").click()
    page.locator(".conv-row.current .conv-act").first.click()
    field = page.locator(".conv-rename input")
    expect(field).to_be_focused()
    field.fill("Tide tables")
    field.press("Enter")
    expect(page.locator(".conv-row.current .conv-row-title")).to_have_text("Tide tables")
    page.keyboard.press("Escape")
    expect(bar.locator(".conv-title")).to_have_text("Tide tables")
    expect(follower.locator(".conv-title")).to_have_text("Tide tables")
    follower.locator(".conv-current").click()
    expect(follower.locator(".conv-row")).to_have_count(2)
    shot(follower, "conversations-menu-dark")
    follower.keyboard.press("Escape")
    expect(follower.locator(".conv-pop")).to_have_count(0)

    # Delete the other one, after saying yes.
    bar.locator(".conv-current").click()
    other = page.locator(".conv-row", has_text="Rivers deck, please")
    other.hover()
    other.locator(".conv-act").last.click()
    confirm = page.locator(".conv-confirm")
    expect(confirm).to_contain_text("Rivers deck, please")
    shot(page, "conversations-confirm-delete")
    confirm.locator(".conv-btn.danger").click()
    expect(page.locator(".conv-row")).to_have_count(1)
    expect(page.locator(".conv-row")).to_contain_text("Tide tables")
    shot(page, "conversations-after-delete")
    assert page.console_errors == []
    assert follower.console_errors == []


def test_the_menu_in_chinese(pneuma_server, fake_claude, open_page, shot):
    server = pneuma_server("slide", claude_bin=fake_claude.bin)
    page = open_page(server, locale="zh-CN")
    idle_after(page, 1)
    bar = page.locator(".conv-bar")
    expect(bar.locator(".conv-title")).to_have_text("未命名对话")
    send(page, "潮汐主题的幻灯片")
    idle_after(page, 2)
    bar.locator(".conv-current").click()
    expect(page.locator(".conv-row")).to_contain_text("3 条消息")
    expect(page.locator(".conv-pop-new")).to_have_text("新建对话")
    shot(page, "conversations-menu-zh")
    assert page.console_errors == []
