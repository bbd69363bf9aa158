"""A diagram's syntax error names the line of the file, everywhere (issue 25,
item 10).

mermaid counts lines after cutting front matter, ``%%{init}%%`` directives,
``%%`` comment lines and the blank lines at the top, so its own number is
not the file's. pneuma_diagram/source_lines.py maps it back (and the viewer
runs the same rules in static/source-lines.js): these tests hold the
Python and the JavaScript to what the real mermaid bundle says on the same
files, and check that validate_diagram, render_diagram and the export name
the same file line. The viewer's side is
tests/browser/test_diagram_error_lines_viewer.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pneuma.testing import call_tool, make_workspace
from pneuma_diagram.render import run_mermaid
from pneuma_diagram.source_lines import file_line, in_file_lines, type_line
from tests.modes.diagram_error_files import (
    CASES,
    FENCED,
    FENCED_LINE,
    MISSPELLED,
    MISSPELLED_LINE,
)

PLUGIN = Path(__file__).resolve().parents[2] / "plugins" / "diagram" / "pneuma_diagram"
BUNDLE = PLUGIN / "static" / "vendor" / "mermaid.iife.js"
SOURCE_LINES_JS = PLUGIN / "static" / "source-lines.js"
PNEUMA = shutil.which("pneuma", path=str(Path(sys.executable).parent))

needs_mermaid = pytest.mark.skipif(
    not BUNDLE.exists() or not Path("/usr/bin/chromium").exists(),
    reason="needs the mermaid bundle (scripts/build-web) and Debian's chromium",
)


def js_lines(queries: list[dict[str, object]]) -> list[dict[str, object]]:
    """The viewer's module (static/source-lines.js) run by Node on ``queries``
    ({text, message, line} each): what it makes of each error."""
    script = ("const m = await import(process.argv[1]);"
              "const qs = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(qs.map((q) => m.inFileLines(q.text, q))));")
    done = subprocess.run(["node", "--input-type=commonjs", "-e", f"(async () => {{ {script} }})()",
                           SOURCE_LINES_JS.as_uri()], input=json.dumps(queries),
                          capture_output=True, text=True, timeout=30, check=True)
    return json.loads(done.stdout)


@needs_mermaid
def test_every_line_mermaid_names_is_mapped_to_the_file_line_by_python_and_by_the_viewer() -> None:
    texts = [text for text, _line in CASES.values()] + [MISSPELLED]
    outcomes = run_mermaid(texts, render=False)
    said = [o.error for o in outcomes]
    assert all(error is not None for error in said), outcomes
    python = [in_file_lines(text, error) for text, error in zip(texts, said, strict=True) if error]
    viewer = js_lines([{"text": text, "message": e.message, "line": e.line}
                       for text, e in zip(texts, said, strict=True) if e])
    for (name, (_text, line)), py, js in zip(CASES.items(), python, viewer, strict=False):
        assert py.line == line, (name, py)
        assert js["line"] == line, (name, js)
        assert js["message"] == py.message, name
        if f"on line {line}" not in py.message and "error on line" in py.message.lower():
            raise AssertionError(f"{name}: the message names another line: {py.message}")
    # a misspelled type: no number from mermaid, the file's type line from both
    assert python[-1].line == viewer[-1]["line"] == MISSPELLED_LINE


def test_the_type_line_and_lines_past_the_end() -> None:
    assert type_line("%% only a comment\n\n") is None
    assert type_line(MISSPELLED) == MISSPELLED_LINE
    assert type_line("---\ntitle: t\n---\n%%{init: {}}%%\n\n%% c\n   flowchar TD\n") == 7
    assert file_line("flowchart TD\n  A --> B\n", 9) == 2
    assert file_line(FENCED, None) is None
    assert js_lines([{"text": "%% only\n\n", "message": "No diagram type detected matching", "line": None},
                     {"text": "flowchart TD\n  A --> B\n", "message": "x", "line": 9}]) == [
        {"text": "%% only\n\n", "message": "No diagram type detected matching", "line": None},
        {"text": "flowchart TD\n  A --> B\n", "message": "x", "line": 2}]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = make_workspace("diagram", tmp_path / "ws")
    for seed in ws.glob("*.mmd"):  # only the files under test: fewer mermaid runs
        seed.unlink()
    return ws


@needs_mermaid
def test_validate_and_render_name_the_file_line(workspace: Path) -> None:
    (workspace / "fenced.mmd").write_text(FENCED, encoding="utf-8")
    (workspace / "misspelled.mmd").write_text(MISSPELLED, encoding="utf-8")
    answer = call_tool("diagram", workspace, "validate_diagram", {})
    errors = {d["file"]: d["errors"][0] for d in answer["diagrams"]}
    assert errors["fenced.mmd"]["line"] == FENCED_LINE
    assert errors["fenced.mmd"]["message"].startswith(f"Parse error on line {FENCED_LINE}:")
    assert errors["misspelled.mmd"]["line"] == MISSPELLED_LINE
    error = call_tool("diagram", workspace, "render_diagram", {"file": "fenced.mmd"})["error"]
    assert error["code"] == "E_PARSE_FAIL" and error["details"]["line"] == FENCED_LINE
    assert error["message"].startswith(f"fenced.mmd line {FENCED_LINE}: Parse error on line {FENCED_LINE}:")


@needs_mermaid
def test_the_export_error_names_the_file_line(workspace: Path, tmp_path: Path) -> None:
    assert PNEUMA
    (workspace / "fenced.mmd").write_text(FENCED, encoding="utf-8")
    done = subprocess.run([PNEUMA, "export", "--mode", "diagram", "-w", str(workspace), "--format", "svg",
                           "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode != 0
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"pneuma: error: fenced.mmd line {FENCED_LINE}: Parse error on line {FENCED_LINE}: "), line
    (workspace / "fenced.mmd").unlink()
    (workspace / "misspelled.mmd").write_text(MISSPELLED, encoding="utf-8")
    done = subprocess.run([PNEUMA, "export", "--mode", "diagram", "-w", str(workspace), "--format", "svg",
                           "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=180, check=False)
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"pneuma: error: misspelled.mmd line {MISSPELLED_LINE}: No diagram type detected"), line
