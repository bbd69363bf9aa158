"""The CoAuthor viewer (plugins/coauthor/pneuma_coauthor/static/viewer.js) in the real shell.

Each test starts `pneuma run --mode coauthor --backend none` on a freshly
seeded paper (latexmk off, so Accept is quick), drives the billboard with the
real `pneuma coauthor` CLI as the agent would, and checks what the person sees
and what their clicks do: the task board, the side-by-side patch, Accept
(the file changes on disk), Reject (the reason is on the log), line selection
in a .tex file (the viewer context), and the viewer actions over HTTP.
Screenshots land in $PNEUMA_SCREENSHOTS.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import api_call, drag, viewer_action, viewer_answer

PNEUMA = Path(sys.executable).with_name("pneuma")
CONTEXT = "window.pneuma.ui.host.context()"


def cli(ws: Path, *args: str, stdin: str | None = None, actor: str | None = None) -> str:
    """The real `pneuma coauthor` in its own process, as the agent runs it."""
    env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "coauthor"}
    env.pop("ANTHROPIC_API_KEY", None)
    command = [str(PNEUMA), "coauthor", "--workspace", str(ws)]
    if actor:
        command += ["--actor", actor]
    proc = subprocess.run([*command, *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc.stdout


def propose(ws: Path, task_id: str, path: str, old: str, new: str) -> str:
    """Propose replacing the line `old` with `new` in `path`; the patch id."""
    text = (ws / path).read_text(encoding="utf-8")
    assert old in text.splitlines()
    changed = "\n".join(new if line == old else line for line in text.split("\n"))
    diff = "".join(difflib.unified_diff(
        text.splitlines(keepends=True), changed.splitlines(keepends=True), f"a/{path}", f"b/{path}",
    ))  # fmt: skip
    cli(ws, "--actor", "coauthor", "task", "claim", task_id)
    out = cli(ws, "patch", "propose", task_id, path, "--summary", "Shorten the sentence", stdin=diff, actor="coauthor")
    return out.strip().splitlines()[-1]


@pytest.fixture
def coauthor(pneuma_server: Any, open_page: Any, tmp_path: Path) -> tuple[Any, Any, Path]:
    ws = tmp_path / "paper"
    (ws / ".pneuma").mkdir(parents=True)
    (ws / ".pneuma" / "coauthor.toml").write_text('[build]\nlatexmk = "off"\n', encoding="utf-8")
    server = pneuma_server("coauthor", backend="none", workspace=ws)
    assert (ws / "sections" / "method.tex").is_file(), "the paper was not seeded"
    page = open_page(server)
    page.wait_for_selector(".ca-root .ca-board", timeout=10_000)
    return server, page, server.workspace


ABSTRACT_OLD = "The bottleneck of co-creation has moved from producing text to keeping the person in control of it."
ABSTRACT_NEW = "Co-creation is now bottlenecked on keeping the person in control."


def test_board_shows_a_task_created_through_the_cli(coauthor: Any, shot: Any):
    server, page, ws = coauthor
    assert page.console_errors == []
    out = cli(ws, "task", "create", "Tighten the figure caption", "--file", "sections/method.tex:10-12")
    task_id = out.strip().splitlines()[-1]
    # No reload: the server broadcasts each new event (a mode_event) and the viewer shows it.
    card = page.locator(f'.ca-col-open .ca-card[data-task="{task_id}"]')
    expect(card).to_be_visible(timeout=10_000)
    expect(card.locator(".ca-intent")).to_have_text("Tighten the figure caption")
    expect(card.locator(".ca-owner")).to_have_text("coauthor")
    expect(card.locator(".ca-prio")).to_have_text("foreground")
    expect(card.locator(".ca-ref-chip")).to_have_text("method.tex:10–12")
    # Claimed and planned with a blocking question: the card moves to Blocked.
    cli(ws, "task", "claim", task_id, actor="coauthor")
    plan = {"goal": "A caption of two sentences", "issues": ["The caption repeats the text"],
            "strategy": ["Cut the second sentence"], "scope": ["sections/method.tex:10-12"],
            "risks": ["Losing the rebase case"], "questions": ["Should the caption mention the blocked state?"]}
    cli(ws, "task", "plan", task_id, stdin=json.dumps(plan), actor="coauthor")
    blocked = page.locator(f'.ca-col-blocked .ca-card[data-task="{task_id}"]')
    expect(blocked).to_be_visible(timeout=10_000)
    expect(blocked.locator(".ca-badge-warn")).to_have_text("1 question")
    expect(page.locator(".ca-nav-board .ca-count-hot")).to_have_text("1")
    shot(page, "coauthor-board")
    # The task: its plan with every part, and its thread in log order.
    blocked.click()
    expect(page.locator(".ca-root")).to_have_attribute("data-task", task_id)
    plan_panel = page.locator(".ca-plan")
    for text in ("A caption of two sentences", "The caption repeats the text", "Cut the second sentence",
                 "Losing the rebase case", "Should the caption mention the blocked state?"):
        expect(plan_panel).to_contain_text(text)
    types = page.locator(".ca-thread .ca-ev-type").all_text_contents()
    assert types == ["TaskCreated", "TaskRouted", "TaskClaimed", "TaskStarted", "AgentPlanPosted"]
    # Answering the question is feedback on the log, and the task leaves Blocked.
    page.fill('[data-field="answer"]', "Yes, in one clause.")
    page.click('[data-act="answer"]')
    expect(page.locator(".ca-head .ca-pill")).to_have_text("in progress", timeout=10_000)
    log = cli(ws, "log", "replay", task_id)
    status, detail = api_call(server, "GET", f"/api/coauthor/tasks/{task_id}", timeout=15)
    assert status == 200, detail
    assert "UserFeedbackPosted" in log and "Yes, in one clause." in json.dumps(detail)
    shot(page, "coauthor-task-plan")
    assert page.console_errors == []


def test_a_proposed_patch_side_by_side_and_accept_applies_it(coauthor: Any, shot: Any):
    server, page, ws = coauthor
    task_id = cli(ws, "task", "create", "Shorten the abstract's second sentence", "--file",
                  "sections/abstract.tex:2").strip().splitlines()[-1]
    patch_id = propose(ws, task_id, "sections/abstract.tex", ABSTRACT_OLD, ABSTRACT_NEW)
    card = page.locator(f'.ca-col-review .ca-card[data-task="{task_id}"]')
    expect(card).to_be_visible(timeout=10_000)
    card.click()
    panel = page.locator(f'.ca-patch[data-patch="{patch_id}"]')
    expect(panel).to_be_visible(timeout=10_000)
    change = panel.locator(".ca-row-change")
    expect(change).to_have_count(1)
    # Before on the left, after on the right, on the same row, with line numbers.
    cells = change.locator("td")
    assert cells.nth(0).inner_text() == "2" and cells.nth(2).inner_text() == "2"
    assert cells.nth(1).inner_text() == ABSTRACT_OLD
    assert cells.nth(3).inner_text() == ABSTRACT_NEW
    left, right = cells.nth(1).bounding_box(), cells.nth(3).bounding_box()
    assert left["x"] + left["width"] <= right["x"] and abs(left["y"] - right["y"]) < 2
    expect(panel.locator(".ca-row-same")).to_have_count(4)
    shot(page, "coauthor-patch-side-by-side")

    page.click('[data-act="accept"]')
    expect(page.locator(".ca-notice")).to_contain_text(f"Applied {patch_id}", timeout=10_000)
    text = (ws / "sections" / "abstract.tex").read_text(encoding="utf-8")
    assert ABSTRACT_NEW in text and ABSTRACT_OLD not in text
    expect(page.locator(".ca-head .ca-pill")).to_have_text("done", timeout=10_000)
    expect(panel).to_have_attribute("data-state", "applied")
    types = page.locator(".ca-thread .ca-ev-type").all_text_contents()
    # latexmk is off: the build is recorded as skipped, which is not an error.
    assert types[-5:] == ["PatchAccepted", "PatchApplied", "ArtifactChanged", "BuildChecked", "TaskCompleted"]
    shot(page, "coauthor-patch-applied")
    page.click('.ca-head [data-act="board"]')
    expect(page.locator(f'.ca-col-done .ca-card[data-task="{task_id}"]')).to_be_visible()
    assert page.console_errors == []


def test_reject_asks_for_a_reason_and_records_it(coauthor: Any, shot: Any):
    server, page, ws = coauthor
    task_id = cli(ws, "task", "create", "Shorten the abstract").strip().splitlines()[-1]
    patch_id = propose(ws, task_id, "sections/abstract.tex", ABSTRACT_OLD, ABSTRACT_NEW)
    before = (ws / "sections" / "abstract.tex").read_text(encoding="utf-8")
    # The agent shows the patch: the viewer opens it and says what it shows.
    result = viewer_answer(server, "show-patch", {"patchId": patch_id})
    assert result["success"] is True, result
    assert result["data"] == {"taskId": task_id, "patchId": patch_id, "state": "proposed",
                              "files": ["sections/abstract.tex"], "drifted": []}
    panel = page.locator(f'.ca-patch[data-patch="{patch_id}"]')
    expect(panel).to_be_visible(timeout=10_000)
    assert viewer_answer(server, "show-patch", {"patchId": "t-999-p1"})["success"] is False

    page.click('[data-act="open-reject"]')
    page.click('[data-act="reject"]')  # no reason yet: refused, nothing recorded
    expect(page.locator(".ca-notice")).to_contain_text("Say why")
    assert "PatchRejected" not in cli(ws, "log", "replay", task_id)
    page.fill('[data-field="reject"]', "Keep the word co-creation; cut the rest of the clause instead")
    shot(page, "coauthor-reject-reason")
    page.click('[data-act="reject"]')
    expect(panel).to_have_attribute("data-state", "rejected", timeout=10_000)
    expect(panel).to_contain_text("Rejected: Keep the word co-creation")
    log = cli(ws, "log", "replay", task_id)
    rejected = [line for line in log.splitlines() if line.startswith("PatchRejected")]
    assert len(rejected) == 1 and patch_id in rejected[0] and "Keep the word co-creation" in rejected[0]
    assert (ws / "sections" / "abstract.tex").read_text(encoding="utf-8") == before
    described = viewer_answer(server, "describe-view")
    assert described["success"] and described["data"]["taskId"] == task_id
    assert described["data"]["status"] == "in_progress"
    assert page.console_errors == []


def test_selecting_tex_lines_gives_the_viewer_context(coauthor: Any, shot: Any):
    server, page, ws = coauthor
    result = viewer_answer(server, "navigate-to", {"file": "sections/method.tex", "line": 12})
    assert result["success"] is True, result
    expect(page.locator(".ca-root")).to_have_attribute("data-file", "sections/method.tex")
    lines = (ws / "sections" / "method.tex").read_text(encoding="utf-8").split("\n")
    # Click line 12's number, shift-click line 18's: lines 12-18.
    page.click('.ca-line[data-line="12"] .ca-ln')
    page.click('.ca-line[data-line="18"] .ca-ln', modifiers=["Shift"])
    expect(page.locator(".ca-line.ca-sel")).to_have_count(7)
    expected = ('<viewer-context mode="coauthor" file="sections/method.tex" lines="12-18">\n'
                + "\n".join(lines[11:18]) + "\n</viewer-context>")
    assert page.evaluate(CONTEXT) == expected
    expect(page.locator(".ctx-chip").first).to_contain_text("method.tex · lines 12–18")
    described = viewer_answer(server, "describe-view")
    assert described["data"]["file"] == "sections/method.tex"
    assert described["data"]["selection"] == {"file": "sections/method.tex", "lines": [12, 18]}
    shot(page, "coauthor-tex-selection")

    # Selecting text with the mouse across lines 19 to 20 selects those lines.
    first = page.locator('.ca-line[data-line="19"] .ca-tx').bounding_box()
    last = page.locator('.ca-line[data-line="20"] .ca-tx').bounding_box()
    drag(page, (first["x"] + 30, first["y"] + 5), (last["x"] + 60, last["y"] + 5))
    expect(page.locator(".ca-line.ca-sel")).to_have_count(2)
    assert page.evaluate(CONTEXT).startswith('<viewer-context mode="coauthor" file="sections/method.tex" lines="19-20">\n'
                                             + lines[18] + "\n")

    # A task on the selected lines, from the viewer: the same use case as `task create --file`.
    page.click('[data-act="new-task"]')
    page.fill('[data-field="newTask"]', "Say which files the viewer watches")
    page.click('[data-act="create-task"]')
    expect(page.locator(".ca-root")).to_have_attribute("data-view", "task", timeout=10_000)
    task_id = page.get_attribute(".ca-root", "data-task")
    shown = json.loads(cli(ws, "task", "show", task_id))
    assert shown["intent"] == "Say which files the viewer watches"
    assert shown["artifactRefs"] == [{"path": "sections/method.tex", "range": {"lineStart": 19, "lineEnd": 20}}]
    # The file view marks the lines an open task points at.
    page.click('.ca-ref-chip[data-act="open-file"]')
    expect(page.locator(".ca-line.ca-reffed")).to_have_count(2)
    assert page.console_errors == []


def test_outline_and_actions(coauthor: Any, shot: Any):
    server, page, ws = coauthor
    assert viewer_answer(server, "navigate-to", {"file": "OUTLINE.md"})["success"]
    expect(page.locator(".ca-md h1")).to_have_text("Outline: Live Viewers for Human–Agent Co-Creation")
    expect(page.locator(".ca-md h2").first).to_contain_text("Abstract")
    shot(page, "coauthor-outline")
    # A file named in the outline opens with its line numbers.
    page.locator('.ca-md [data-act="open-file"][data-path="sections/method.tex"]').first.click()
    expect(page.locator('.ca-code[data-path="sections/method.tex"] .ca-line')).to_have_count(
        len((ws / "sections" / "method.tex").read_text(encoding="utf-8").rstrip("\n").split("\n"))
    )
    missing = viewer_answer(server, "navigate-to", {"file": "sections/nope.tex"})
    assert missing["success"] is False and "nope.tex" in missing["message"]
    assert viewer_answer(server, "show-task", {"taskId": "t-404"})["success"] is False
    task_id = cli(ws, "task", "create", "Check the references").strip().splitlines()[-1]
    shown = viewer_answer(server, "show-task", {"taskId": task_id})
    assert shown["success"] and shown["data"]["taskId"] == task_id
    expect(page.locator(".ca-root")).to_have_attribute("data-task", task_id)
    board = viewer_answer(server, "describe-view")
    assert board["data"]["view"] == "task"
    status, _ = viewer_action(server, "zoom")  # not declared in the manifest: the server refuses it
    assert status == 400
    assert page.console_errors == []
