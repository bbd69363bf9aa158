"""The dashboard's agent tools as the agent calls them: ``validate_board``
(the board file, the data, the Vega-Lite schema, the fields) and
``describe_data``; both on the seed workspace and on broken copies of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pneuma.testing import call_tool, make_workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace("dashboard", tmp_path / "ws")


def _edit_board(workspace: Path, edit) -> None:
    board_file = workspace / "dashboard.json"
    board = json.loads(board_file.read_text(encoding="utf-8"))
    edit(board)
    board_file.write_text(json.dumps(board, indent=2), encoding="utf-8")


def _tile(board: dict, tile_id: str) -> dict:
    return next(t for t in board["tiles"] if t["id"] == tile_id)


def test_the_seed_board_validates_and_its_data_is_described(workspace: Path) -> None:
    answer = call_tool("dashboard", workspace, "validate_board", {})
    assert answer["problems"] == [] and answer["valid"] is True
    chart = next(t for t in answer["tiles"] if t["id"] == "revenue-by-month")
    assert chart["valid"] and chart["rows"] == 288
    described = call_tool("dashboard", workspace, "describe_data", {"file": "data/sales.csv", "rows": 2})
    assert described["rows"] == 288 and len(described["sample"]) == 2
    assert [(f["name"], f["type"]) for f in described["fields"]] == [
        ("month", "date"), ("region", "string"), ("product", "string"), ("units", "integer"), ("revenue", "number")]


def test_a_broken_board_names_each_problem_at_its_path_and_tile(workspace: Path) -> None:
    def edit(board: dict) -> None:
        chart = _tile(board, "revenue-by-month")
        chart["spec"]["mark"] = "lien"
        chart["spec"]["encoding"]["y"]["field"] = "revenu"
        _tile(board, "revenue-by-product")["spec"]["encoding"]["colour"] = {"field": "region"}
        _tile(board, "latest-rows")["columns"].append("discount")
        _tile(board, "total-units")["field"] = "region"
        _tile(board, "total-units")["aggregate"] = "mean"
        _tile(board, "about")["w"] = 6  # now over "total-revenue"
        _tile(board, "total-revenue")["format"] = "$,.0q"
    _edit_board(workspace, edit)
    answer = call_tool("dashboard", workspace, "validate_board", {})
    assert answer["valid"] is False
    said = {(p["tile"], p["message"]) for p in answer["problems"]}
    fields = "its fields: month, region, product, units, revenue"
    assert said == {
        ("total-revenue", "tiles[1]: “Revenue” overlaps “About this board” (tiles[0]) in columns 4-5, rows 0-1; "
                          "move it (x, y) or shrink it (w, h)"),
        ("revenue-by-month", 'tiles[3].spec.mark: "lien" is not one of "arc", "area", "bar", "image", "line", '
                             '"point", "rect", "rule", "text", "tick", "trail", "circle", …'),
        ("revenue-by-month", f'tiles[3].spec.encoding.y.field: "revenu" is not a field of data/sales.csv ({fields})'),
        ("revenue-by-product", "tiles[4].spec.encoding.colour: is not a Vega-Lite property here (a typo?)"),
        ("latest-rows", f'tiles[5].columns: "discount" is not a field of data/sales.csv ({fields})'),
        ("total-units", 'tiles[2].aggregate: the mean of "region" (string values in data/sales.csv) is not a number'),
        ("total-revenue", 'tiles[1].format: "$,.0q" is not a d3-format string (e.g. ",d", "$,.0f", ".1%")'),
    }
    # each at the line of the value its path names
    board_lines = (workspace / "dashboard.json").read_text(encoding="utf-8").splitlines()
    at = {p["message"].split(":")[0]: board_lines[p["line"] - 1].strip() for p in answer["problems"]}
    assert at["tiles[3].spec.encoding.y.field"] == '"field": "revenu",'
    assert at["tiles[4].spec.encoding.colour"] == '"colour": {'
    assert at["tiles[3].spec.mark"] == '"mark": "lien",'
    assert at["tiles[1]"] == "{"


def test_a_tile_whose_data_fails_says_why(workspace: Path) -> None:
    _edit_board(workspace, lambda b: _tile(b, "revenue-by-product").update(data="data/missing.csv"))
    (workspace / "data" / "broken.json").write_text("[{", encoding="utf-8")
    _edit_board(workspace, lambda b: _tile(b, "total-units").update(data="data/broken.json"))
    problems = call_tool("dashboard", workspace, "validate_board", {})["problems"]
    assert [(p["tile"], p["message"]) for p in problems] == [
        ("total-units", "tiles[2].data: data/broken.json is not valid JSON: Expecting property name enclosed in "
                        "double quotes (line 1, column 3)"),
        ("revenue-by-product", "tiles[4].data: data/missing.csv does not exist"),
    ]


def test_describe_data_refuses_paths_outside_and_other_formats(workspace: Path) -> None:
    assert call_tool("dashboard", workspace, "describe_data", {"file": "../x.csv"})["error"]["code"] == "E_DENY_PATH"
    assert call_tool("dashboard", workspace, "describe_data", {"file": "dashboard.md"})["error"]["code"] == (
        "E_UNSUPPORTED")
    (workspace / "dashboard.json").unlink()
    assert call_tool("dashboard", workspace, "validate_board", {})["problems"][0]["message"] == (
        "dashboard.json is missing: the board is described there")


def test_without_the_built_schema_specs_go_unchecked_and_it_says_so(workspace: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from pneuma_dashboard import specs

    monkeypatch.setattr(specs, "SCHEMA_FILE", workspace / "no-schema.json")
    specs._validator.cache_clear()
    try:
        answer = call_tool("dashboard", workspace, "validate_board", {})
    finally:
        specs._validator.cache_clear()
    assert answer["valid"] is True
    assert [(p["severity"], p["message"]) for p in answer["problems"]] == [
        ("warning", "chart specs were not checked against the Vega-Lite schema: "
                    "no-schema.json is missing: run scripts/build-web")]
