"""The print mode describes a turn in pages: page N's text changed, a page
added, removed or moved, the paper changed, the stylesheet changed, each
with a locate the viewer's navigate-to takes; and reverts one change that
shares print.json while keeping the others."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pneuma.api import Change, ChangeDescriber, TurnFilesFromMaps
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_changes import (
    DescribedTurn,
    all_describers,
    describe_turn,
    revert_contents,
)

SEEDS = Path(__file__).resolve().parents[2] / "plugins" / "print" / "pneuma_print" / "seeds"


def seed() -> dict[str, bytes]:
    files = {p.relative_to(SEEDS).as_posix(): p.read_bytes() for p in SEEDS.rglob("*") if p.is_file()}
    data = json.loads(files["print.json"].decode().replace("{{paper}}", "A4").replace("{{orientation}}",
                                                                                        "portrait"))
    return with_print_json(files, data)


def print_json(files: dict[str, bytes]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(files["print.json"])
    return data


def with_print_json(files: dict[str, bytes], data: dict[str, Any]) -> dict[str, bytes]:
    return {**files, "print.json": json.dumps(data, indent=2, ensure_ascii=False).encode()}


@pytest.fixture(scope="module")
def describer() -> ChangeDescriber:
    return all_describers(get_plugin_manager())["print"]


def en(label: Any) -> str:
    return label if isinstance(label, str) else str(label["en"])


def lines(turn: DescribedTurn) -> list[str]:
    return [f"{en(c.where)}: {en(c.what)}" for c in turn.changes]


def by_where(turn: DescribedTurn, where: str) -> list[Change]:
    return [c for c in turn.changes if en(c.where) == where]


def test_a_text_edit_an_added_page_and_the_stylesheet(describer: ChangeDescriber) -> None:
    before = seed()
    after = dict(before)
    after["pages/02-the-year.html"] = before["pages/02-the-year.html"].replace(b"<h1", b"<p>A new line.</p><h1", 1)
    after["style.css"] = before["style.css"] + b"\nh1 { color: teal; }\n"
    data = print_json(before)
    data["pages"].append({"file": "pages/04-thanks.html", "title": "Thanks"})
    after = with_print_json(after, data)
    after["pages/04-thanks.html"] = b"<h1>Thank you</h1>"
    turn = describe_turn(describer, TurnFilesFromMaps(before, after))
    assert turn.source == "mode"
    assert lines(turn) == ["Stylesheet: changed", "Page 2: text and layout changed", "Page 4: added"]
    assert by_where(turn, "Page 2")[0].locate == {"page": 2, "file": "pages/02-the-year.html"}
    assert by_where(turn, "Page 4")[0].files == ("print.json", "pages/04-thanks.html")
    assert turn.changes[1].what == {"en": "text and layout changed", "zh-CN": "文字和版式已修改"}


def test_a_move_and_a_paper_change_and_reverting_only_the_move(describer: ChangeDescriber) -> None:
    before = seed()
    data = print_json(before)
    data["pages"].insert(0, data["pages"].pop(2))  # the letter first
    data["pages"][1]["title"] = "The cover"
    data["paper"] = "Letter"
    after = with_print_json(before, data)
    files = TurnFilesFromMaps(before, after)
    turn = describe_turn(describer, files)
    assert lines(turn) == ["Paper: changed A4 → Letter", "Page 1: moved from 3 to 1", "Page 2: title changed to “The cover”"]
    move = by_where(turn, "Page 1")[0]
    assert move.kind == "moved" and move.locate == {"page": 1, "file": "pages/03-neighbours.html"}

    reverted = revert_contents(turn, files, move, {"print.json": after["print.json"]})
    back = json.loads(reverted["print.json"] or b"")
    assert [p["file"] for p in back["pages"]] == [p["file"] for p in print_json(before)["pages"]]
    assert back["paper"] == "Letter" and back["pages"][0]["title"] == "The cover"  # the others kept


def test_a_removed_page_and_a_broken_print_json(describer: ChangeDescriber) -> None:
    before = seed()
    data = print_json(before)
    del data["pages"][1]
    after = with_print_json(before, data)
    del after["pages/02-the-year.html"]
    turn = describe_turn(describer, TurnFilesFromMaps(before, after))
    assert lines(turn) == ["Page 2: removed"]
    assert turn.changes[0].files == ("print.json", "pages/02-the-year.html")

    # a turn that edits one page's words only, print.json untouched
    edited = {**before, "pages/03-neighbours.html": before["pages/03-neighbours.html"].replace(
        "致邻居们".encode(), "致各位邻居".encode(), 1)}
    turn = describe_turn(describer, TurnFilesFromMaps(before, edited))
    assert lines(turn) == ["Page 3: text changed"]
    assert turn.changes[0].locate == {"page": 3, "file": "pages/03-neighbours.html"}

    broken = {**before, "print.json": b'{"pages": ['}
    turn = describe_turn(describer, TurnFilesFromMaps(before, broken))
    assert [c.files for c in turn.changes] == [("print.json",)]  # said per file, not a crash
