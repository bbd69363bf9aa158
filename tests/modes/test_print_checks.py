"""The print mode's check after every turn: each page fits its content box,
measured in headless Chromium on the sheets the export prints; a page listed
in print.json without a file and a print.json that cannot be read fail too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pneuma.api import CheckRequest, Problem
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_checks import checks_for
from pneuma.testing import make_workspace


def run_check(workspace: Path, changed: list[str]) -> list[Problem]:
    checks = checks_for(get_plugin_manager(), "print")
    assert [c.name for c in checks] == ["fit"]
    return list(checks[0].run(CheckRequest(workspace=workspace, changed=tuple(changed), mode="print")))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace("print", tmp_path / "report", {"paper": "A4", "orientation": "portrait"})


def test_a_page_made_too_long_fails_naming_the_page_and_by_how_much(workspace: Path) -> None:
    page = workspace / "pages" / "02-the-year.html"
    # 60 mm more than the whole content box (297 − 20 − 22 = 255 mm high).
    page.write_text(page.read_text() + '<div style="height:315mm">more</div>')
    problems = run_check(workspace, ["pages/02-the-year.html"])
    assert len(problems) == 1, problems
    problem = problems[0]
    assert (problem.file, problem.severity, problem.locate) == (
        "pages/02-the-year.html", "error", {"page": 2, "file": "pages/02-the-year.html"})
    assert problem.message.startswith("page 2 (pages/02-the-year.html) overflows its content box by ")
    overflow_mm = float(problem.message.split(" by ", 1)[1].split(" mm", 1)[0])
    assert overflow_mm > 60  # the page's own content comes above the 315 mm block
    assert "the box is 174 × 255 mm on A4" in problem.message
    # a turn that changed another page only does not report page 2
    assert run_check(workspace, ["pages/03-neighbours.html"]) == []


def test_the_seed_fits_and_a_missing_page_file_and_a_broken_print_json_fail(workspace: Path) -> None:
    # Every page is measured (print.json and style.css changed): the seed's
    # three fit, and the one listed without a file is the only problem.
    data = json.loads((workspace / "print.json").read_text())
    data["pages"].append({"file": "pages/04-gone.html", "title": "Gone"})
    (workspace / "print.json").write_text(json.dumps(data, indent=2))
    problems = run_check(workspace, ["print.json", "style.css"])
    assert [(p.message, p.file, p.locate) for p in problems] == [
        ("page 4 (pages/04-gone.html) is listed in print.json but the file does not exist", "print.json",
         {"page": 4, "file": "pages/04-gone.html"})]

    (workspace / "print.json").write_text('{\n  "paper": "A4",\n  "pages": [\n')
    problems = run_check(workspace, ["print.json"])
    assert len(problems) == 1
    assert (problems[0].file, problems[0].line) == ("print.json", 4)
    assert problems[0].message.startswith("print.json is not valid JSON")


def test_a_picture_saved_under_a_pages_name_fails_the_check_and_warns_the_export(workspace: Path) -> None:
    (workspace / "pages" / "photo.html").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    data = json.loads((workspace / "print.json").read_text())
    data["pages"].append({"file": "pages/photo.html", "title": "Photo"})
    (workspace / "print.json").write_text(json.dumps(data, indent=2))
    problems = run_check(workspace, ["pages/photo.html"])
    assert [(p.message, p.file, p.locate) for p in problems] == [
        ("page 4 (pages/photo.html) is not a text file: write the page as HTML", "pages/photo.html",
         {"page": 4, "file": "pages/photo.html"})]
    from pneuma_print.render import render_document
    rendered = render_document(workspace)
    assert "pages/photo.html is not a text file (a page is written as HTML): its sheet is blank" in rendered.warnings()
    assert "\ufffd" not in rendered.html  # no sheet of mojibake in the export
