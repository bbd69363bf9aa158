"""The doc mode's check: broken relative links and missing images in the
Markdown files a turn changed, with their line and heading."""

from __future__ import annotations

from pathlib import Path

from pneuma.api import CheckRequest
from pneuma_doc.checks import CHECKS, broken_links

DOC = """# Guide

See [setup](setup.md#install), [the API](<api reference.md>) and [web](https://example.com).
![diagram](img/flow.png "Flow")

## Details

A [gone page](../outside.md) and [missing](notes/missing.md?x=1).
Jump [up](#guide), mail [me](mailto:a@b.c), root [readme](/README.md).
<img src="img/logo.svg"> and `[not a link](nowhere.md)`

```
[also not](nowhere.md)
```

[ref]: docs/ref.md
"""


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "index.md").write_text(DOC, encoding="utf-8")
    (tmp_path / "guide" / "setup.md").write_text("# Setup\n", encoding="utf-8")
    (tmp_path / "guide" / "img").mkdir()
    (tmp_path / "guide" / "img" / "logo.svg").write_text("<svg/>", encoding="utf-8")
    (tmp_path / "README.md").write_text("# R\n", encoding="utf-8")
    (tmp_path / "outside.md").write_text("# O\n", encoding="utf-8")
    return tmp_path


def test_each_broken_target_is_named_with_its_line_and_heading(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    problems = broken_links(CheckRequest(workspace=workspace, changed=("guide/index.md", "guide/setup.md")))
    found = [(p.file, p.line, p.message.split(" does not")[0], (p.locate or {}).get("heading"))
             for p in problems]
    assert found == [
        ("guide/index.md", 3, "link target api reference.md", "Guide"),
        ("guide/index.md", 4, "image target img/flow.png", "Guide"),
        ("guide/index.md", 8, "link target notes/missing.md?x=1", "Details"),
        ("guide/index.md", 16, "link target docs/ref.md", "Details"),
    ]
    assert all(p.severity == "error" for p in problems)


def test_unchanged_files_and_fixed_links_pass(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    assert broken_links(CheckRequest(workspace=workspace, changed=("guide/setup.md",))) == []
    (workspace / "guide" / "api reference.md").write_text("# API\n", encoding="utf-8")
    (workspace / "guide" / "img" / "flow.png").write_bytes(b"png")
    (workspace / "guide" / "notes").mkdir()
    (workspace / "guide" / "notes" / "missing.md").write_text("x", encoding="utf-8")
    (workspace / "guide" / "docs").mkdir()
    (workspace / "guide" / "docs" / "ref.md").write_text("x", encoding="utf-8")
    assert broken_links(CheckRequest(workspace=workspace, changed=("guide/index.md",))) == []
    assert [c.name for c in CHECKS] == ["links"]
