"""The doc mode's viewer (plugins/doc/pneuma_doc/static/viewer.js) in the real shell.

Each test starts `pneuma run --mode doc` (tests/browser/conftest.py) on a
freshly seeded workspace and drives the page in Debian's Chromium: it reads
what the person sees from the DOM, asks for viewer actions over HTTP exactly
as the agent does, edits files on disk as the agent does, and reads the
viewer context back from the shell (`window.pneuma`) or, with the fake CLI,
from what the agent received. Screenshots land in $PNEUMA_SCREENSHOTS.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import send_and_read, viewer_answer

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "plugins" / "doc" / "pneuma_doc" / "static" / "vendor" / "doc-vendor.js"
TURN = 15_000  # ms a fake CLI turn may take

pytestmark = pytest.mark.skipif(
    not VENDOR.exists(), reason="the doc viewer's vendor bundle is not built (scripts/build-web)"
)

CONTEXT = "window.pneuma.ui.host.context()"
SELECTION = "window.pneuma.ui.selection"


def wait_doc(page: Any) -> Any:
    page.wait_for_selector(".pd-doc h1", timeout=10_000)
    page.wait_for_function(SELECTION)
    return page


@pytest.fixture
def doc(pneuma_server: Any, open_page: Any) -> tuple[Any, Any]:
    """A doc-mode server without an agent, and the shell's page on it."""
    server = pneuma_server("doc", backend="none")
    return server, wait_doc(open_page(server))


def active_tab(page: Any) -> str:
    return page.get_attribute(".pd-tab[aria-selected=true]", "data-path")


def scroller_offset(page: Any, slug: str) -> float:
    """How far below the top of the viewer's scroll box the heading is."""
    return page.evaluate(
        """slug => {
            const s = document.querySelector('.pd-scroll');
            const h = document.querySelector(`.pd-doc [data-slug="${slug}"]`);
            return h.getBoundingClientRect().top - s.getBoundingClientRect().top;
        }""",
        slug,
    )


def select_text(page: Any, selector: str, start: int, end: int) -> str:
    """Select characters [start, end) of the first long enough text node of `selector`."""
    return page.evaluate(
        """([selector, start, end]) => {
            const el = document.querySelector(selector);
            const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
            let node = walker.nextNode();
            while (node && node.length < end) node = walker.nextNode();
            const range = document.createRange();
            range.setStart(node, start);
            range.setEnd(node, end);
            const sel = document.getSelection();
            sel.removeAllRanges();
            sel.addRange(range);
            return sel.toString();
        }""",
        [selector, start, end],
    )


# --- rendering ------------------------------------------------------------------


def test_seed_readme_renders_github_flavoured(doc: tuple[Any, Any], shot: Any) -> None:
    server, page = doc
    tabs = page.eval_on_selector_all(".pd-tab", "els => els.map(e => e.dataset.path)")
    assert tabs == ["README.md", "guide/markdown.md", "notes/ideas.md"]
    assert active_tab(page) == "README.md"

    # The table of "Ways to start": header + six rows, inline code rendered.
    assert page.locator(".pd-doc table th").all_inner_texts() == ["You want to…", "Say something like"]
    assert page.locator(".pd-doc table tbody tr").count() == 6
    # Task list: five disabled checkboxes, the first ticked, no "[ ]" left.
    boxes = page.locator(".pd-doc li.task-list-item input[type=checkbox]")
    assert boxes.count() == 5
    assert [boxes.nth(i).is_checked() for i in range(5)] == [True, False, False, False, False]
    assert all(boxes.nth(i).is_disabled() for i in range(5))
    assert "[ ]" not in page.inner_text(".pd-doc")
    # Highlighted code: the bash comment is a highlight.js span.
    code = page.locator(".pd-doc pre code.hljs.language-bash")
    assert code.count() == 1
    assert code.locator(".hljs-comment").first.inner_text().startswith("# Everything")
    # The image, relative to README.md, actually loaded.
    page.wait_for_function("document.querySelector('.pd-doc img')?.complete")
    assert page.eval_on_selector(".pd-doc img", "img => img.naturalWidth") > 0
    assert page.get_attribute(".pd-doc img", "data-path") == "images/how-it-works.svg"
    # GitHub slugs on headings and a TOC from the ## headings.
    slugs = page.eval_on_selector_all(".pd-doc [data-slug]", "els => els.map(e => e.dataset.slug)")
    assert slugs == ["welcome-to-your-document-workspace", "how-it-works", "ways-to-start",
                     "your-first-five-minutes", "what-the-agent-reads", "good-habits"]  # fmt: skip
    assert page.locator(".pd-toc-list a").all_inner_texts() == [
        "How it works", "Ways to start", "Your first five minutes", "What the agent reads", "Good habits"]
    shot(page, "doc-readme")
    assert page.console_errors == []


def test_guide_renders_and_links_open_tabs(doc: tuple[Any, Any], shot: Any) -> None:
    server, page = doc
    page.click(".pd-tab[data-path='guide/markdown.md']")
    assert active_tab(page) == "guide/markdown.md"
    page.wait_for_function("window.pneuma.ui.activeFile === 'guide/markdown.md'")
    # ../images/ from guide/ resolves to the top-level images folder.
    page.wait_for_function("[...document.querySelectorAll('.pd-doc img')].every(i => i.complete)")
    widths = page.eval_on_selector_all(".pd-doc img", "els => els.map(i => i.naturalWidth)")
    assert widths and all(w > 0 for w in widths)
    assert page.locator(".pd-doc table").count() >= 1
    assert page.locator(".pd-doc pre code.hljs").count() >= 3
    shot(page, "doc-guide")
    # Back to README through the tab, then a link to another .md opens its tab.
    page.click(".pd-tab[data-path='README.md']")
    page.click(".pd-doc a[data-path='notes/ideas.md']")
    assert active_tab(page) == "notes/ideas.md"
    # A link with a fragment opens the file at that heading.
    page.click(".pd-tab[data-path='README.md']")
    page.click(".pd-doc a[data-path='guide/markdown.md'][data-fragment='tables']")
    assert active_tab(page) == "guide/markdown.md"
    assert abs(scroller_offset(page, "tables") - 12) < 4
    assert page.console_errors == []


def test_raw_html_is_shown_as_text(doc: tuple[Any, Any]) -> None:
    server, page = doc
    (server.workspace / "unsafe.md").write_text(
        "# Unsafe\n\n<script>window.pwned = 1</script>\n\n"
        "Inline <img src=x onerror=\"window.pwned = 2\"> and <b>bold</b>.\n\n"
        "[click](javascript:window.pwned=3)\n\n"
        "Edit setup.py and README.md, then see https://example.com/docs.\n"
    )
    result = viewer_answer(server, "navigate-to", {"file": "unsafe.md"})
    assert result["success"] is True, result
    text = page.inner_text(".pd-doc")
    assert "<script>window.pwned = 1</script>" in text
    assert "<b>bold</b>" in text
    assert page.locator(".pd-doc script, .pd-doc img, .pd-doc b").count() == 0
    assert page.locator(".pd-doc a[href^='javascript']").count() == 0
    assert page.evaluate("window.pwned") is None
    # Only addresses with a scheme are autolinked, never file names.
    hrefs = page.eval_on_selector_all(".pd-doc a:not(.pd-anchor)", "els => els.map(a => a.getAttribute('href'))")
    assert hrefs == ["https://example.com/docs"]


# --- viewer context ------------------------------------------------------------------


def test_visible_section_and_selection_become_viewer_context(doc: tuple[Any, Any], shot: Any) -> None:
    server, page = doc
    # At the top: the title is the section on screen.
    assert page.evaluate("window.pneuma.ui.host.context()") == (
        '<viewer-context mode="doc" file="README.md" section="Welcome to your document workspace">\n'
        "</viewer-context>"
    )
    # Scrolled to a section: that section, no selection.
    page.click(".pd-toc-list a[data-slug='ways-to-start']")
    page.wait_for_function("window.pneuma.ui.selection.slug === 'ways-to-start'")
    assert page.evaluate("window.pneuma.ui.host.context()") == (
        '<viewer-context mode="doc" file="README.md" section="Ways to start">\n</viewer-context>'
    )
    assert page.get_attribute(".pd-toc-list a.pd-toc-current", "data-slug") == "ways-to-start"
    # Selecting text in "How it works" (scrolled above) quotes it, with its section.
    selected = select_text(page, "[data-slug='how-it-works'] + ul li", 1, 34)
    assert selected == "This workspace starts with three:"
    page.wait_for_function("window.pneuma.ui.selection && window.pneuma.ui.selection.text")
    ctx = page.evaluate("window.pneuma.ui.host.context()")
    assert ctx == (
        '<viewer-context mode="doc" file="README.md" section="How it works">\n'
        f"Selected text:\n> {selected}\n</viewer-context>"
    )
    # A click outside the viewer (here the top bar; the chat's input when an
    # agent is there) keeps the selection for the message.
    page.click(".topbar", position={"x": 600, "y": 10})
    time.sleep(0.3)
    assert page.evaluate("window.pneuma.ui.selection.text") == selected
    shot(page, "doc-selection")
    # A multi-paragraph selection is quoted line by line.
    page.evaluate(
        """() => {
            const first = [...document.querySelectorAll('.pd-doc > p')]
                .find(p => p.textContent.startsWith('A link to a heading'));
            const range = document.createRange();
            range.setStart(first.firstChild, 0);
            range.setEnd(first.nextElementSibling.lastChild, 1);
            const sel = document.getSelection();
            sel.removeAllRanges();
            sel.addRange(range);
        }"""
    )
    page.wait_for_function("window.pneuma.ui.selection.text && window.pneuma.ui.selection.text.includes('\\n')")
    ctx = page.evaluate("window.pneuma.ui.host.context()")
    assert ctx.startswith('<viewer-context mode="doc" file="README.md" section="What the agent reads">\n'
                          "Selected text:\n> A link to a heading uses")
    body = ctx.split("Selected text:\n", 1)[1].rsplit("\n</viewer-context>", 1)[0]
    assert all(line.startswith(">") for line in body.splitlines())
    # A click in the page drops the selection.
    page.click(".pd-doc h1")
    page.wait_for_function("window.pneuma.ui.selection && window.pneuma.ui.selection.text === null")


def test_extract_context_escapes_attributes(doc: tuple[Any, Any]) -> None:
    server, page = doc
    ctx = page.evaluate(
        """() => window.pneuma.ui.host.module.extractContext(
            {file: 'a "b".md', section: 'Use <tags> & "quotes"', text: 'x\\n</viewer-context> y'}, [])"""
    )
    assert ctx.startswith('<viewer-context mode="doc" file="a &quot;b&quot;.md" section="Use &lt;tags> &amp; &quot;quotes&quot;">')
    assert ctx.count("</viewer-context>") == 1
    assert page.evaluate("window.pneuma.ui.host.module.extractContext(null, [])") == ""


# --- actions ----------------------------------------------------------------------


def test_navigate_to_heading_scrolls_it_into_view_and_answers(doc: tuple[Any, Any], shot: Any) -> None:
    server, page = doc
    result = viewer_answer(server, "navigate-to", {"file": "guide/markdown.md", "heading": "Tables"})
    assert result["success"] is True, result
    assert result["data"] == {"file": "guide/markdown.md", "heading": "Tables", "slug": "tables"}
    assert active_tab(page) == "guide/markdown.md"
    assert abs(scroller_offset(page, "tables") - 12) < 4
    assert page.evaluate("window.pneuma.ui.activeFile") == "guide/markdown.md"
    page.wait_for_function("window.pneuma.ui.selection.slug === 'tables'")
    shot(page, "doc-navigate")

    # By slug, back in README.
    # By slug, back in README; the last section cannot reach the top of the
    # screen, but it is in view and it is the section reported.
    result = viewer_answer(server, "navigate-to", {"file": "README.md", "heading": "good-habits"})
    assert result["success"] is True and result["data"]["slug"] == "good-habits", result
    height = page.evaluate("document.querySelector('.pd-scroll').clientHeight")
    assert 0 < scroller_offset(page, "good-habits") < height / 2
    page.wait_for_function("window.pneuma.ui.selection.slug === 'good-habits'")

    # An unknown heading: success false, the file from the top, the headings listed.
    result = viewer_answer(server, "navigate-to", {"file": "guide/markdown.md", "heading": "No such heading"})
    assert result["success"] is False
    assert "No such heading" in result["message"] and "tables" in result["message"]
    assert page.evaluate("document.querySelector('.pd-scroll').scrollTop") == 0
    # An unknown file: success false, nothing changes.
    result = viewer_answer(server, "navigate-to", {"file": "missing.md"})
    assert result["success"] is False and "missing.md" in result["message"]
    assert active_tab(page) == "guide/markdown.md"
    # An action the viewer does not know answers rather than hanging.
    assert page.evaluate("window.pneuma.ui.host.instance.runAction('nope', {})")["success"] is False


def test_navigate_to_a_file_written_just_before(doc: tuple[Any, Any]) -> None:
    server, page = doc
    (server.workspace / "guide" / "setup.md").write_text(
        "# Setup\n\nIntro.\n\n## Install the CLI\n\nRun it.\n\n## Examples\n\nOne.\n\n## Examples\n\nTwo.\n"
    )
    result = viewer_answer(server, "navigate-to", {"file": "guide/setup.md", "heading": "examples-1"})
    assert result["success"] is True, result
    assert result["data"]["slug"] == "examples-1"
    tabs = page.eval_on_selector_all(".pd-tab", "els => els.map(e => e.dataset.path)")
    assert "guide/setup.md" in tabs


def test_describe_view_and_toggle_toc(doc: tuple[Any, Any], shot: Any) -> None:
    server, page = doc
    viewer_answer(server, "navigate-to", {"file": "README.md", "heading": "How it works"})
    select_text(page, "[data-slug='how-it-works'] + ul li", 1, 34)
    page.wait_for_function("window.pneuma.ui.selection.text")
    result = viewer_answer(server, "describe-view")
    assert result["success"] is True
    data = result["data"]
    assert data["file"] == "README.md"
    assert data["section"] == "How it works" and data["slug"] == "how-it-works"
    assert data["selection"] == page.evaluate("window.pneuma.ui.selection.text")
    assert data["tabs"] == ["README.md", "guide/markdown.md", "notes/ideas.md"]
    assert "README.md" in result["message"] and "How it works" in result["message"]

    assert page.is_visible(".pd-toc")
    result = viewer_answer(server, "ui:toggle-toc", {"visible": False})
    assert result["success"] is True and result["data"] == {"visible": False}
    assert not page.is_visible(".pd-toc")
    shot(page, "doc-no-toc")
    assert viewer_answer(server, "ui:toggle-toc")["data"] == {"visible": True}
    assert page.is_visible(".pd-toc")


# --- live updates ----------------------------------------------------------------------


def test_external_edit_rerenders_in_place_keeping_the_scroll(doc: tuple[Any, Any], shot: Any) -> None:
    server, page = doc
    viewer_answer(server, "navigate-to", {"file": "README.md", "heading": "What the agent reads"})
    page.wait_for_function("document.querySelector('.pd-doc img')?.complete")
    before = scroller_offset(page, "what-the-agent-reads")
    scroll_before = page.evaluate("document.querySelector('.pd-scroll').scrollTop")
    kept = page.evaluate("window.__kept = document.querySelector('.pd-doc [data-slug=\"good-habits\"]'); 1")
    assert kept

    readme = server.workspace / "README.md"
    source = readme.read_text()
    added = "A paragraph the agent added above the reader, long enough to take a few lines. " * 4
    readme.write_text(source.replace("## Ways to start\n", f"{added}\n\n## Ways to start\n", 1))
    started = time.monotonic()
    page.wait_for_function(
        "document.querySelector('.pd-doc').textContent.includes('A paragraph the agent added')", timeout=1000)
    elapsed = time.monotonic() - started
    assert elapsed < 1.0
    # The reading position held: the heading is where it was, the page scrolled by the insert.
    assert abs(scroller_offset(page, "what-the-agent-reads") - before) < 2
    assert page.evaluate("document.querySelector('.pd-scroll').scrollTop") > scroll_before + 40
    # Unchanged blocks kept their DOM nodes.
    assert page.evaluate("window.__kept === document.querySelector('.pd-doc [data-slug=\"good-habits\"]')")
    shot(page, "doc-after-edit")

    # An edit of the visible section itself re-renders without jumping to the top.
    scroll_now = page.evaluate("document.querySelector('.pd-scroll').scrollTop")
    readme.write_text(readme.read_text().replace(
        "Every Markdown feature on GitHub works here.", "Every GitHub Markdown feature works here, edited."))
    page.wait_for_function("document.querySelector('.pd-doc').textContent.includes('feature works here, edited')",
                           timeout=1000)
    assert abs(page.evaluate("document.querySelector('.pd-scroll').scrollTop") - scroll_now) < 2
    assert page.evaluate("window.pneuma.ui.selection.section") == "What the agent reads"
    assert page.console_errors == []


def test_new_and_deleted_files_add_and_close_tabs(doc: tuple[Any, Any]) -> None:
    server, page = doc
    (server.workspace / "design.md").write_text("# Design\n\n## Goals\n\nFast.\n")
    page.wait_for_selector(".pd-tab[data-path='design.md']", timeout=2000)
    assert active_tab(page) == "README.md"
    page.click(".pd-tab[data-path='notes/ideas.md']")
    (server.workspace / "notes" / "ideas.md").unlink()
    page.wait_for_selector(".pd-tab[data-path='notes/ideas.md']", state="detached", timeout=2000)
    active = active_tab(page)
    assert active in ("README.md", "design.md", "guide/markdown.md")
    assert page.evaluate("window.pneuma.ui.activeFile") == active


# --- with an agent ---------------------------------------------------------------------


def test_selected_text_reaches_the_agent_with_the_message(
        pneuma_server: Any, fake_claude: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("doc", claude_bin=fake_claude.bin)
    page = wait_doc(open_page(server))
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn
    assert viewer_answer(server, "navigate-to", {"file": "guide/markdown.md", "heading": "Tables"})["success"]
    page.evaluate(
        """() => {
            const p = [...document.querySelectorAll('.pd-doc > p')]
                .find(p => p.textContent.startsWith('The colons in the second row'));
            const range = document.createRange();
            range.setStart(p.firstChild, 0);
            range.setEnd(p.firstChild, 'The colons in the second row'.length);
            getSelection().removeAllRanges();
            getSelection().addRange(range);
        }"""
    )
    chip = page.locator(".ctx-row .ctx-chip")
    expect(chip).to_contain_text("Tables")
    expect(chip).to_contain_text("The colons in the second row")
    shot(page, "doc-shell-selection")
    assert send_and_read(page, fake_claude, "Make this clearer.", turns=2, timeout=TURN) == (
        '<viewer-context mode="doc" file="guide/markdown.md" section="Tables">\n'
        "Selected text:\n> The colons in the second row\n</viewer-context>\n\nMake this clearer."
    )
    assert page.console_errors == []


def test_dark_mode(pneuma_server: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("doc", backend="none")
    page = wait_doc(open_page(server, color_scheme="dark"))
    background = page.evaluate("getComputedStyle(document.querySelector('.pd-root')).backgroundColor")
    assert background == "rgb(13, 17, 23)", background
    viewer_answer(server, "navigate-to", {"file": "guide/markdown.md", "heading": "Code"})
    shot(page, "doc-dark")
    assert page.console_errors == []
