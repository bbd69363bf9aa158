"""The whole board checked as the page would draw it: the board file
(board.py), every data file a tile reads (data.py), every chart's spec
against the pinned Vega-Lite schema and its fields against its data file
(specs.py), a table's columns and a number's field. What ``validate_board``
answers and what the check after every turn reports."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from pneuma.api import Sandbox, ToolError
from pneuma_dashboard.board import BOARD_FILE, Board, BoardProblem, Tile, read_board
from pneuma_dashboard.data import DataTable, load_data
from pneuma_dashboard.json_spans import Node, line_of, node_at, parse_spans
from pneuma_dashboard.specs import SchemaUnavailable, missing_fields, schema_errors

_NUMERIC = ("integer", "number")
# d3-format's specifier: [[fill]align][sign][symbol][0][width][,][.precision][~][type]
_D3_FORMAT = re.compile(r"^(?:.?[<>=^])?[-+( ]?[$#]?0?\d*,?(?:\.\d+)?~?[bcdefgnoprsxX%]?$")


@dataclass
class BoardReport:
    """The board as read and every problem found, in file order."""

    board: Board
    problems: list[BoardProblem] = field(default_factory=list)
    tables: dict[str, DataTable] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)

    def as_dict(self) -> dict[str, Any]:
        tiles = [{"id": t.id, "type": t.type, "title": t.title, "data": t.data,
                  "rows": len(self.tables[t.data].rows) if t.data in self.tables else None,
                  "valid": not any(p.tile == t.id and p.severity == "error" for p in self.problems)}
                 for t in self.board.tiles]
        return {"valid": self.valid, "tiles": tiles, "problems": [p.as_dict() for p in self.problems]}


def validate_board(sandbox: Sandbox) -> BoardReport:
    """Every problem of the workspace's board. A missing board file is one
    problem, not an exception."""
    try:
        data, _info = sandbox.read_bytes(BOARD_FILE, 4 * 1024 * 1024)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return BoardReport(Board(), [BoardProblem("", f"{BOARD_FILE} is missing: the board is described there")])
    text = data.decode("utf-8", errors="replace")
    board = read_board(text)
    report = BoardReport(board, list(board.problems))
    failed: dict[str, str] = {}
    for path in dict.fromkeys(t.data for t in board.tiles if t.data):
        try:
            report.tables[path] = load_data(sandbox, path)
        except ToolError as exc:
            failed[path] = str(exc)
    schema_missing = ""
    for tile in board.tiles:
        where = f"tiles[{tile.index}]"
        if tile.data in failed:
            report.problems.append(BoardProblem(f"{where}.data", failed[tile.data], tile.id, tile.line))
        table = report.tables.get(tile.data or "")
        if tile.type == "chart" and tile.spec is not None:
            try:
                report.problems.extend(_spec_problems(tile, table))
            except SchemaUnavailable as exc:
                schema_missing = str(exc)
        elif table is not None:
            report.problems.extend(_field_problems(tile, table))
    try:
        root = parse_spans(text)
        report.problems = [_at_its_line(p, root, text) for p in report.problems]
    except (ValueError, RecursionError):
        pass  # not JSON: the board's own problem says where
    if schema_missing:
        report.problems.append(BoardProblem("", f"chart specs were not checked against the Vega-Lite schema: {schema_missing}",
                                            severity="warning"))
    return report


def _at_its_line(problem: BoardProblem, root: Node, text: str) -> BoardProblem:
    """The problem with the line of the value its path names (a spec's
    misspelt channel, not the tile's first line)."""
    if not problem.path or not problem.tile:
        return problem
    node = node_at(root, problem.path)
    return replace(problem, line=line_of(text, node.start)) if node is not None else problem


def _spec_problems(tile: Tile, table: DataTable | None) -> list[BoardProblem]:
    assert tile.spec is not None
    where = f"tiles[{tile.index}].spec"
    problems = [BoardProblem(f"{where}{path}", message, tile.id, tile.line)
                for path, message in schema_errors(tile.spec)]
    if table is not None:
        problems.extend(BoardProblem(f"{where}{path}", _not_a_field(name, table), tile.id, tile.line)
                        for path, name in missing_fields(tile.spec, table.field_names))
    return problems


def _field_problems(tile: Tile, table: DataTable) -> list[BoardProblem]:
    where = f"tiles[{tile.index}]"
    problems: list[BoardProblem] = []
    if tile.type == "table":
        problems.extend(BoardProblem(f"{where}.columns", _not_a_field(name, table), tile.id, tile.line)
                        for name in tile.columns or () if name not in table.field_names)
    if tile.type == "number" and tile.format is not None and not _D3_FORMAT.match(tile.format):
        problems.append(BoardProblem(f"{where}.format", f"\"{tile.format}\" is not a d3-format string "
                                     "(e.g. \",d\", \"$,.0f\", \".1%\")", tile.id, tile.line))
    if tile.type == "number" and tile.field is not None:
        types = {f.name: f.type for f in table.fields}
        if tile.field not in types:
            problems.append(BoardProblem(f"{where}.field", _not_a_field(tile.field, table), tile.id, tile.line))
        elif tile.aggregate in ("sum", "mean") and types[tile.field] not in _NUMERIC:
            problems.append(BoardProblem(f"{where}.aggregate", f"the {tile.aggregate} of \"{tile.field}\" "
                                         f"({types[tile.field]} values in {table.path}) is not a number",
                                         tile.id, tile.line))
    return problems


def _not_a_field(name: str, table: DataTable) -> str:
    fields = ", ".join(table.field_names[:20]) + (", …" if len(table.field_names) > 20 else "")
    return f"\"{name}\" is not a field of {table.path} (its fields: {fields})"
