"""The print mode as a package: listed, seeded on the paper asked for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PNEUMA = [sys.executable, "-m", "pneuma"]


def _init(workspace: Path, *params: str) -> dict[str, object]:
    args = [a for p in params for a in ("--param", p)]
    subprocess.run([*PNEUMA, "init", "--mode", "print", "-w", str(workspace), "--no-prompt", *args],
                   check=True, capture_output=True, timeout=60)
    data: dict[str, object] = json.loads((workspace / "print.json").read_text("utf-8"))
    return data


def test_print_is_listed_among_the_modes() -> None:
    out = subprocess.run([*PNEUMA, "modes"], check=True, capture_output=True, text=True, timeout=60).stdout
    line = next(line for line in out.splitlines() if line.startswith("print "))
    assert "pneuma-print" in line and "manifest" in line


def test_a_fresh_folder_gets_an_a4_portrait_document_with_every_page(tmp_path: Path) -> None:
    doc = _init(tmp_path / "w")
    assert (doc["paper"], doc["orientation"]) == ("A4", "portrait")
    pages = doc["pages"]
    assert isinstance(pages, list) and len(pages) == 3
    for page in pages:
        text = (tmp_path / "w" / page["file"]).read_text("utf-8")
        assert "<html" not in text and text.strip()
    assert "河畔共享花园" in (tmp_path / "w" / pages[2]["file"]).read_text("utf-8")


def test_paper_and_orientation_params_are_written_into_print_json(tmp_path: Path) -> None:
    from pneuma.testing import call_tool

    doc = _init(tmp_path / "w", "paper=A5", "orientation=landscape")
    assert (doc["paper"], doc["orientation"]) == ("A5", "landscape")
    # The seed's stylesheet adapts to the paper: on the smallest sheet every page still fits.
    report = call_tool("print", tmp_path / "w", "page_report", {})
    assert report["paper"]["label"] == "A5 landscape" and report["overflowing"] == [], report["pages"]


def test_page_report_lays_the_seed_out_and_finds_a_page_made_too_long(tmp_path: Path) -> None:
    from pneuma.testing import call_tool, make_workspace

    workspace = make_workspace("print", tmp_path / "ws")
    page = workspace / "pages" / "02-the-year.html"
    page.write_text(page.read_text("utf-8") + "<p>One line too many for the page.</p>\n" * 40, encoding="utf-8")
    # One Chromium for the whole report: pages named by number and by file.
    report = call_tool("print", workspace, "page_report", {"pages": [2, "pages/03-neighbours.html"]})
    assert report["paper"]["label"] == "A4" and report["content_box_mm"] == {"width": 174.0, "height": 255.0}
    assert [p["page"] for p in report["pages"]] == [2, 3] and report["overflowing"] == [2]
    second, third = report["pages"]
    assert second["overflow_mm"]["bottom"] > 50 and second["fill_percent"] > 120 and second["number"] == 2
    assert {"level": 1, "text": "The year in numbers"} in second["headings"]
    assert "河畔共享花园" in third["text"] and not third["overflows"] and 20 < third["fill_percent"] < 100
    bad = call_tool("print", workspace, "page_report", {"pages": [7]})
    assert bad["error"]["code"] == "E_BAD_ARGS" and "from 1 to 3" in bad["error"]["message"]
    (workspace / "print.json").write_text('{"paper": "A9", "pages": []}', encoding="utf-8")
    broken = call_tool("print", workspace, "page_report", {})
    assert broken["error"]["code"] == "E_PARSE_FAIL" and "A9" in broken["error"]["message"]


def test_the_installed_skill_and_claude_md_teach_the_paper_actions_and_commands(tmp_path: Path) -> None:
    from pneuma.testing import install_skill, make_workspace

    workspace = make_workspace("print", tmp_path / "ws", {"paper": "A5", "orientation": "landscape"})
    install_skill("print", workspace)
    skill = (workspace / ".claude/skills/pneuma-print/SKILL.md").read_text("utf-8")
    assert "**A5\nlandscape**" in skill and "{{" not in skill
    claude_md = (workspace / "CLAUDE.md").read_text("utf-8")
    for action in ("navigate-to", "describe-view", "get-page", "check-overflow"):
        assert f"| `{action}` |" in claude_md, action
    assert "page_report" in claude_md
    commands = {p.stem for p in (workspace / ".claude/commands").glob("*.md")}
    assert {"new-document", "fit-pages"} <= commands, commands
