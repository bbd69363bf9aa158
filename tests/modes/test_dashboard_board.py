"""The dashboard's board file: what the reader says about a broken one,
and the layout edit that changes a tile's four numbers and nothing else."""

from __future__ import annotations

import json

import pytest
from pneuma_dashboard.board import read_board

BOARD = """{
  "title": "Sales",
  "columns": 12,
  "rowHeight": 80,
  "tiles": [
    {"id": "revenue", "type": "chart", "title": "Revenue by month", "x": 0, "y": 0, "w": 8, "h": 4,
     "data": "data/sales.csv",
     "spec": {"mark": "line", "encoding": {"x": {"field": "month", "type": "temporal"}}}},
    {
      "id": "total",
      "type": "number",
      "title": "Total",
      "x": 8, "y": 0, "w": 4, "h": 2,
      "data": "data/sales.csv", "field": "revenue", "aggregate": "sum", "format": ",.0f"
    },
    {"id": "note", "type": "markdown", "title": "Notes", "x": 8, "y": 2, "w": 4, "h": 2, "text": "**Q1** only"}
  ]
}
"""


def _messages(text: str) -> list[str]:
    return [str(p) for p in read_board(text).problems]


def test_a_good_board_reads_with_typed_tiles_and_no_problems() -> None:
    board = read_board(BOARD)
    assert board.problems == ()
    assert [t.id for t in board.tiles] == ["revenue", "total", "note"]
    total = board.tile("total")
    assert total is not None and (total.x, total.y, total.w, total.h) == (8, 0, 4, 2)
    assert total.field == "revenue" and total.format == ",.0f" and total.line == 9
    assert board.rows == 4 and board.columns == 12 and board.row_height == 80


def test_a_tile_wider_than_the_board_names_its_path_and_the_columns() -> None:
    board = json.loads(BOARD)
    board["tiles"][2]["w"] = 14
    board["tiles"][2]["x"] = 0
    board["tiles"][2]["y"] = 9
    assert _messages(json.dumps(board, indent=2)) == ["tiles[2].w: 14 is wider than the 12 columns"]
    board["tiles"][2]["w"] = 6
    board["tiles"][2]["x"] = 8
    assert _messages(json.dumps(board)) == [
        "tiles[2].w: 6 at x 8 ends at column 14, past the board's 12 columns (x + w must be at most 12)"]


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda b: b["tiles"][0].pop("spec"), "tiles[0].spec: missing: a chart tile needs a Vega-Lite spec"),
    (lambda b: b["tiles"][0]["spec"].update(data={"values": []}),
     "tiles[0].spec.data: remove it: the rows of tiles[0].data are the chart's data (the host puts them in)"),
    (lambda b: b["tiles"][1].update(type="gauge"),
     "tiles[1].type: \"gauge\" is not a tile type (one of chart, table, number, markdown)"),
    (lambda b: b["tiles"][1].update(aggregate="median"),
     "tiles[1].aggregate: \"median\" is not an aggregate (one of sum, mean, count, min, max, last)"),
    (lambda b: b["tiles"][1].update(data="data/sales.xlsx"),
     "tiles[1].data: \"data/sales.xlsx\" is not a data file (.csv, .json, .parquet)"),
    (lambda b: b["tiles"][1].update(data="sales.csv"),
     "tiles[1].data: \"sales.csv\" is not under data/: data files live there"),
    (lambda b: b["tiles"][2].update(id="revenue"),
     "tiles[2].id: \"revenue\" is already the id of tiles[0]; ids must be unique"),
    (lambda b: b["tiles"][2].update(h=1.5), "tiles[2].h: 1.5 is not a whole number"),
    (lambda b: b["tiles"][2].pop("y"), "tiles[2].y: missing: a whole number of grid units"),
])
def test_each_mistake_is_named_at_its_json_path(edit, expected) -> None:
    board = json.loads(BOARD)
    edit(board)
    assert expected in _messages(json.dumps(board))


def test_text_that_is_not_json_says_where() -> None:
    problems = read_board(BOARD.replace('"Total",', '"Total"')).problems
    assert len(problems) == 1 and problems[0].line == 13
    assert "not valid JSON" in str(problems[0]) and "line 13" in str(problems[0])


def test_overlapping_tiles_are_a_problem_naming_both_and_the_cells() -> None:
    board = json.loads(BOARD)
    board["tiles"][2]["y"] = 1  # note now covers row 1 of "total"
    board_text = json.dumps(board, indent=2)
    problems = read_board(board_text).problems
    assert [str(p) for p in problems] == [
        "tiles[2]: “Notes” overlaps “Total” (tiles[1]) in columns 8-11, rows 1-1; move it (x, y) or shrink it (w, h)"]
    assert problems[0].tile == "note"
    # tiles that only touch do not overlap
    assert read_board(BOARD).problems == ()
