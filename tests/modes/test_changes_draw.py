"""The draw mode describes a turn in elements grouped by type ("3
rectangles added", "1 arrow moved", a text that changed) and reverts one
group in the live drawing, keeping the rest of the turn (issue 28)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pneuma.api import TurnFilesFromMaps
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_changes import all_describers, describe_turn, revert_contents

SEED = Path(__file__).resolve().parents[2] / "plugins" / "draw" / "pneuma_draw" / "seeds" / "welcome.excalidraw"
PATH = "welcome.excalidraw"


@pytest.fixture(scope="module")
def describer():
    return all_describers(get_plugin_manager())["draw"]


def _en(label) -> str:
    return label if isinstance(label, str) else label["en"]


def _dump(data: dict) -> bytes:
    return (json.dumps(data, indent=2) + "\n").encode()


def _box(eid: str, x: int) -> dict:
    return {"id": eid, "type": "rectangle", "x": x, "y": 400, "width": 100, "height": 60,
            "strokeColor": "#1e1e1e", "version": 1, "seed": 1, "isDeleted": False}


def _turn() -> tuple[dict, dict]:
    before = json.loads(SEED.read_text(encoding="utf-8"))
    after = copy.deepcopy(before)
    elements = after["elements"]
    by_id = {e["id"]: e for e in elements}
    by_id["title"]["text"] = by_id["title"]["originalText"] = "How Pneuma works, live"
    by_id["title"]["width"] = 400
    by_id["title"]["version"] += 1  # bookkeeping: not a change of its own
    by_id["subtitle"]["x"] += 40
    by_id["subtitle"]["strokeColor"] = "#ff0000"
    elements.extend(_box(f"box-{i}", 100 * i) for i in range(3))
    gone = next(e for e in elements if e["type"] != "text" and not e.get("containerId"))
    elements.remove(gone)
    return before, after


def test_a_turn_reads_as_element_groups_and_texts(describer) -> None:
    before, after = _turn()
    gone = next(e for e in before["elements"] if e["id"] not in {x["id"] for x in after["elements"]})
    turn = describe_turn(describer, TurnFilesFromMaps({PATH: _dump(before)}, {PATH: _dump(after)}))
    assert turn.source == "mode"
    assert [(_en(c.where), _en(c.what), c.kind) for c in turn.changes] == [
        (PATH, "3 rectangles added", "added"),
        (PATH, f"1 {gone['type']} removed", "removed"),
        (PATH, "1 text moved", "moved"),
        (PATH, "text “How Pneuma works” → “How Pneuma works, live”", "changed"),
        (PATH, "1 text restyled", "changed"),
    ]
    added = turn.changes[0]
    assert added.locate == {"file": PATH, "elementIds": ["box-0", "box-1", "box-2"]}
    assert turn.changes[0].what["zh-CN"] == "新增 3 个矩形"


def test_reverting_one_group_keeps_the_rest_of_the_turn(describer) -> None:
    before, after = _turn()
    files = TurnFilesFromMaps({PATH: _dump(before)}, {PATH: _dump(after)})
    turn = describe_turn(describer, files)
    by_what = {_en(c.what): c for c in turn.changes}
    live = {PATH: _dump(after)}

    undone = json.loads(revert_contents(turn, files, by_what["1 text moved"], live)[PATH])
    subtitle = next(e for e in undone["elements"] if e["id"] == "subtitle")
    assert subtitle["x"] == next(e for e in before["elements"] if e["id"] == "subtitle")["x"]
    assert subtitle["strokeColor"] == "#ff0000"  # the restyle stays

    undone = json.loads(revert_contents(turn, files, by_what["3 rectangles added"], live)[PATH])
    ids = [e["id"] for e in undone["elements"]]
    assert not any(i.startswith("box-") for i in ids)
    assert next(e for e in undone["elements"] if e["id"] == "title")["text"] == "How Pneuma works, live"

    removed = next(c for c in turn.changes if c.kind == "removed")
    undone = json.loads(revert_contents(turn, files, removed, live)[PATH])
    old_ids = [e["id"] for e in before["elements"]]
    restored = [e["id"] for e in undone["elements"] if e["id"] in old_ids]
    assert restored == old_ids  # back in its place in the stacking order
    assert sum(e["id"].startswith("box-") for e in undone["elements"]) == 3


def test_a_drawing_that_does_not_parse_is_a_file_change_and_new_drawings_are_one_change(describer) -> None:
    files = TurnFilesFromMaps({"a.excalidraw": SEED.read_bytes()},
                              {"a.excalidraw": b'{"elements": [', "b.excalidraw": SEED.read_bytes()})
    turn = describe_turn(describer, files)
    assert [(c.id, _en(c.what)) for c in turn.changes] == [("draw:b.excalidraw", "drawing added"),
                                                            ("file:a.excalidraw", "changed")]


def test_only_excalidraws_bookkeeping_or_the_canvas_changed(describer) -> None:
    before = json.loads(SEED.read_text(encoding="utf-8"))
    bumped = copy.deepcopy(before)
    for element in bumped["elements"]:
        element["version"] += 1
    canvas = copy.deepcopy(before)
    canvas.setdefault("appState", {})["viewBackgroundColor"] = "#fffbe6"
    turn = describe_turn(describer, TurnFilesFromMaps({"a.excalidraw": _dump(before), "b.excalidraw": _dump(before)},
                                                      {"a.excalidraw": _dump(bumped), "b.excalidraw": _dump(canvas)}))
    assert [(_en(c.where), _en(c.what)) for c in turn.changes] == [("a.excalidraw", "changed"),
                                                                   ("b.excalidraw", "canvas settings changed")]
