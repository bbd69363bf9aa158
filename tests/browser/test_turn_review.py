"""A slide turn reviewed in slides, and one of its changes reverted, from the
chat (issue 28, items 1 and 2, its "Done when"; docs/checkpoints.md, "In the
chat").

`pneuma run --mode slide` with the REAL Claude Code CLI against the fake
Anthropic Messages API (tests/fakes/anthropic_api.py), the shell open in
Debian's Chromium. The scripted model retitles slide 3 and moves slide 7
after slide 4 with two Bash calls. Under the person's message the chat shows
exactly those two changes in the slide mode's terms; "Show" on slide 3's
brings slide 3 into the viewer; reverting only the move puts the deck's
order back in manifest.json and keeps the new title (both live in that one
file); the revert is listed in the chat, and its Undo brings the move back.
A hand edit of manifest.json after the turn then makes a revert ask first,
the file unticked; a reload shows the same; "Rewind to here" asks what to
rewind (files by default), and both takes the files and the chat back.

Everything runs in the loopback-only network namespace of the root conftest.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import send
from tests.browser.test_agent_viewer_actions import (
    TURN,
    ThreadedFakeAPI,
    bash,
    fake_api,  # noqa: F401 (the fixture)
    start_with_real_cli,
)
from tests.e2e.pneuma_run import CLAUDE_BIN
from tests.fakes.anthropic_api import text
from tests.loopback import fail_unless_loopback_only

pytestmark = pytest.mark.skipif(
    CLAUDE_BIN is None,
    reason="the real Claude Code CLI is not installed: pip install claude-agent-sdk==0.2.187",
)
STAGE = ".pns-frame--stage"
NEW_TITLE = "Point, then ask"
SEED_ORDER = ["01-title", "02-problem", "03-point", "04-loop", "05-alignment", "06-modes", "07-workflow",
              "08-your-turn"]
MOVED_ORDER = ["01-title", "02-problem", "03-point", "04-loop", "07-workflow", "05-alignment", "06-modes",
               "08-your-turn"]
RETITLE = ("python3 -c \"import json; p='manifest.json'; d=json.load(open(p)); "
           f"d['slides'][2]['title']='{NEW_TITLE}'; json.dump(d, open(p, 'w'), indent=2)\"")
MOVE = ("python3 -c \"import json; p='manifest.json'; d=json.load(open(p)); s=d['slides']; "
        "s.insert(4, s.pop(6)); json.dump(d, open(p, 'w'), indent=2)\"")
TITLE_ID = "slide:slides/03-point.html:title"
MOVE_ID = "slide:slides/07-workflow.html:moved"


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    fail_unless_loopback_only("the turn review tests", "tests/browser/test_turn_review.py")


def deck(workspace: Path) -> tuple[list[str], str]:
    """The deck's order (slide names) and slide 3's title, as on disk."""
    data = json.loads((workspace / "manifest.json").read_text(encoding="utf-8"))
    order = [entry["file"].split("/")[-1].removesuffix(".html") for entry in data["slides"]]
    title = next(entry["title"] for entry in data["slides"] if entry["file"].endswith("03-point.html"))
    return order, title


def test_a_slide_turn_is_reviewed_in_slides_and_only_its_move_is_reverted(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:
    fake_api.push(text("Hi! A starter deck is open."))
    server = start_with_real_cli(pneuma_server, fake_api, "slide")
    page = open_page(server, viewport={"width": 1500, "height": 900})
    page.wait_for_function(f"() => document.querySelector('{STAGE}')"
                           f" && document.querySelector('{STAGE}').contentDocument.querySelector('section.slide')")
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn

    fake_api.push(text("Retitling slide 3."), bash(RETITLE, "Retitle slide 3"))
    fake_api.push(bash(MOVE, "Move slide 7 after slide 4"))
    fake_api.push(text("Slide 3 has its new title and the workflow comes right after the loop."))
    send(page, "Retitle slide 3 and show the workflow right after the loop")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    assert fake_api.pending() == 0
    assert deck(server.workspace) == (MOVED_ORDER, NEW_TITLE)

    # Exactly the two changes, in slides, on one line; opened, one row each.
    turn = page.locator('.turn-changes[data-ref="1"]')
    summary = turn.locator(".turn-summary")
    expect(summary).to_contain_text("Slide 3: title changed", timeout=TURN)
    expect(summary).to_contain_text("moved from 7 to 5")
    expect(turn.locator(".changes-chip")).to_contain_text("1 file changed")  # the files, as before
    summary.click()
    rows = turn.locator(".turn-change")
    expect(rows).to_have_count(2)
    assert rows.evaluate_all("(rows) => rows.map((r) => r.dataset.changeId)") == [TITLE_ID, MOVE_ID]
    title_row, move_row = rows.nth(0), rows.nth(1)
    expect(move_row.locator(".tc-where")).to_have_text("Slide 5")
    # Each change opens the diff of its files, as the files' list does.
    move_row.locator(".tc-diff").click()
    manifest_diff = move_row.locator('.tc-file[data-path="manifest.json"]')
    expect(manifest_diff.locator(".diff-add", has_text="07-workflow")).to_have_count(1, timeout=TURN)
    shot(page, "turn-review-1-changes")
    move_row.locator(".tc-diff").press("Enter")  # closes again, from the keyboard
    expect(manifest_diff).to_have_count(0)

    # "Show" brings slide 3 into the viewer, from wherever it is.
    page.locator('.pns-thumb[data-index="0"]').click()
    expect(page.locator(".pns-counter")).to_have_text(re.compile(r"^1 /"))
    title_row.locator(".tc-show").click()
    expect(page.locator(".pns-counter")).to_have_text(re.compile(r"^3 /"))

    # Revert only the move: the order comes back, the new title stays.
    move_row.locator(".tc-revert").click()
    note = page.locator(f'.rewind-note[data-change-id="{MOVE_ID}"]')
    expect(note).to_contain_text("1 file restored", timeout=TURN)
    assert deck(server.workspace) == (SEED_ORDER, NEW_TITLE)
    expect(move_row.locator(".tc-revert")).to_have_text("Reverted")
    expect(move_row.locator(".tc-revert")).to_be_disabled()
    expect(title_row.locator(".tc-revert")).to_be_enabled()
    shot(page, "turn-review-2-reverted")

    # The revert's Undo brings the move back, the title unchanged.
    note.locator(".rewind-undo").click()
    expect(page.locator('.rewind-note[data-target^="u"]')).to_contain_text("1 file restored", timeout=TURN)
    assert deck(server.workspace) == (MOVED_ORDER, NEW_TITLE)
    expect(move_row.locator(".tc-revert")).to_have_text("Revert")  # it can be reverted again

    # A hand edit of manifest.json since the turn: reverting the title asks
    # first, the file unticked; ticked, the title goes back and the order stays.
    manifest = server.workspace / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["title"] = "My own deck title"
    manifest.write_text(json.dumps(data, indent=2), encoding="utf-8")
    title_row.locator(".tc-revert").click()
    dialog = page.locator(".revert-dialog")
    conflict = dialog.locator('.conflict-list li[data-path="manifest.json"]')
    expect(conflict).to_be_visible(timeout=TURN)
    expect(conflict.locator("input[type=checkbox]")).not_to_be_checked()
    expect(dialog.locator(".revert-confirm")).to_be_disabled()
    shot(page, "turn-review-3-conflict")
    conflict.locator("input[type=checkbox]").check()
    dialog.locator(".revert-confirm").click()
    expect(dialog).to_have_count(0, timeout=TURN)
    expect(page.locator(f'.rewind-note[data-change-id="{TITLE_ID}"]')).to_have_count(1, timeout=TURN)
    order, title = deck(server.workspace)
    assert (order, title) == (MOVED_ORDER, "Point at it. Don't describe it.")
    assert json.loads(manifest.read_text(encoding="utf-8"))["title"] == "My own deck title"

    # A reload shows the same, from the conversation log: the title reverted, the move not.
    page.reload()
    expect(summary).to_contain_text("Slide 3: title changed", timeout=TURN)
    summary.click()
    expect(title_row.locator(".tc-revert")).to_have_text("Reverted")
    expect(move_row.locator(".tc-revert")).to_have_text("Revert")

    # "Rewind to here" asks what to rewind, the files by default; both puts
    # the files back as they were before the message, then takes the chat
    # back to before it.
    turn.locator(".rewind-btn").click()
    rewind = page.locator(".rewind-dialog")
    expect(rewind.locator(".rewind-choice input[value=files]")).to_be_checked()
    expect(rewind.locator(".rewind-choice input[type=radio]")).to_have_count(3)
    rewind.locator(".rewind-choice input[value=conversation]").check()
    expect(rewind.locator(".rewind-confirm")).to_have_text("Rewind the conversation")
    expect(rewind.locator(".detail-write")).to_have_count(0)  # the files stay: not listed
    rewind.locator(".rewind-choice input[value=both]").check()
    expect(rewind.locator(".conflict-list li")).to_have_text(re.compile("manifest.json"))  # the hand edit
    shot(page, "turn-review-4-rewind-choice")
    rewind.locator(".rewind-choice input[value=both]").press("Tab")  # keyboard: on to the conflict's tick
    page.keyboard.press("Space")
    rewind.locator(".rewind-confirm").click()
    expect(rewind).to_have_count(0, timeout=TURN)
    expect(page.locator(".msg.user")).to_have_count(0, timeout=TURN)
    assert deck(server.workspace) == (SEED_ORDER, "Point at it. Don't describe it.")
    # The refused revert is the only thing the console reports (the browser logs its 409).
    assert [e for e in page.console_errors if "409 (Conflict)" not in e] == []


def test_a_description_the_page_missed_is_asked_for_in_place_and_shown_in_chinese(
        pneuma_server: Any, fake_claude: Any, open_page: Any, shot: Any) -> None:
    """The turn's `turn_described` never reaches this tab (dropped on its
    socket): the line says "Describing…" from the turn's end, the page asks
    GET /api/checkpoints/1/changes itself, and the summary takes the line's
    place without moving anything, in the page's language."""
    server = pneuma_server("doc", claude_bin=fake_claude.bin)
    dropped: list[str] = []

    def route(ws: Any) -> None:
        to_server = ws.connect_to_server()

        def from_server(frame: str | bytes) -> None:
            lines = frame.split("\n") if isinstance(frame, str) else [frame]
            kept = []
            for line in lines:
                if isinstance(line, str) and line.startswith("{") \
                        and json.loads(line).get("type") == "turn_described":
                    dropped.append(line)
                else:
                    kept.append(line)
            if kept:
                ws.send("\n".join(kept) if isinstance(frame, str) else kept[0])

        to_server.on_message(from_server)

    page = open_page(server, locale="zh-CN",
                     before_goto=lambda p: p.route_web_socket("**/ws/browser/**", route))
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/changes" in r.url else None)
    expect(page.locator(".result-line")).to_have_count(1, timeout=15_000)  # the greeting turn
    send(page, "write notes/later.md # 以后再说")
    expect(page.locator(".result-line")).to_have_count(2, timeout=15_000)

    turn = page.locator('.turn-changes[data-ref="1"]')
    pending = turn.locator(".turn-summary.pending")
    expect(pending).to_have_text("正在整理改动…", timeout=5_000)
    waiting = pending.bounding_box()
    summary = turn.locator("button.turn-summary")
    expect(summary).to_contain_text("notes/later.md：", timeout=15_000)
    assert dropped and asked, (dropped, asked)
    assert asked[0].endswith("/api/checkpoints/1/changes")
    shown = summary.bounding_box()
    assert (shown["y"], shown["height"]) == (waiting["y"], waiting["height"])  # nothing moved
    shot(page, "turn-review-5-zh")

    # Its "查看" (Show) opens the new page in the viewer, from another tab.
    page.locator('.pd-tab[data-path="README.md"]').click()
    expect(page.locator('.pd-tab[data-path="README.md"]')).to_have_attribute("aria-selected", "true")
    summary.click()
    row = turn.locator(".turn-change")
    expect(row).to_have_count(1)
    row.locator(".tc-show").click()
    expect(page.locator('.pd-tab[data-path="notes/later.md"]')).to_have_attribute("aria-selected", "true")
    assert page.console_errors == []
