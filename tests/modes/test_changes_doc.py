"""The doc mode describes a turn in sections by heading path ("Setup ›
Install: rewritten"), files added or removed as a whole, and reverts one
section while keeping the rest of the turn (issue 28)."""

from __future__ import annotations

import pytest

from pneuma.api import TurnFilesFromMaps
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_changes import all_describers, describe_turn, revert_contents

GUIDE = """# Guide

Intro paragraph.

## Setup

Before you start.

### Install

Run the installer.
Then restart.

```sh
# not a heading: a comment in code
pip install thing
```

## Legacy

Old notes nobody reads.

## Limits

One, two, three.
"""

GUIDE_AFTER = """# Guide

Intro paragraph.

## Setup

Before you start.

### Install

Download the archive from the release page.
Unpack it anywhere you like.

```sh
# unpack it: still not a heading
tar xf thing.tar
```

## Usage

Call it from the shell.

## Constraints

One, two, three.
"""


@pytest.fixture(scope="module")
def describer():
    return all_describers(get_plugin_manager())["doc"]


def _en(label) -> str:
    return label if isinstance(label, str) else label["en"]


def _summary(turn) -> list[tuple[str, str, str]]:
    return [(_en(c.where), _en(c.what), c.kind) for c in turn.changes]


def test_a_turn_reads_as_sections_by_heading_path(describer) -> None:
    before = {"guide.md": GUIDE.encode(), "notes.md": b"just text\n", "old.md": b"# Old\n",
              "img.png": b"\x89PNG"}
    after = {"guide.md": GUIDE_AFTER.encode(), "notes.md": b"just other text\n", "new.md": b"# New\n",
             "img.png": b"\x89PNG2"}
    turn = describe_turn(describer, TurnFilesFromMaps(before, after))
    assert turn.source == "mode"
    assert _summary(turn) == [
        ("guide.md › Setup › Install", "rewritten", "changed"),
        ("guide.md › Legacy", "removed", "removed"),
        ("guide.md › Usage", "added", "added"),
        ("guide.md › Constraints", "renamed from “Limits”", "renamed"),
        ("new.md", "file added", "added"),
        ("notes.md", "changed", "changed"),
        ("old.md", "file removed", "removed"),
        ("img.png", "changed", "changed"),  # not Markdown: the host's per-file change
    ]
    install = turn.changes[0]
    assert install.locate == {"file": "guide.md", "heading": "Install"}
    assert install.files == ("guide.md",)


def test_reverting_one_section_keeps_the_rest_of_the_turn(describer) -> None:
    before, after = {"guide.md": GUIDE.encode()}, {"guide.md": GUIDE_AFTER.encode()}
    files = TurnFilesFromMaps(before, after)
    turn = describe_turn(describer, files)
    by_where = {_en(c.where): c for c in turn.changes}

    install = by_where["guide.md › Setup › Install"]
    text = revert_contents(turn, files, install, {"guide.md": after["guide.md"]})["guide.md"].decode()
    assert "Run the installer." in text and "pip install thing" in text
    assert "## Usage" in text and "## Constraints" in text and "## Legacy" not in text

    legacy = by_where["guide.md › Legacy"]
    text = revert_contents(turn, files, legacy, {"guide.md": after["guide.md"]})["guide.md"].decode()
    assert text.index("## Install") < text.index("## Legacy\n\nOld notes nobody reads.") < text.index("## Usage")
    assert "Download the archive" in text

    usage = by_where["guide.md › Usage"]
    text = revert_contents(turn, files, usage, {"guide.md": after["guide.md"]})["guide.md"].decode()
    assert text == GUIDE_AFTER.replace("## Usage\n\nCall it from the shell.\n\n", "")

    renamed = by_where["guide.md › Constraints"]
    text = revert_contents(turn, files, renamed, {"guide.md": after["guide.md"]})["guide.md"].decode()
    assert text.endswith("## Limits\n\nOne, two, three.\n") and "## Usage" in text

    # The rest of the file changed since the turn: the section cannot be
    # placed safely, so the whole file goes back (the host asks first).
    edited = GUIDE_AFTER.replace("Call it from the shell.", "Call it from anywhere.").encode()
    assert revert_contents(turn, files, install, {"guide.md": edited}) == {"guide.md": GUIDE.encode()}


def test_a_2000_line_document_turn_reads_as_its_two_sections(describer) -> None:
    chapters = [f"## Chapter {i}\n\n" + "".join(f"Line {j} of chapter {i}.\n" for j in range(38)) + "\n"
                for i in range(50)]
    before = "# Book\n\n" + "".join(chapters)
    after = before.replace("Line 7 of chapter 3.", "Line seven.").replace("## Chapter 40\n", "## Part 40\n")
    assert before.count("\n") >= 2000
    files = TurnFilesFromMaps({"book.md": before.encode()}, {"book.md": after.encode()})
    # Its speed is benchmarks/bench_describe.py's.
    turn = describe_turn(describer, files)
    assert _summary(turn) == [("book.md › Chapter 3", "edited", "changed"),
                              ("book.md › Part 40", "renamed from “Chapter 40”", "renamed")]


def test_a_file_that_is_not_utf8_falls_back_to_the_file(describer) -> None:
    turn = describe_turn(describer, TurnFilesFromMaps({"a.md": b"# A\n"}, {"a.md": b"# A\n\xff\xfe"}))
    assert _summary(turn) == [("a.md", "changed", "changed")]
