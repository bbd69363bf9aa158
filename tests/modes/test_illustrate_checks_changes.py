"""The illustrate mode's after-turn check and its change describer: a turn
made by the real generate_image tool (against the fake images endpoint) is
described in rows and images, one change reverts alone, and a board that no
longer agrees with its images fails the check."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pneuma_illustrate.changes import DESCRIBER
from pneuma_illustrate.checks import CHECKS, png_problem

from pneuma.api import CheckRequest, TurnFilesFromMaps
from pneuma.testing import call_tool, make_workspace
from tests.fakes.fake_images_api import ThreadedFakeImagesAPI, png


@pytest.fixture(scope="module")
def fake() -> Iterator[ThreadedFakeImagesAPI]:
    api = ThreadedFakeImagesAPI()
    yield api
    api.close()


@pytest.fixture
def workspace(tmp_path: Path, fake: ThreadedFakeImagesAPI, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PNEUMA_IMAGES_BASE_URL", fake.base_url)
    monkeypatch.setenv("PNEUMA_IMAGES_MODEL", "fake-image-1")
    return make_workspace("illustrate", tmp_path / "ws")


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".pneuma" not in p.parts}


def check(root: Path, *changed: str) -> list[str]:
    [run] = [c.run for c in CHECKS]
    return [p.message for p in run(CheckRequest(workspace=root, changed=tuple(sorted(changed))))]


def test_a_turn_reads_as_rows_generated_and_images_varied(workspace: Path) -> None:
    before = snapshot(workspace)
    boat = call_tool("illustrate", workspace, "generate_image", {"prompt": "A paper boat", "row": "Boat", "n": 2})
    more = call_tool("illustrate", workspace, "generate_image", {"prompt": "Lighthouse in fog", "row": "lighthouse"})
    varied = call_tool("illustrate", workspace, "vary_image", {"id": "fox-1", "prompt_change": "in winter"})
    again = call_tool("illustrate", workspace, "vary_image", {"id": "fox-2", "same_seed": True})
    after = snapshot(workspace)
    changes = DESCRIBER.describe(TurnFilesFromMaps(before, after))
    said = [(c.where["en"], c.what["en"], dict(c.locate or {})) for c in changes]  # type: ignore[index]
    lighthouse_new, varied_id, again_id = (more["images"][0]["id"], varied["images"][0]["id"],
                                           again["images"][0]["id"])
    assert said == [
        ("Row “Lighthouse at dusk”", "1 image generated", {"row": "lighthouse", "image": lighthouse_new}),
        (f"Image {varied_id}", "varied from fox-1", {"row": "fox", "image": varied_id}),
        (f"Image {again_id}", "regenerated from fox-2", {"row": "fox", "image": again_id}),
        ("Row “Boat”", "row added, 2 images generated", {"row": "boat", "image": boat["images"][0]["id"]}),
    ]
    assert changes[0].what["zh-CN"] == "生成 1 张图"  # type: ignore[index]
    assert check(workspace, *[path for path in after if after[path] != before.get(path)]) == []

    # Reverting the boat row alone takes its files and row out and keeps the rest of the turn.
    boat_change = changes[-1]
    current = {path: after.get(path) for path in boat_change.files}
    reverted = DESCRIBER.revert(TurnFilesFromMaps(before, after), boat_change, current)  # type: ignore[misc]
    assert {path for path, data in reverted.items() if data is None} == {
        f"images/{image['id']}.{suffix}" for image in boat["images"] for suffix in ("png", "json")}
    rows = json.loads(reverted["board.json"] or b"")["rows"]
    assert [row["id"] for row in rows] == ["lighthouse", "fox"]
    assert rows[0]["images"][-1] == lighthouse_new and rows[1]["images"][-2:] == [varied_id, again_id]


def test_row_edits_and_removals_are_named(workspace: Path) -> None:
    before = snapshot(workspace)
    board = json.loads(before["board.json"])
    board["rows"][0]["title"] = "Lighthouse, night"
    board["rows"][0]["images"].remove("lighthouse-3")
    del board["rows"][1]
    after = {**before, "board.json": json.dumps(board).encode()}
    said = [(c.where["en"], c.what["en"], c.kind)  # type: ignore[index]
            for c in DESCRIBER.describe(TurnFilesFromMaps(before, after))]
    assert said == [("Row “Lighthouse, night”", "retitled “Lighthouse, night” · 1 image taken out", "changed"),
                    ("Row “Reading fox”", "row removed", "removed")]


def test_the_check_names_what_disagrees(workspace: Path) -> None:
    assert check(workspace, "board.json") == []
    (workspace / "images/fox-2.png").unlink()
    (workspace / "images/lighthouse-1.json").unlink()
    record = json.loads((workspace / "images/fox-1.json").read_text())
    record.update(parent="gone-0000", api_key="sk-proj-ABCDEFGHIJKLMNOP1234")
    (workspace / "images/fox-1.json").write_text(json.dumps(record))
    (workspace / "images/lighthouse-2.png").write_bytes(png(8, 8, (1, 2, 3))[:-30])
    found = check(workspace, "board.json", "images/fox-1.json", "images/lighthouse-2.png")
    assert any("lists fox-2, which has no image file" in m for m in found)
    assert any("lighthouse-1 has no record" in m for m in found)
    assert any("names parent gone-0000, which does not exist" in m for m in found)
    assert any("shaped like an API key" in m for m in found)
    assert any("images/lighthouse-2.png does not decode" in m for m in found)
    assert all("sk-proj" not in m for m in found)
    # a record whose parent or seed is not what the format says cannot be varied or regenerated
    record = json.loads((workspace / "images/fox-2.json").read_text())
    record.update(parent={"id": "fox-1"}, seed=1e300)
    (workspace / "images/fox-2.json").write_text(json.dumps(record))
    found = [m for m in check(workspace, "images/fox-2.json") if m.startswith("images/fox-2.json")]
    assert found == ['images/fox-2.json: "parent" is {"id": "fox-1"}, not an image id or null',
                     'images/fox-2.json: "seed" is 1e+300, not a whole number or null'], found
    (workspace / "board.json").write_text("{broken")
    assert check(workspace, "board.json")[0].startswith("board.json is not valid JSON")
    assert check(workspace, "notes.md") == []


def test_the_png_reader_without_pillow_sees_a_cut_file() -> None:
    whole = png(16, 4, (10, 20, 30), stripe=1)
    assert png_problem(whole) is None
    assert png_problem(whole[:40]) is not None
    assert png_problem(b"GIF89a") == "it is not a PNG"


def test_marks_made_during_a_turn_are_named_and_undone_one_at_a_time(workspace: Path) -> None:
    before = {**snapshot(workspace), "choices.json": b'{"fox-1": {"status": "picked", "starred": false, "comment": ""}}'}
    marks = {"fox-1": {"status": "rejected", "starred": True, "comment": ""},
             "lighthouse-2": {"status": "picked", "starred": False, "comment": "the one"}}
    after = {**before, "choices.json": json.dumps(marks).encode()}
    turn = TurnFilesFromMaps(before, after)
    changes = DESCRIBER.describe(turn)
    said = [(c.where["en"], c.what["en"], dict(c.locate or {})) for c in changes]  # type: ignore[index]
    assert said == [("Image fox-1", "rejected · starred", {"image": "fox-1", "row": "fox"}),
                    ("Image lighthouse-2", "picked · comment changed", {"image": "lighthouse-2", "row": "lighthouse"})]
    undone = DESCRIBER.revert(turn, changes[0], {"choices.json": after["choices.json"]})  # type: ignore[misc]
    assert json.loads(undone["choices.json"] or b"") == {
        "fox-1": {"status": "picked", "starred": False, "comment": ""}, "lighthouse-2": marks["lighthouse-2"]}
