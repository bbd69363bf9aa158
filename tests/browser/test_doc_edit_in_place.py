"""Edit in place in the doc viewer, with the REAL Claude Code CLI against the
fake Anthropic API (issue 26, item 2; docs/doc.md, "Editing in place").

One `pneuma run --mode doc` and one page: the person double-clicks the
README's first heading, types a new one and presses Enter: exactly that line
changes on disk, every other byte stays. Ctrl-Z puts it back, Ctrl-Shift-Z
brings it again. The person's next message reaches the model with the
`<person-edited>` note naming README.md. Then an edit races a write of the
agent's: the edit is refused (E_CONFLICT), the dialog shows both versions,
the agent's text stays on disk and the person's is kept under
.pneuma/edits/conflicts/. A second race, where the two changed different
lines: "Use mine" writes the person's heading and keeps the agent's line.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_agent_viewer_actions import (  # noqa: F401 (fixtures)
    TURN,
    ThreadedFakeAPI,
    agent_turn,
    fake_api,
    loopback_only_network,
    start_with_real_cli,
)
from tests.e2e.pneuma_run import CLAUDE_BIN
from tests.fakes.anthropic_api import text

pytestmark = pytest.mark.skipif(CLAUDE_BIN is None, reason="the real Claude Code CLI is not installed")

HEADING = "Welcome to your document workspace"
NEW_HEADING = "Our team handbook"


def last_user_text(fake_api: ThreadedFakeAPI) -> str:
    """The text of the last user message the CLI sent the model."""
    def read() -> str:
        body = fake_api.api.conversation_requests()[-1]
        content = body["messages"][-1]["content"]
        if isinstance(content, str):
            return content
        return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")

    return fake_api._on_loop(read)


def disk_is(path: Any, expected: bytes, timeout: float = 10.0) -> None:
    """Wait until the file holds exactly ``expected``."""
    deadline = time.monotonic() + timeout
    while path.read_bytes() != expected:
        assert time.monotonic() < deadline, path.read_bytes()[:300]
        time.sleep(0.05)


def edit_block(page: Any, locator: Any, new_text: str) -> None:
    """Double-click a block, replace its source text, press Enter."""
    locator.dblclick()
    editor = page.locator(".pd-doc .pd-editing")
    expect(editor).to_be_visible()
    editor.press("Control+a")
    editor.type(new_text)
    editor.press("Enter")


def test_a_heading_edited_in_place_changes_that_line_and_the_agent_is_told(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:
    fake_api.push(text("Hi! The starter guide is open. What do you want to write?"))
    server = start_with_real_cli(pneuma_server, fake_api, "doc")
    readme = server.workspace / "README.md"
    original = readme.read_bytes()
    page = open_page(server)
    heading = page.locator(".pd-doc h1").first
    expect(heading).to_contain_text(HEADING, timeout=20_000)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting

    # The heading, edited where it stands: only its line changes on disk.
    edit_block(page, heading, NEW_HEADING)
    edited = original.replace(f"# {HEADING}\n".encode(), f"# {NEW_HEADING}\n".encode(), 1)
    assert edited != original
    disk_is(readme, edited)
    expect(heading).to_contain_text(NEW_HEADING)
    expect(page.locator(".pd-doc .pd-editing")).to_have_count(0)
    shot(page, "doc-edit-heading")

    # Ctrl-Z outside a text field undoes it; Ctrl-Shift-Z redoes it.
    page.locator(".pd-scroll").focus()
    page.keyboard.press("Control+z")
    disk_is(readme, original)
    expect(heading).to_contain_text(HEADING)
    page.keyboard.press("Control+Shift+z")
    disk_is(readme, edited)
    expect(heading).to_contain_text(NEW_HEADING)

    # The agent's next request says the person edited that file.
    fake_api.push(text("I see you renamed it."))
    agent_turn(page, fake_api, "I renamed the page.", turns=2)
    told = last_user_text(fake_api)
    assert '<person-edited files="README.md">' in told, told
    assert told.index("<person-edited") < told.index("I renamed the page."), told

    # An edit racing the agent's write: refused, both texts kept.
    paragraph = page.locator(".pd-doc > p").first
    paragraph.dblclick()
    editor = page.locator(".pd-doc .pd-editing")
    expect(editor).to_be_visible()
    agents = edited.replace(b"This folder is where", b"The agent says: this folder is where", 1)
    readme.write_bytes(agents)
    editor.press("Control+a")
    editor.type("My own first paragraph.")
    editor.press("Enter")
    dialog = page.locator('[data-kind="edit-conflict"]')
    expect(dialog).to_be_visible(timeout=10_000)
    theirs = dialog.locator(".edit-conflict-theirs textarea")
    mine = dialog.locator(".edit-conflict-mine textarea")
    expect(theirs).to_have_value(agents.decode())
    assert "My own first paragraph." in mine.input_value()
    assert readme.read_bytes() == agents  # the agent's text stays on disk
    kept = list((server.workspace / ".pneuma" / "edits" / "conflicts").iterdir())
    assert len(kept) == 1 and "My own first paragraph." in kept[0].read_text()
    assert kept[0].read_text() == mine.input_value()
    shot(page, "doc-edit-conflict")
    dialog.locator(".edit-conflict-theirs-button").click()
    expect(dialog).to_have_count(0)
    expect(paragraph).to_contain_text("The agent says: this folder is where")
    assert readme.read_bytes() == agents
    # A second race, on different parts: "Use mine" keeps the agent's change too.
    heading.dblclick()
    expect(editor).to_be_visible()
    moved_on = agents.replace(b"## How it works", b"## How it all works", 1)
    readme.write_bytes(moved_on)
    editor.press("Control+a")
    editor.type("Handbook")
    editor.press("Enter")
    expect(dialog).to_be_visible(timeout=10_000)
    expect(dialog.locator(".edit-conflict-mine h3")).to_have_text("Your edit, made on the version on disk")
    dialog.locator(".edit-conflict-mine-button").click()
    both = moved_on.replace(f"# {NEW_HEADING}\n".encode(), b"# Handbook\n", 1)
    disk_is(readme, both)
    expect(heading).to_contain_text("Handbook")
    expect(page.locator(".pd-doc h2").first).to_contain_text("How it all works")

    # The refused POST is the only thing the console reports (the browser logs a 409).
    assert [e for e in page.console_errors if "409 (Conflict)" not in e] == []
