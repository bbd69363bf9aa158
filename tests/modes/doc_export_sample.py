"""A doc workspace holding what the viewer and the export must render alike
(issue 25, item 12): a contents list of #anchors, a link to a heading of
another document, a task list, a bare https address, a fenced code block
and an image. Shared by tests/modes/ and tests/browser/."""

from __future__ import annotations

from pathlib import Path

README = """# Handbook

## Contents

- [Setup](#setup)
- [Usage notes](#usage-notes)
- [Deep dive](guide/other.md#deep-section)

## Setup

- [x] install the tools
- [ ] configure them

Read https://example.com/docs for more.

```python
def greet(name):
    return f"hi {name}"
```

## Usage notes

A picture: ![a square](images/square.svg)
"""

OTHER = """# Other guide

## Deep section

Back to [the setup](../README.md#setup).
"""

SQUARE = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40">'
          '<rect width="40" height="40" fill="#0969da"/></svg>')

EXTERNAL_ADDRESS = "https://example.com/docs"
# Every in-page target the documents' own links name, as the export spells it.
DOCUMENT_LINKS = {"doc-readme--setup", "doc-readme--usage-notes", "doc-guide-other--deep-section"}


def write_sample(workspace: Path) -> Path:
    (workspace / "guide").mkdir(parents=True, exist_ok=True)
    (workspace / "images").mkdir(exist_ok=True)
    (workspace / "README.md").write_text(README, encoding="utf-8")
    (workspace / "guide" / "other.md").write_text(OTHER, encoding="utf-8")
    (workspace / "images" / "square.svg").write_text(SQUARE, encoding="utf-8")
    return workspace
