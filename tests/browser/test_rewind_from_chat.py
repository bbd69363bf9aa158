"""Per-turn checkpoints in the chat, in Chromium against `pneuma run --mode
doc` with the fake CLI (issue 16, item 3): under each message the files its
turn changed, with a diff; "Rewind to here" asks first, listing what will
change and any file edited by hand since (left alone unless ticked), puts
the files back, is listed in the chat and can be undone."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send

TURN = 15_000  # ms a fake CLI turn may take in the page


def doc_chat(pneuma_server: Any, fake_claude: Any, open_page: Any, **page_options: Any) -> tuple[Any, Any]:
    server = pneuma_server("doc", claude_bin=fake_claude.bin)
    page = open_page(server, **page_options)
    # The greeting turn first (it has no checkpoint: no message of the person's).
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)
    return server, page


def turn(page: Any, text: str, results: int) -> None:
    """Send ``text`` and wait until its turn has ended and is idle."""
    send(page, text)
    expect(page.locator(".result-line")).to_have_count(results, timeout=TURN)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle", timeout=TURN)


def test_two_turns_are_rewound_from_the_chat_and_the_rewind_undone(
        pneuma_server, fake_claude, open_page, shot):
    server, page = doc_chat(pneuma_server, fake_claude, open_page)
    readme, added = server.workspace / "README.md", server.workspace / "notes" / "later.md"
    original = readme.read_text()
    assert not added.exists()

    turn(page, "write README.md # Rewritten by the agent", 2)
    turn(page, "write notes/later.md A note added in turn two", 3)
    assert readme.read_text() == "# Rewritten by the agent\n" and added.exists()

    first, second = page.locator('.turn-changes[data-ref="1"]'), page.locator('.turn-changes[data-ref="2"]')
    expect(first.locator(".changes-chip")).to_contain_text("1 file changed", timeout=TURN)
    expect(first.locator(".changes-chip")).to_contain_text("~1")
    expect(second.locator(".changes-chip")).to_contain_text("+1", timeout=TURN)

    # What turn 1 changed, and its diff.
    first.locator(".changes-chip").click()
    changed = first.locator('.changed-file[data-path="README.md"]')
    expect(changed).to_have_attribute("data-change", "modified")
    changed.locator(".changed-file-head").click()
    expect(changed.locator(".diff-add")).to_contain_text("# Rewritten by the agent")
    expect(changed.locator(".diff-del").first).to_be_visible()
    shot(page, "rewind-1-turn-changes")
    changed.locator(".changed-file-head").press("Enter")  # closes again, from the keyboard
    expect(changed.locator(".turn-diff")).to_have_count(0)

    # Rewind to before turn 1: both files, listed first.
    first.locator(".rewind-btn").click()
    dialog = page.locator(".rewind-dialog")
    expect(dialog.locator(".detail-write")).to_contain_text("README.md")
    expect(dialog.locator(".detail-delete")).to_contain_text("notes/later.md")
    expect(dialog.locator(".conflict-list")).to_have_count(0)
    expect(dialog.locator(".rewind-confirm")).to_be_focused()
    shot(page, "rewind-2-confirm")
    page.keyboard.press("Enter")
    expect(dialog).to_have_count(0, timeout=TURN)

    note = page.locator('.rewind-note[data-target="1"]')
    expect(note).to_contain_text("Rewound to before turn 1: 2 files restored", timeout=TURN)
    assert readme.read_text() == original and not added.exists()
    shot(page, "rewind-3-note")

    # Undo puts the agent's work back; the note's Undo is spent.
    note.locator(".rewind-undo").click()
    expect(page.locator('.rewind-note[data-target^="u"]')).to_contain_text("Rewind undone: 2 files restored",
                                                                           timeout=TURN)
    expect(note.locator(".rewind-undo")).to_be_disabled()
    assert readme.read_text() == "# Rewritten by the agent\n"
    assert added.read_text() == "A note added in turn two\n"

    # A reload shows the same: the chips and both notes come from the log.
    page.reload()
    page.wait_for_selector('.pill[data-state="open"]', timeout=10_000)
    expect(page.locator(".rewind-note")).to_have_count(2, timeout=TURN)
    expect(page.locator('.turn-changes[data-ref="2"] .changes-chip')).to_contain_text("1 file changed")
    # The rewind note sits after turn 2's result, where it happened.
    order = page.locator(".messages .msg-group > *").evaluate_all(  # the rows (lib/chat.js)
        "(nodes) => nodes.map((n) => n.matches('.rewind-note') ? 'rewind' : n.matches('.result-line') ? 'result' : '')")
    order = [kind for kind in order if kind]
    assert order == ["result", "result", "result", "rewind", "rewind"], order

    # The agent is told, in its next message, which files changed on disk.
    turn(page, "hello again", 4)
    told = fake_claude.user_texts()[-1]
    assert told.startswith("<workspace-restored>") and "README.md" in told
    # That turn changed nothing, and says so.
    expect(page.locator('.turn-changes[data-ref="3"] .changes-none')).to_have_text("No files changed",
                                                                                  timeout=TURN)
    assert page.console_errors == []


def test_a_hand_edit_is_a_conflict_kept_unless_ticked(pneuma_server, fake_claude, open_page, shot):
    server, page = doc_chat(pneuma_server, fake_claude, open_page)
    readme, ideas = server.workspace / "README.md", server.workspace / "notes" / "ideas.md"
    readme_before, ideas_before = readme.read_text(), ideas.read_text()

    turn(page, "write README.md # The agent's README\nwrite notes/ideas.md The agent's ideas", 2)
    expect(page.locator('.turn-changes[data-ref="1"] .changes-chip')).to_contain_text("2 files changed",
                                                                                      timeout=TURN)
    # The person edits the README by hand after the turn.
    readme.write_text("# The agent's README\nMy own line.\n")

    rewind = page.locator('.turn-changes[data-ref="1"] .rewind-btn')
    rewind.click()
    dialog = page.locator(".rewind-dialog")
    conflict = dialog.locator('.conflict-list li[data-path="README.md"]')
    expect(conflict).to_be_visible(timeout=TURN)
    expect(conflict.locator("input[type=checkbox]")).not_to_be_checked()
    expect(dialog.locator(".detail-write")).to_contain_text("notes/ideas.md")
    expect(dialog.locator(".detail-write")).not_to_contain_text("README.md")
    shot(page, "rewind-4-conflict")
    dialog.locator(".rewind-confirm").click()
    expect(dialog).to_have_count(0, timeout=TURN)
    note = page.locator('.rewind-note[data-target="1"]').first
    expect(note).to_contain_text("1 file restored", timeout=TURN)
    expect(note).to_contain_text("Kept as you edited them: README.md")
    assert ideas.read_text() == ideas_before
    assert readme.read_text() == "# The agent's README\nMy own line.\n"  # not overwritten

    # Again, ticking the conflict this time: now it is overwritten.
    rewind.click()
    expect(conflict).to_be_visible(timeout=TURN)
    conflict.locator("input[type=checkbox]").check()
    dialog.locator(".rewind-confirm").click()
    expect(page.locator('.rewind-note[data-target="1"]')).to_have_count(2, timeout=TURN)
    assert readme.read_text() == readme_before

    # A hand edit after the rewind: its Undo asks first, that file unticked.
    readme.write_text("Edited after the rewind.\n")
    page.locator('.rewind-note[data-target="1"]').nth(1).locator(".rewind-undo").click()
    expect(dialog).to_contain_text("Undo the rewind?", timeout=TURN)
    expect(conflict.locator("input[type=checkbox]")).not_to_be_checked()
    dialog.locator(".btn", has_text="Cancel").click()
    expect(dialog).to_have_count(0)
    assert readme.read_text() == "Edited after the rewind.\n"

    # Escape closes the dialog and changes nothing.
    rewind.click()
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(rewind).to_be_focused()
    assert page.console_errors == []


def test_the_rewind_looks_right_in_dark_mode(pneuma_server, fake_claude, open_page, shot):
    server, page = doc_chat(pneuma_server, fake_claude, open_page, color_scheme="dark")
    turn(page, "write README.md # Dark\nwrite notes/dark.md New", 2)
    first = page.locator('.turn-changes[data-ref="1"]')
    first.locator(".changes-chip").click()
    first.locator('.changed-file[data-path="README.md"] .changed-file-head').click()
    expect(first.locator(".diff-add")).to_contain_text("# Dark")
    shot(page, "rewind-5-dark")
    first.locator(".rewind-btn").click()
    expect(page.locator(".rewind-dialog .detail-delete")).to_contain_text("notes/dark.md")
    shot(page, "rewind-6-dark-confirm")
    page.locator(".rewind-dialog .rewind-confirm").click()
    expect(page.locator(".rewind-note")).to_have_count(1, timeout=TURN)
    assert not (server.workspace / "notes" / "dark.md").exists()
    assert page.console_errors == []


def pick(page: Any, title: str) -> None:
    """Switch to the conversation whose title contains ``title``."""
    page.locator(".conv-bar .conv-current").click()
    page.locator(".conv-row", has_text=title).locator(".conv-pick").click()
    expect(page.locator(".conv-pop")).to_have_count(0)


def test_a_turns_changes_and_rewind_survive_a_conversation_switch_and_a_reload(
        pneuma_server, fake_claude, open_page):
    """Issue 25, item 4: switching to another conversation and back, and a
    reload while that other one is current, keep each turn's "N files
    changed" and "Rewind to here"."""
    server, page = doc_chat(pneuma_server, fake_claude, open_page)
    turn(page, "write README.md # Rewritten in the first conversation", 2)
    first = page.locator('.turn-changes[data-ref="1"]')
    expect(first.locator(".changes-chip")).to_contain_text("1 file changed", timeout=TURN)

    bar = page.locator(".conv-bar")
    bar.locator(".conv-new").click()
    expect(page.locator(".msg.user")).to_have_count(0, timeout=TURN)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the new one's greeting
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle", timeout=TURN)
    turn(page, "write notes/second.md Written in the second conversation", 2)
    second = page.locator('.turn-changes[data-ref="2"]')
    expect(second.locator(".changes-chip")).to_contain_text("1 file changed", timeout=TURN)

    # Back to the first conversation: its turn still shows what it changed.
    pick(page, "Rewritten in the first")
    expect(page.locator(".msg.user .bubble")).to_have_text(
        ["write README.md # Rewritten in the first conversation"], timeout=TURN)
    expect(first.locator(".changes-chip")).to_contain_text("1 file changed", timeout=TURN)
    expect(first.locator(".rewind-btn")).to_be_visible()

    # To the second again, then a reload while it is current.
    pick(page, "Written in the second")
    expect(second.locator(".changes-chip")).to_contain_text("1 file changed", timeout=TURN)
    expect(second.locator(".rewind-btn")).to_be_visible()
    page.reload()
    page.wait_for_selector('.pill[data-state="open"]', timeout=10_000)
    expect(second.locator(".changes-chip")).to_contain_text("1 file changed", timeout=TURN)
    expect(second.locator(".rewind-btn")).to_be_visible()
    # And from there to the first, which this page has not seen before.
    pick(page, "Rewritten in the first")
    expect(page.locator(".msg.user .bubble")).to_have_text(
        ["write README.md # Rewritten in the first conversation"], timeout=TURN)
    expect(first.locator(".changes-chip")).to_contain_text("1 file changed", timeout=TURN)
    expect(first.locator(".rewind-btn")).to_be_visible()
    assert page.console_errors == []
