"""The person's preferences follow the person, not the port (issue 25,
item 6), in real Chromium against real servers.

Every workspace is served on a port of its own and the launcher on
another; the browser keeps its storage per origin. The language chosen in
the launcher, the chat's width, the hidden chat and the unsent draft must
survive a new port: they are kept in one file for the person
(pneuma/server/preferences.py), here in a temporary config folder.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import kill_process_group
from tests.browser.test_launcher import _new_page, launcher  # noqa: F401  (the fixture)

WORKSPACE_PAGE = re.compile(r"/\?session=[^&]+&token=")


def _stored(path: Path, wanted: Callable[[dict[str, Any]], bool], timeout: float = 10.0) -> dict[str, Any]:
    """The preferences file once ``wanted`` holds for it (the page writes a
    moment after a change)."""
    deadline = time.monotonic() + timeout
    document: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            document = json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
            document = {}
        if wanted(document):
            return document
        time.sleep(0.05)
    raise AssertionError(f"{path} never held what was chosen; it holds {document}")


def _chat_width(page: Any) -> str:
    return str(page.evaluate(
        "() => getComputedStyle(document.querySelector('.shell')).getPropertyValue('--chat-width').trim()"))


def test_the_language_chosen_in_the_launcher_is_the_workspaces_language(browser, launcher):  # noqa: F811
    served = launcher()
    preferences = served.home / ".config" / "pneuma" / "preferences.json"
    page = _new_page(browser, "en-US")
    try:
        page.goto(served.url)
        expect(page.locator(".ln-card[data-mode='doc']")).to_be_visible(timeout=10_000)
        expect(page.locator(".lang-btn.current")).to_have_text("English")
        page.locator(".lang-btn[data-locale='zh-CN']").click()
        expect(page.locator(".lang-btn.current")).to_have_text("中文")
        _stored(preferences, lambda d: d.get("locale") == "zh-CN")

        # A new workspace from the gallery: its own server, another port,
        # an origin whose storage has never seen the choice.
        page.locator(".ln-card[data-mode='doc']").focus()
        page.keyboard.press("Enter")
        expect(page.locator("#ln-folder")).to_be_focused()
        page.keyboard.press("Enter")
        page.wait_for_url(WORKSPACE_PAGE, timeout=20_000)
        assert not page.url.startswith(served.base)
        page.wait_for_selector('.pill[data-state="open"]', timeout=15_000)
        assert page.evaluate("() => document.documentElement.lang") == "zh-CN"
        expect(page.locator(".lang-btn.current")).to_have_text("中文")
        expect(page.locator(".composer textarea")).to_have_attribute("placeholder", re.compile(r"[\u4e00-\u9fff]"))

        # Back to English in the workspace: the launcher, loaded anew, follows.
        page.locator(".lang-btn[data-locale='en']").click()
        _stored(preferences, lambda d: d.get("locale") == "en")
        fresh = _new_page(browser, "zh-CN")  # a Chinese browser: the person's choice still wins
        fresh.goto(served.url)
        expect(fresh.locator(".lang-btn.current")).to_have_text("English", timeout=10_000)
        assert fresh.evaluate("() => document.documentElement.lang") == "en"
        assert not page.console_errors and not fresh.console_errors, page.console_errors + fresh.console_errors
    finally:
        page.context.close()


def test_width_hidden_chat_and_draft_come_back_on_another_port(pneuma_server, open_page, fake_claude, tmp_path):
    config = tmp_path / "config"
    preferences = config / "pneuma" / "preferences.json"
    workspace = tmp_path / "notes"
    env = {"XDG_CONFIG_HOME": str(config)}

    def run() -> Any:
        return pneuma_server("doc", claude_bin=fake_claude.bin, workspace=workspace, env=env)

    first = run()
    page = open_page(first)
    expect(page.locator(".splitter")).to_be_visible()
    assert _chat_width(page) == "420px"
    page.locator(".splitter").focus()
    for _ in range(5):
        page.keyboard.press("ArrowLeft")  # 24 px wider each
    assert _chat_width(page) == "540px"
    draft = "Make the introduction shorter, and — 也请检查标题"
    page.locator(".composer textarea").fill(draft)
    key = os.path.realpath(workspace)
    _stored(preferences, lambda d: d.get("chatWidth") == 540
            and d.get("drafts", {}).get(key, {}).get("text") == draft)
    kill_process_group(first.process)

    second = run()
    assert second.base != first.base  # another port, another origin
    page = open_page(second)
    assert _chat_width(page) == "540px"
    expect(page.locator(".composer textarea")).to_have_value(draft)
    page.locator("header.topbar button.icon-btn[title='Hide the chat']").click()
    expect(page.locator(".shell.chat-hidden")).to_have_count(1)
    _stored(preferences, lambda d: d.get("chatHidden") == {"editor": True})
    kill_process_group(second.process)

    third = run()
    assert third.base not in (first.base, second.base)
    page = open_page(third)
    expect(page.locator(".shell.chat-hidden")).to_have_count(1)
    expect(page.locator(".composer textarea")).to_have_count(0)
    assert not page.console_errors, page.console_errors
