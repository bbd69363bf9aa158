"""The whole page in Chinese: a browser set to zh-CN opens each built-in
mode and finds no English UI word anywhere, neither in the shell's chrome
nor in the mode's viewer nor in the manifest's texts (mode name, shortcut
buttons and their tooltips). Then the viewers follow a switch of language.

What is not the interface is left out of the check: what the person or the
agent wrote (chat, the workspace's own documents, slides, scene scripts,
drawings), names of files and folders, code, and product names.

Real Chromium against `pneuma run --mode <mode> --backend none`
(tests/browser/conftest.py); the browser's language is the context's locale.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import (
    ALLOWED_WORDS,
    GLYPH_RENDERING,
    english_words,
    visible_texts,
)
from tests.browser.test_coauthor_viewer import cli, propose

# Names of products and formats, the same in Chinese, and keys on the keyboard.
PRODUCT_NAMES = {"Ctrl", "Alt", "Cmd", "GitHub", "CoAuthor", "WebGAL", "LaTeX", "latexmk", "PDF", "Excalidraw",
                 "Markdown", "HTML", "JSON"}
ALLOWED = frozenset(ALLOWED_WORDS | PRODUCT_NAMES)

# Never interface: the chat, the selection chip, the workspace folder, names
# of files and models, code.
COMMON_SKIP = ".msg, .ctx-text, .ws, .active-file, .model-name, code, pre"

# Per mode: what shows the viewer is ready, and what in it is content.
MODES: dict[str, tuple[str, str]] = {
    # The drawing surface's own name is Excalidraw's translation ("绘制 Canvas").
    "draw": (".pneuma-draw .excalidraw [data-testid='toolbar-rectangle']", "option, .pneuma-draw-name, canvas"),
    "webgal": (".wg-line", ".wg-lines, .wg-file-title, .wg-scene-name, .wg-note-msg, .wg-note-hint"),
    "coauthor": (".ca-root .ca-board", ".ca-side-dir, .ca-nav-file, .ca-intent, .ca-ref-chip"),
    "slide": (".pns-stage", ".pns-deck-title, .pns-caption-title, .pns-caption-file, .pns-thumb-title, "
                            ".pns-thumb-body, .pns-thumb-frame, .pns-stage-box, .pns-extra-file"),
    "doc": (".markdown-body", ".markdown-body, .pd-tab-name, .pd-tab-dir, .pd-toc-list"),
    "diagram": (".pneuma-diagram[data-state=rendered] .dg-stage svg", ".dg-stage, .dg-tab, .dg-source"),
    # The page tabs are the site's file names.
    "webcraft": (".webcraft-device iframe.webcraft-frame", ".webcraft-tabs, .webcraft-frame-box"),
    # Image ids, the board's and rows' titles and prompts are the agent's words.
    "illustrate": (".il-card img", ".il-title, .il-row-head, .il-thumb, .il-id, .il-comment"),
    # The board's title, tile titles and what the tiles draw are the data's and the agent's words.
    "dashboard": (".db-tile[data-state=rendered] svg", ".db-title, .db-tile-title, .db-tile-body"),
    # Scene titles are video.json's words; the stage is the scenes'.
    "video": (".video-stage[data-frame='0']", ".video-stage, .video-block, .video-scene-title, .video-current-scene"),
    # The document's title, page titles and the sheets are print.json's and the pages' words; paper names are names.
    "print": (".pnp-sheet .pnp-frame", ".pnp-title, .pnp-item-title, .pnp-sheet, .pnp-paper-label"),
    # The package's files, its manifest's values and the mode played in the frame are the new mode's words.
    "mode-maker": (".mm-play-status[data-status=mounted]", ".mm-files, .mm-summary dd, .mm-play, .mm-play-head h2"),
}  # fmt: skip
# Names of files as they appear in tooltips and lists (start.txt, sections/, main.tex).
FILE_NAME = re.compile(r"[\w./-]*\.(?:txt|json|tex|bib|md|excalidraw|html|css|png)\b|\b[\w-]+/")
# Labels that quote the content: a document's heading in its tab's tooltip ("<heading> — <file>").
CONTENT_IN_LABELS: dict[str, re.Pattern[str]] = {
    "doc": re.compile(r"^.*(?= — )"),
}


def english_in(texts: list[str], mode: str | None = None) -> list[str]:
    quoted = CONTENT_IN_LABELS.get(mode or "")
    if quoted is not None:
        texts = [quoted.sub("", text) for text in texts]
    return english_words([FILE_NAME.sub("", text) for text in texts], ALLOWED)


def open_chinese(pneuma_server: Any, open_page: Any, mode: str) -> Any:
    server = pneuma_server(mode, backend="none")
    page = open_page(server, locale="zh-CN", viewport={"width": 1440, "height": 900})
    ready, _ = MODES[mode]
    page.wait_for_selector(ready, timeout=20_000)
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    page.evaluate("document.fonts.ready.then(() => true)")
    return page


@pytest.mark.parametrize("mode", list(MODES))
def test_the_chinese_page_has_no_english_ui_words(pneuma_server: Any, open_page: Any, shot: Any,
                                                 mode: str) -> None:
    page = open_chinese(pneuma_server, open_page, mode)
    if mode == "draw":
        # Excalidraw loads its Chinese texts after it first draws.
        expect(page.locator(".excalidraw [data-testid='toolbar-rectangle']")).to_have_attribute(
            "aria-label", "矩形", timeout=10_000)
    texts = visible_texts(page, f"{COMMON_SKIP}, {MODES[mode][1]}")
    shot(page, f"zh-CN-{mode}")
    assert any(re.search(r"[\u4e00-\u9fff]", text) for text in texts), texts  # the scan sees the page
    words = english_in(texts, mode)
    where = [text for text in texts if english_in([text], mode)]
    assert not words, f"{mode}: English words {sorted(set(words))} in the Chinese page: {where}"
    assert not [e for e in page.console_errors if "pageerror" in e], page.console_errors
    if mode in SWITCHED:
        # The same page then follows a switch of language (one server and
        # one page per mode: each is seconds on a busy machine).
        the_viewer_follows_a_switch_of_language(page, mode)


# A label of each viewer, in Chinese, then English after the switch.
SWITCHED = {
    "draw": (".pneuma-draw-files button", "title", "新建绘图", "New drawing"),
    "webgal": (".wg-btn[data-action='play-scene']", "text", "播放场景", "Play scene"),
    "coauthor": (".ca-head .ca-title", "text", "任务板", "Task board"),
    "diagram": (".pneuma-diagram .dg-btn[data-act='fit']", "text", "适应", "Fit"),
    "webcraft": (".webcraft-pick", "text", "选取", "Select"),
    "video": (".video-play", "title", "播放（空格键）", "Play (Space)"),
    "mode-maker": (".mm-check", "text", "检查", "Check"),
    "dashboard": (".pneuma-dashboard .db-hint", "text", "拖动标题移动 · 拖动角落调整大小 · 双击标题重命名",
                  "Drag a title to move · drag a corner to resize · double-click a title to rename"),
}  # fmt: skip


def the_viewer_follows_a_switch_of_language(page: Any, mode: str) -> None:
    selector, where, chinese, english = SWITCHED[mode]
    label = page.locator(selector).first

    def expect_label(text: str) -> None:
        if where == "text":
            expect(label).to_have_text(text)
        else:
            expect(label).to_have_attribute(where, text)

    expect_label(chinese)
    page.locator(".lang-btn[data-locale='en']").click()
    expect_label(english)
    words = english_in(visible_texts(page, f"{COMMON_SKIP}, {MODES[mode][1]}"))
    assert words, "the English page shows English"
    page.locator(".lang-btn[data-locale='zh-CN']").click()
    expect_label(chinese)


def test_manifest_texts_follow_the_page_language(pneuma_server: Any, open_page: Any) -> None:
    # The header's mode name and the shortcut buttons with their tooltips,
    # and (on the same drawing page) Excalidraw's own labels.
    page = open_chinese(pneuma_server, open_page, "draw")
    expect(page.locator(".topbar .mode-name")).to_have_text("绘图")
    tidy = page.locator(".command[data-command='tidy-up']")
    expect(tidy).to_have_text("整理布局")
    expect(tidy).to_have_attribute("title", "对齐网格、均匀间距，不改变图的内容")
    expect(page).to_have_title(re.compile("绘图"))
    excalidraw_labels_draw_chinese_glyphs(page)
    page.locator(".lang-btn[data-locale='en']").click()
    expect(page.locator(".topbar .mode-name")).to_have_text("Drawing")
    expect(tidy).to_have_text("Tidy up")
    expect(tidy).to_have_attribute("title", re.compile("^Snap to the grid"))


def excalidraw_labels_draw_chinese_glyphs(page: Any) -> None:
    # Excalidraw's own labels follow the page (its langCode) and fall back on
    # the shell's CJK font: no empty boxes on a machine without CJK fonts.
    library = ".excalidraw .sidebar-trigger"
    expect(page.locator(library)).to_contain_text("素材库", timeout=10_000)
    drawn = page.evaluate(GLYPH_RENDERING, {"selectors": [library], "sample": "素材库"})[library]
    assert drawn["inked"] and drawn["differsFromTofu"] and drawn["charsDiffer"], drawn


def test_the_browser_helper_picks_a_localized_text_like_python(pneuma_server: Any, open_page: Any) -> None:
    # pneuma/web/lib/i18n.js `localized`: exact, same language, English, first
    # (tests/test_manifest_locales.py checks `localize` on the same cases).
    # The doc mode: the helper is the shell's, and a lighter viewer than a
    # game engine drawn in software leaves the machine to the other tests.
    page = open_chinese(pneuma_server, open_page, "doc")
    picked = page.evaluate("""async () => {
      const { localized } = await import('/static/lib/i18n.js');
      const text = { en: 'Slides', 'zh-CN': '幻灯片' };
      return [localized(text), localized(text, 'zh'), localized(text, 'zh-TW'), localized(text, 'fr'),
              localized({ de: 'Folien', ja: 'スライド' }, 'fr'), localized('Slides', 'zh-CN'), localized(null)];
    }""")
    assert picked == ["幻灯片", "幻灯片", "幻灯片", "Slides", "Folien", "Slides", ""]


# Task content (intent, plan, patch, thread details) is what people and the
# agent wrote; "user" and "coauthor" are the actors' names.
TASK_CONTENT = (".ca-intent, .ca-task-intent, .ca-ref-chip, .ca-plan li, .ca-plan p, .ca-summary, .ca-sbs, .ca-sbs-name, "
                ".ca-ev-detail, .ca-ev-who, .ca-ev-type, .ca-id, .ca-side-dir, .ca-nav-file")


def test_a_coauthor_task_reads_in_chinese(pneuma_server: Any, open_page: Any, tmp_path: Path, shot: Any) -> None:
    ws = tmp_path / "paper"
    (ws / ".pneuma").mkdir(parents=True)
    (ws / ".pneuma" / "coauthor.toml").write_text('[build]\nlatexmk = "off"\n', encoding="utf-8")
    server = pneuma_server("coauthor", backend="none", workspace=ws)
    task_id = cli(ws, "task", "create", "Shorten the abstract", "--file", "sections/abstract.tex:3-3").strip().splitlines()[-1]
    abstract = (ws / "sections" / "abstract.tex").read_text(encoding="utf-8").splitlines()
    old = next(line for line in abstract if len(line) > 40)
    patch_id = propose(ws, task_id, "sections/abstract.tex", old, "A shorter sentence.")
    plan = {"goal": "A shorter abstract", "issues": ["Too long"], "strategy": ["Cut"], "scope": ["abstract"],
            "risks": ["None"], "questions": []}
    cli(ws, "task", "plan", task_id, stdin=json.dumps(plan), actor="coauthor")

    page = open_page(server, locale="zh-CN", viewport={"width": 1440, "height": 900})
    card = page.locator(f'.ca-card[data-task="{task_id}"]')
    expect(card.locator(".ca-prio")).to_have_text("前台", timeout=10_000)
    card.click()
    expect(page.locator(f'.ca-patch[data-patch="{patch_id}"]')).to_be_visible(timeout=10_000)
    expect(page.locator('[data-act="accept"]')).to_have_text("接受并应用")
    texts = visible_texts(page, f"{COMMON_SKIP}, {TASK_CONTENT}")
    shot(page, "zh-CN-coauthor-task")
    words = english_words([FILE_NAME.sub("", text) for text in texts], ALLOWED | {"user", "coauthor"})
    assert not words, f"English words {sorted(set(words))} in the Chinese task: {texts}"

    page.locator('[data-act="open-reject"]').click()
    expect(page.locator('[data-field="reject"]')).to_have_attribute("placeholder", re.compile("保留第二句"))
    page.locator(".lang-btn[data-locale='en']").click()
    expect(page.locator('[data-field="reject"]')).to_have_attribute("placeholder", re.compile("Keep the second sentence"))
    expect(page.locator('.ca-head .ca-prio')).to_have_text("foreground")
