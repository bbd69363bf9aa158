"""The diagram viewer marks the file's line of a syntax error, the same line
validate_diagram names (issue 25, item 10): mermaid's own number counts
lines after front matter, directives and comments, so the viewer maps it
back (static/source-lines.js) as the tools do (source_lines.py). A
misspelled diagram type marks the type line. Real mermaid in real Chromium;
tests/modes/test_diagram_error_lines.py holds the mapping to every case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from pneuma.testing import call_tool
from tests.browser.browser_helpers import viewer_answer
from tests.modes.diagram_error_files import (
    FENCED,
    FENCED_LINE,
    MISSPELLED,
    MISSPELLED_LINE,
)

VENDOR = Path(__file__).resolve().parents[2] / "plugins" / "diagram" / "pneuma_diagram" / "static" / "vendor"

pytestmark = pytest.mark.skipif(not (VENDOR / "mermaid.iife.js").exists(),
                                reason="the diagram viewer's mermaid bundle is not built (scripts/build-web)")


def shows_error_at(page: Any, server: Any, file: str, line: int, text: str) -> None:
    answer = viewer_answer(server, "navigate-to", {"file": file})
    assert answer["success"], answer
    assert answer["data"]["rendered"] is False and answer["data"]["error"]["line"] == line, answer
    assert f"line {line}" in answer["message"]
    error = page.locator(f".dg-error[data-line='{line}']")
    expect(error.locator("h3")).to_have_text(f"Syntax error at line {line}")
    expect(error.locator(".dg-source li.bad")).to_have_text(text)
    expect(error.locator(".dg-source li.bad")).to_have_attribute("data-line", str(line))


def test_the_viewer_marks_the_same_file_line_as_the_tools(
        pneuma_server: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("diagram", backend="none")
    (server.workspace / "fenced.mmd").write_text(FENCED, encoding="utf-8")
    (server.workspace / "misspelled.mmd").write_text(MISSPELLED, encoding="utf-8")
    page = open_page(server, viewport={"width": 1400, "height": 900})
    page.wait_for_selector(".pneuma-diagram[data-state]", timeout=20_000)

    shows_error_at(page, server, "fenced.mmd", FENCED_LINE, "  B -->> C")
    # the message mermaid wrote says the same line as the heading
    expect(page.locator(".dg-error .dg-message")).to_contain_text(f"Parse error on line {FENCED_LINE}:")
    shot(page, "diagram-error-after-front-matter")
    shows_error_at(page, server, "misspelled.mmd", MISSPELLED_LINE, "flowchar TD")

    tools = call_tool("diagram", server.workspace, "validate_diagram", {"file": "fenced.mmd"})
    assert tools["diagrams"][0]["errors"][0]["line"] == FENCED_LINE
    assert page.console_errors == []
