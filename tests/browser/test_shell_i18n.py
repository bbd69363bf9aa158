"""The shell in the person's language: a browser set to Chinese gets the
page in Chinese, the English / 中文 control switches it (and the switch is
remembered across a reload), and no English label is left in the page's
own chrome while Chinese is on.

Real Chromium against `pneuma run --mode slide` with the fake CLI
(tests/browser/conftest.py); the browser's language is the Playwright
context's `locale`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import english_words, visible_texts

TURN = 15_000  # ms a fake CLI turn may take in the page

# The page's chrome, without what the person or the agent wrote (chat
# messages), the mode's viewer and what it selected (the chip's text),
# manifest texts (shortcut labels: not the shell's own words) and names of
# things (folder, file, model id). tests/browser/test_zh_cn_everywhere.py
# checks the viewers and the manifest texts.
CHROME_SKIP = ".msg, .viewer-root, .commands, .ctx-text, .ws, .active-file, .model-name, code, pre"


@pytest.fixture
def open_in_locale(open_page: Callable[..., Any]) -> Callable[..., Any]:
    """``open_in_locale(server, "zh-CN", before_goto=None)``: the shell in a
    fresh browser context whose language is ``locale``, once connected."""
    def open_(server: Any, locale: str, before_goto: Callable[[Any], None] | None = None,
              wait_connected: bool = True) -> Any:
        return open_page(server, locale=locale, before_goto=before_goto,
                         wait_connected=wait_connected)

    return open_


def wait_greeting(page: Any) -> None:
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle")


# The shell's own words, checked in both languages: (element, what of it:
# an attribute, "text" for all of it or "contains" for a part, in Chinese,
# in English; None where that language is not checked).
SHELL_WORDS: tuple[tuple[str, str, str, str | None], ...] = (
    ("html", "lang", "zh-CN", "en"),
    (".composer textarea", "placeholder", "给智能体发消息…", "Message the agent…"),
    (".pill", "text", "已连接 · 空闲", "Connected · idle"),
    (".topbar .mode-name", "text", "幻灯片", "Slides"),
    (".model-btn", "contains", "模型", None),
    (".lang-btn.current", "text", "中文", "English"),
    (".result-line .result-label", "text", "完成", "Done"),
    (".result-line", "contains", "1 步", "1 step"),
)


def expect_shell_words(page: Any, *, chinese: bool) -> None:
    for selector, part, zh, en in SHELL_WORDS:
        wanted = zh if chinese else en
        if wanted is None:
            continue
        shown = expect(page.locator(selector))
        if part == "text":
            shown.to_have_text(wanted)
        elif part == "contains":
            shown.to_contain_text(wanted)
        else:
            shown.to_have_attribute(part, wanted)


def expect_chinese(page: Any) -> None:
    expect_shell_words(page, chinese=True)


def expect_english(page: Any) -> None:
    expect_shell_words(page, chinese=False)


def test_a_chinese_browser_gets_the_shell_in_chinese_and_can_switch(
        pneuma_server, fake_claude, open_in_locale, shot):
    server = pneuma_server("slide", claude_bin=fake_claude.bin)
    page = open_in_locale(server, "zh-CN")
    wait_greeting(page)
    expect_chinese(page)
    shot(page, "shell-zh-CN")
    no_english_is_left_in_the_chinese_chrome(page)

    page.locator(".lang-btn[data-locale='en']").click()
    expect_english(page)
    page.reload()
    page.wait_for_selector('.pill[data-state="open"]', timeout=10_000)
    expect_english(page)  # the choice outlives the page, although the browser asks for Chinese

    page.locator(".lang-btn[data-locale='zh-CN']").click()
    expect_chinese(page)
    page.reload()
    page.wait_for_selector('.pill[data-state="open"]', timeout=10_000)
    expect_chinese(page)
    assert page.console_errors == []


def no_english_is_left_in_the_chinese_chrome(page: Any) -> None:
    # (On the page of the test above: one server and page for both.)
    # The model menu's items and the custom id field are chrome too.
    page.locator(".model-btn").click()
    expect(page.locator(".menu-pop")).to_be_visible()
    texts = visible_texts(page, CHROME_SKIP)
    assert any("模型" in text for text in texts), texts  # the scan does see the header
    words = english_words(texts)
    assert not words, f"English words {words} in the Chinese page: {texts}"
    page.keyboard.press("Escape")
    expect(page.locator(".menu-pop")).to_have_count(0)


def test_an_english_browser_keeps_the_english_shell(pneuma_server, fake_claude, open_in_locale):
    server = pneuma_server("slide", claude_bin=fake_claude.bin)
    page = open_in_locale(server, "en-GB")
    wait_greeting(page)
    expect_english(page)


def test_the_viewer_gets_the_language_and_follows_a_switch(pneuma_server, fake_claude, open_in_locale):
    # Without its module the slide mode falls back to the generic file
    # viewer, which labels itself with ctx.t and listens to ctx.onLocaleChange.
    server = pneuma_server("slide", claude_bin=fake_claude.bin)

    def hide_viewer_module(page: Any) -> None:
        page.route("**/modes/slide/viewer.js", lambda route: route.fulfill(status=404, body="{}"))

    page = open_in_locale(server, "zh-CN", before_goto=hide_viewer_module)
    wait_greeting(page)
    expect(page.locator(".viewer-notice")).to_contain_text("幻灯片 查看器加载失败")
    file_list = page.locator(".generic-viewer .gv-list")
    expect(file_list).to_have_attribute("aria-label", "文件")
    # What any viewer's ctx offers (docs/viewer-contract.md, "Language").
    seen = page.evaluate("""() => {
      const ctx = window.pneuma.ui.host.ctx();
      window.localesSeen = [];
      ctx.onLocaleChange((locale) => window.localesSeen.push([locale, ctx.locale, ctx.t('chat.label')]));
      return [ctx.locale, ctx.t('chat.label'), ctx.t('result.steps', { count: 2 })];
    }""")
    assert seen == ["zh-CN", "聊天", "2 步"]

    page.locator(".lang-btn[data-locale='en']").click()
    expect(file_list).to_have_attribute("aria-label", "Files")
    assert page.evaluate("() => window.localesSeen") == [["en", "en", "Chat"]]
    assert page.evaluate("() => window.pneuma.ui.host.ctx().t('result.steps', { count: 2 })") == "2 steps"


def test_start_up_problems_are_explained_in_chinese(pneuma_server, open_in_locale):
    server = pneuma_server("slide", backend="none")

    def hide_vendor(page: Any) -> None:
        page.route("**/static/vendor/**", lambda route: route.fulfill(status=404, body="{}"))

    page = open_in_locale(server, "zh-CN", before_goto=hide_vendor, wait_connected=False)
    expect(page.locator(".boot-problem h1")).to_have_text("浏览器端代码尚未安装")
    expect(page.locator(".boot-problem pre")).to_have_text("scripts/build-web")


def test_a_refused_page_still_explains_itself(pneuma_server, open_in_locale):
    # The session cookie is gone (the server restarted with a new token):
    # the server refuses the texts too, so the page falls back to the
    # English it carries rather than showing raw keys.
    server = pneuma_server("slide", backend="none")

    def refuse_static(page: Any) -> None:
        for pattern in ("**/static/vendor/**", "**/static/i18n/**"):
            page.route(pattern, lambda route: route.fulfill(status=401, body="{}"))

    page = open_in_locale(server, "zh-CN", before_goto=refuse_static, wait_connected=False)
    expect(page.locator(".boot-problem h1")).to_have_text("This page needs the session link")
    expect(page.locator(".boot-problem p")).to_contain_text("?session=")
