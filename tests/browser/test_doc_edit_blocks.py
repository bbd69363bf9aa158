"""In-place edits of the doc viewer's other blocks, without an agent
(docs/doc.md, "Editing in place"): a list item spanning three source lines
shows its Markdown source (bold, code and a link included) where it stands;
Esc leaves the file alone; a changed word changes only those bytes on disk.
A table cell is not a block the viewer edits: a double-click there opens
no editor.
"""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import expect

ITEM_SOURCE = ("**Every `.md` file is a tab.** This workspace starts with three: this\n"
               "  README, a [Markdown guide](guide/markdown.md) and a page of\n"
               "  [notes and ideas](notes/ideas.md). A new file the agent creates opens as a\n"
               "  new tab; a deleted file closes its tab.")


def test_a_list_item_is_edited_as_its_source_and_only_its_bytes_change(pneuma_server: Any, open_page: Any) -> None:
    server = pneuma_server("doc", backend="none")
    readme = server.workspace / "README.md"
    original = readme.read_bytes()
    page = open_page(server)
    item = page.locator(".pd-doc li").first
    expect(item).to_contain_text("Every .md file is a tab.", timeout=20_000)

    item.locator("strong").dblclick()
    editor = page.locator(".pd-doc .pd-editing")
    expect(editor).to_be_visible()
    assert editor.evaluate("(el) => el.innerText") == ITEM_SOURCE
    expect(item).to_have_attribute("data-pneuma-busy", "edit")
    editor.press("Escape")
    expect(editor).to_have_count(0)
    expect(item.locator("strong")).to_have_text("Every .md file is a tab.")
    assert readme.read_bytes() == original

    item.locator("strong").dblclick()
    expect(editor).to_be_visible()
    editor.evaluate("(el) => { el.textContent = el.textContent.replace('starts with three', 'begins with three'); }")
    editor.press("Enter")
    wanted = original.replace(b"This workspace starts with three", b"This workspace begins with three", 1)
    deadline = time.monotonic() + 10
    while readme.read_bytes() != wanted:
        assert time.monotonic() < deadline, readme.read_bytes()[:400]
        time.sleep(0.05)
    expect(item).to_contain_text("This workspace begins with three")
    expect(item.locator("a").first).to_have_attribute("data-path", "guide/markdown.md")

    page.locator(".pd-doc td").first.dblclick()
    expect(editor).to_have_count(0)
    assert page.console_errors == []
