"""`pneuma checkpoints show REF` and `revert REF CHANGE_ID` in a slide
workspace, with the slide mode's own describer (issue 28, "the same through
the terminal"): a turn that retitles slide 3 and moves slide 7 after 4 shows
exactly those two changes; reverting only the move puts the order back and
keeps the new title on disk; a hand edit since the turn stops the revert
unless --force; --json for both."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pneuma.checkpoints import Checkpoints
from pneuma.cli.checkpoints import checkpoints
from pneuma.host.registry import get_mode
from pneuma.workspace.params import init_workspace

TITLE = "slide:slides/03-point.html:title"
MOVE = "slide:slides/07-workflow.html:moved"
NEW_TITLE = "Point at it"


def run(*args: str):
    return CliRunner().invoke(checkpoints, list(args))


def _order(workspace: Path) -> list[str]:
    deck = json.loads((workspace / "manifest.json").read_text())
    return [s["file"][7:9] for s in deck["slides"]]


def _slide_turn(workspace: Path) -> None:
    """What the agent's turn does: retitle slide 3 (in manifest.json: its
    fragment has no heading) and move slide 7 after slide 4."""
    init_workspace(get_mode("slide"), workspace, {}, record=True)
    store = Checkpoints(workspace)
    store.record("retitle slide 3 and move slide 7 after 4")
    manifest = workspace / "manifest.json"
    deck = json.loads(manifest.read_text())
    deck["slides"][2]["title"] = NEW_TITLE
    deck["slides"].insert(4, deck["slides"].pop(6))
    manifest.write_text(json.dumps(deck, indent=2) + "\n")
    store.turn_ended()


def test_show_lists_the_turn_in_slides_and_revert_undoes_only_the_move(
        pm, tmp_path: Path) -> None:
    _slide_turn(tmp_path)
    shown = run("show", "1", "-w", str(tmp_path))
    assert shown.exit_code == 0, shown.output
    lines = [line.split(None, 1) for line in shown.stdout.splitlines() if line.startswith("  ")]
    assert lines == [[TITLE, "Slide 3: title changed"], [MOVE, "Slide 5: moved from 7 to 5"]]
    assert "in the slide mode's terms" in shown.stdout
    data = json.loads(run("show", "1", "-w", str(tmp_path), "--json").stdout)
    assert (data["ref"], data["source"]) == ("1", "mode")
    assert [c["id"] for c in data["changes"]] == [TITLE, MOVE]
    assert data["changes"][0]["where"] == {"en": "Slide 3", "zh-CN": "第 3 页"}

    # Only the move: the order goes back, the new title stays.
    manifest = tmp_path / "manifest.json"
    moved = run("revert", "1", MOVE, "-w", str(tmp_path))
    assert moved.exit_code == 0, moved.output
    assert moved.stdout.startswith("Reverted Slide 5: moved from 7 to 5 (turn 1): manifest.json")
    assert f"pneuma checkpoints restore u1 -w {tmp_path.resolve()}" in moved.stdout
    assert _order(tmp_path) == ["01", "02", "03", "04", "05", "06", "07", "08"]
    assert json.loads(manifest.read_text())["slides"][2]["title"] == NEW_TITLE

    # Then the retitle too: the first revert is not a conflict; its undo
    # point brings the title back.
    retitled = run("revert", "1", TITLE, "-w", str(tmp_path), "--json")
    assert retitled.exit_code == 0, retitled.output
    assert json.loads(retitled.stdout)["undoRef"] == "u2"
    assert json.loads(manifest.read_text())["slides"][2]["title"] != NEW_TITLE
    undo = run("restore", "u2", "-w", str(tmp_path), "--yes")
    assert undo.exit_code == 0, undo.output
    assert json.loads(manifest.read_text())["slides"][2]["title"] == NEW_TITLE

    # A hand edit of the manifest: listed, nothing written, exit 1; --force
    # reverts (the mode's revert keeps the hand edit itself).
    deck = json.loads(manifest.read_text())
    deck["title"] = "Edited by hand"
    manifest.write_text(json.dumps(deck, indent=2) + "\n")
    refused = run("revert", "1", TITLE, "-w", str(tmp_path))
    assert refused.exit_code == 1
    assert "manifest.json: edited by hand since the turn" in refused.stderr
    assert json.loads(manifest.read_text()) == deck
    as_json = run("revert", "1", TITLE, "-w", str(tmp_path), "--json")
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["conflicts"] == [
        {"path": "manifest.json", "reason": "edited_by_hand"}]
    forced = run("revert", "1", TITLE, "-w", str(tmp_path), "--force", "--json")
    assert forced.exit_code == 0, forced.output
    assert json.loads(forced.stdout)["reverted"] == ["manifest.json"]
    now = json.loads(manifest.read_text())
    assert now["slides"][2]["title"] != NEW_TITLE and now["title"] == "Edited by hand"


def test_unknown_turns_and_changes_are_one_line_errors(pm, tmp_path: Path) -> None:
    _slide_turn(tmp_path)
    for args in (("show", "9"), ("revert", "1", "slide:nope:moved"), ("show", "x")):
        result = run(*args, "-w", str(tmp_path))
        assert result.exit_code == 2, args
        assert result.stderr.startswith("pneuma: error: ") and result.stderr.count("\n") == 1
