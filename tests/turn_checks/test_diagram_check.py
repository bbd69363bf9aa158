"""The diagram mode's check: every changed ``.mmd`` parses with the
viewer's own mermaid (in headless Chromium), an error named by file and
line in the file (after front matter)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pneuma.api import CheckRequest
from pneuma_diagram.checks import diagrams_parse
from pneuma_diagram.render import MERMAID_BUNDLE

pytestmark = pytest.mark.skipif(not MERMAID_BUNDLE.is_file(), reason="scripts/build-web has not run")

BROKEN = """---
title: Flow
---
flowchart TD
  A --> B
  B --> (C
"""


def test_a_syntax_error_is_named_by_file_and_line_and_good_diagrams_pass(tmp_path: Path) -> None:
    (tmp_path / "flow.mmd").write_text(BROKEN, encoding="utf-8")
    (tmp_path / "ok.mmd").write_text("flowchart LR\n  a --> b\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("# not a diagram\n", encoding="utf-8")
    problems = diagrams_parse(CheckRequest(workspace=tmp_path, changed=("flow.mmd", "notes.md", "ok.mmd")))
    assert [(p.file, p.line, p.severity) for p in problems] == [("flow.mmd", 6, "error")]
    assert problems[0].message.startswith("Parse error on line 6:")
    assert "got 'PS'" in problems[0].message
    assert problems[0].locate == {"file": "flow.mmd"}
    assert diagrams_parse(CheckRequest(workspace=tmp_path, changed=("ok.mmd",))) == []
