"""The slide and doc viewers in the person's language (issue 16 item 4, for
these two viewers' own labels): a Chinese page shows no English label in
the viewer, and the English / 中文 control re-labels the viewer at once,
without a reload and without losing the slide or document on screen.

Real `pneuma run --mode slide|doc --backend none` and Debian's Chromium
(tests/browser/conftest.py); the browser's language is the Playwright
context's ``locale``. English words are found with the shell's own checker
(``english_words`` in tests/browser/browser_helpers.py); what the workspace
holds (file names, slide titles, the document's text) is not a label and is
left out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import ALLOWED_WORDS, english_words

HOST = "window.pneuma.ui.host"
READY = f"() => window.pneuma && window.pneuma.ui && {HOST} && {HOST}.instance"
DOC_VENDOR = (Path(__file__).resolve().parents[2] / "plugins" / "doc" / "pneuma_doc" / "static" / "vendor"
              / "doc-vendor.js")
FORMAT_NAMES = {"PDF", "HTML"}  # the export menu names file formats, the same in every language
EXTRA = "slides/09-extra.html"

# Every visible text and label attribute inside the viewer's panel, except
# under `skip` (what the workspace holds: the rendered document, its headings).
VIEWER_TEXTS = """([skip]) => {
  const root = document.querySelector('.viewer-root');
  const texts = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || (skip && el.closest(skip)) || !el.checkVisibility()) continue;
    const text = node.textContent.trim();
    if (text) texts.push(text);
  }
  for (const el of root.querySelectorAll('[title], [placeholder], [aria-label], [alt]')) {
    if (skip && el.closest(skip)) continue;
    for (const name of ['title', 'placeholder', 'aria-label', 'alt']) {
      const value = el.getAttribute(name);
      if (value) texts.push(value);
    }
  }
  return texts;
}"""


def labels_in(page: Any, skip: str, content: list[str]) -> tuple[list[str], list[str]]:
    """The viewer's texts with the workspace's own strings cut out, and the English words left in them."""
    texts = page.evaluate(VIEWER_TEXTS, [skip])
    cut = []
    for text in texts:
        for name in sorted(content, key=len, reverse=True):
            text = text.replace(name, " ")
        cut.append(text)
    return texts, english_words(cut, ALLOWED_WORDS | FORMAT_NAMES)


def look(page: Any, shot: Any, name: str) -> None:
    """A screenshot once the page's fonts have loaded (the CJK web font comes in slices, on demand)."""
    page.evaluate("() => document.fonts.ready.then(() => true)")
    shot(page, name)


def switch(page: Any, locale: str) -> None:
    page.locator(f".lang-btn[data-locale='{locale}']").click()
    expect(page.locator("html")).to_have_attribute("lang", locale)


# --- slides -------------------------------------------------------------------------------


def slide_content(workspace: Path) -> list[str]:
    data = json.loads((workspace / "manifest.json").read_text())
    files = [p.relative_to(workspace).as_posix() for p in workspace.rglob("*") if p.is_file()]
    return [data["title"], *(s["title"] for s in data["slides"]), "Questions we often hear", *files]


def test_the_slide_viewer_in_chinese_and_switched_to_english(pneuma_server: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("slide", backend="none")
    ws = Path(server.workspace)
    (ws / EXTRA).write_text('<section class="slide"><h1>Questions we often hear</h1></section>\n')
    page = open_page(server, viewport={"width": 1500, "height": 900}, locale="zh-CN")
    page.wait_for_function(READY)
    page.wait_for_selector(".pns-extra-item")
    expect(page.locator(".pns-caption-num")).to_have_text("第 1 页，共 8 页")
    expect(page.get_by_role("button", name="放映")).to_be_visible()
    expect(page.locator(".pns-extra-heading")).to_have_text("未加入演示文稿")
    expect(page.locator(".ctx-row .ctx-chip")).to_contain_text("第 1 页 · ")
    page.get_by_role("button", name="导出").click()  # the export menu's items are labels too
    expect(page.locator(".export-menu .menu-pop")).to_be_visible()
    texts, words = labels_in(page, "", slide_content(ws))
    assert any("放映" in text for text in texts), texts  # the scan does see the toolbar
    assert not words, f"English words {words} in the Chinese slide viewer: {texts}"
    look(page, shot, "slide-viewer-zh-CN")
    page.keyboard.press("Escape")

    # Switching re-labels the viewer in place: the same slide, no reload.
    page.locator('.pns-thumb[data-index="3"]').click()
    page.evaluate("() => { window.notReloaded = true; }")
    switch(page, "en")
    expect(page.locator(".pns-caption-num")).to_have_text("Slide 4 of 8")
    expect(page.get_by_role("button", name="Present")).to_be_visible()
    expect(page.get_by_role("button", name="All slides in a grid")).to_be_visible()
    expect(page.locator(".pns-extra-heading")).to_have_text("Not in the deck")
    expect(page.locator(".pns-extra-add")).to_have_text("Add to deck")
    expect(page.locator(".pns-nav")).to_have_attribute("aria-label", "Slides")
    expect(page.locator(".ctx-row .ctx-chip")).to_contain_text("Slide 4 · One workspace, two ways in")
    # a thumbnail is named by what it shows (axe: label-content-name-mismatch), in the "Slides" list
    expect(page.get_by_role("button", name="4 One workspace, two ways in", exact=True)).to_be_visible()
    assert page.evaluate("() => window.notReloaded") is True
    look(page, shot, "slide-viewer-en-after-switch")

    switch(page, "zh-CN")
    expect(page.locator(".pns-caption-num")).to_have_text("第 4 页，共 8 页")
    expect(page.locator(".pns-extra-add")).to_have_text("加入演示文稿")
    _, words = labels_in(page, "", slide_content(ws))
    assert not words, words
    # What the agent reads stays English whatever the page shows.
    assert page.evaluate(f"{HOST}.context()").startswith('<viewer-context mode="slide" file="slides/04-loop.html" '
                                                         'slide="4">\nSlide 4 of 8: "One workspace, two ways in"')
    assert page.console_errors == []


def test_a_broken_manifest_is_explained_in_chinese(pneuma_server: Any, open_page: Any) -> None:
    server = pneuma_server("slide", backend="none")
    ws = Path(server.workspace)
    page = open_page(server, viewport={"width": 1500, "height": 900}, locale="zh-CN")
    page.wait_for_function(READY)
    (ws / "manifest.json").write_text('{"title": "x", "slides": {}}')
    expect(page.locator(".pns-banner")).to_have_text(
        'manifest.json 中没有 "slides" 数组。正在显示最后一次能读取的版本。', timeout=3000)
    (ws / "manifest.json").unlink()
    expect(page.locator(".pns-empty")).to_have_text("manifest.json 不存在", timeout=3000)
    switch(page, "en")
    expect(page.locator(".pns-empty")).to_have_text("manifest.json does not exist")


# --- documents -----------------------------------------------------------------------------


@pytest.mark.skipif(not DOC_VENDOR.exists(), reason="the doc viewer's vendor bundle is not built (scripts/build-web)")
def test_the_doc_viewer_in_chinese_and_switched_to_english(pneuma_server: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("doc", backend="none")
    ws = Path(server.workspace)
    page = open_page(server, locale="zh-CN")
    page.wait_for_function(READY)
    page.wait_for_selector(".pd-doc h1")
    files = [p.relative_to(ws).as_posix() for p in ws.rglob("*") if p.is_file()]
    # The tabs name files and their titles; the page and its contents are the document.
    texts, words = labels_in(page, ".pd-tab, .pd-doc, .pd-toc-list", files)
    assert "本页内容" in texts and "目录" in texts, texts
    assert not words, f"English words {words} in the Chinese doc viewer: {texts}"
    expect(page.locator(".pd-tabs")).to_have_attribute("aria-label", "文档")
    expect(page.locator(".pd-doc .pd-anchor").first).to_have_attribute("aria-label", "链接到本节")
    look(page, shot, "doc-viewer-zh-CN")

    page.locator(".pd-scroll").evaluate("(el) => { el.scrollTop = 300; }")
    page.evaluate("() => { window.notReloaded = true; }")
    switch(page, "en")
    expect(page.locator(".pd-toc-title")).to_have_text("On this page")
    expect(page.locator(".pd-toc-toggle")).to_have_text("Contents")
    expect(page.locator(".pd-toc-toggle")).to_have_attribute("title", "Table of contents")
    expect(page.locator(".pd-tabs")).to_have_attribute("aria-label", "Documents")
    expect(page.locator(".pd-doc .pd-anchor").first).to_have_attribute("aria-label", "Link to this section")
    assert page.evaluate("() => document.querySelector('.pd-scroll').scrollTop") == 300  # the document stays put
    assert page.evaluate("() => window.notReloaded") is True

    # The empty state follows the language too.
    for path in ws.rglob("*.md"):
        if path.name != "CLAUDE.md":
            path.unlink()
    expect(page.locator(".pd-empty h2")).to_have_text("No documents yet", timeout=3000)
    switch(page, "zh-CN")
    expect(page.locator(".pd-empty h2")).to_have_text("还没有文档")
    expect(page.locator(".pd-empty p")).to_have_text("请让智能体写一篇：工作区中的每个 .md 文件都会在这里以标签页打开。")
    look(page, shot, "doc-viewer-empty-zh-CN")
    assert page.console_errors == []
