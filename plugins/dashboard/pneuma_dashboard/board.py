"""The one reader of ``dashboard.json`` (docs/dashboard.md, "The board file").

``read_board(text)`` gives the typed board and every problem with its JSON
path, in words the agent can act on ("tiles[2].w: 14 is wider than the 12
columns"); a tile with a problem is still returned when it can be (so the
rest of the board draws). Layout and title edits made in the page are
written by the page itself (static/board-text.js): one implementation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pneuma_dashboard.json_spans import Node, line_of, parse_spans

BOARD_FILE = "dashboard.json"
TILE_TYPES = ("chart", "table", "number", "markdown")
AGGREGATES = ("sum", "mean", "count", "min", "max", "last")
DATA_SUFFIXES = (".csv", ".json", ".parquet")
DATA_DIR = "data/"
DEFAULT_COLUMNS = 12
DEFAULT_ROW_HEIGHT = 80
DEFAULT_LIMIT = 100
MAX_COLUMNS = 48

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class BoardProblem:
    """One thing wrong in the board file: ``path`` is where in the JSON
    (``tiles[2].w``), ``tile`` the id of the tile it is in (None for the
    board itself), ``line`` the 1-based line it starts on."""

    path: str
    message: str
    tile: str | None = None
    line: int | None = None
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "message": str(self), "tile": self.tile, "line": self.line,
                "severity": self.severity}


@dataclass(frozen=True)
class Tile:
    """One tile as the file describes it (defaults filled in)."""

    id: str
    type: str
    title: str
    x: int
    y: int
    w: int
    h: int
    index: int
    line: int | None = None
    data: str | None = None
    spec: Mapping[str, Any] | None = None
    columns: tuple[str, ...] | None = None
    limit: int = DEFAULT_LIMIT
    field: str | None = None
    aggregate: str = "sum"
    format: str | None = None
    label: str | None = None
    text: str = ""

    @property
    def name(self) -> str:
        """How a person calls the tile: its title, else its id."""
        return self.title or self.id


@dataclass(frozen=True)
class Board:
    title: str = ""
    columns: int = DEFAULT_COLUMNS
    row_height: int = DEFAULT_ROW_HEIGHT
    tiles: tuple[Tile, ...] = ()
    problems: tuple[BoardProblem, ...] = field(default=())

    @property
    def errors(self) -> list[BoardProblem]:
        return [p for p in self.problems if p.severity == "error"]

    def tile(self, tile_id: str) -> Tile | None:
        return next((t for t in self.tiles if t.id == tile_id), None)

    @property
    def rows(self) -> int:
        """How many grid rows the tiles take."""
        return max((t.y + t.h for t in self.tiles), default=0)


def read_board(text: str) -> Board:
    """The board ``text`` describes, with every problem found in it. Text
    that is not JSON is a board with no tiles and one problem at its line."""
    try:
        root = parse_spans(text)
    except json.JSONDecodeError as exc:
        return Board(problems=(BoardProblem("", f"{BOARD_FILE} is not valid JSON: {exc.msg} "
                                                f"(line {exc.lineno}, column {exc.colno})", line=exc.lineno),))
    except RecursionError:
        return Board(problems=(BoardProblem("", f"{BOARD_FILE} is nested too deeply to read"),))
    return _BoardReader(text).read(root)


class _BoardReader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.problems: list[BoardProblem] = []

    def problem(self, path: str, message: str, node: Node | None, tile: str | None = None,
                severity: Severity = "error") -> None:
        line = line_of(self.text, node.start) if node is not None else None
        self.problems.append(BoardProblem(path, message, tile, line, severity))

    def read(self, root: Node) -> Board:
        if not isinstance(root.value, dict):
            self.problem("", f"{BOARD_FILE} must hold one object ({{\"title\", \"columns\", \"tiles\"}})", root)
            return Board(problems=tuple(self.problems))
        title = self.string(root, "title", "title", None) or ""
        columns = self.integer(root, "columns", "columns", None, DEFAULT_COLUMNS, low=1, high=MAX_COLUMNS) or DEFAULT_COLUMNS
        row_height = (self.integer(root, "rowHeight", "rowHeight", None, DEFAULT_ROW_HEIGHT, low=16, high=400)
                      or DEFAULT_ROW_HEIGHT)
        tiles_node = root.members.get("tiles")
        tiles: list[Tile] = []
        if tiles_node is None:
            self.problem("tiles", "missing: the board needs a \"tiles\" array (it may be empty)", root)
        elif not isinstance(tiles_node.value, list):
            self.problem("tiles", "must be an array of tiles", tiles_node)
        else:
            seen: dict[str, int] = {}
            for index, node in enumerate(tiles_node.items):
                tile = self.tile(index, node, columns)
                if tile is None:
                    continue
                if tile.id in seen:
                    self.problem(f"tiles[{index}].id", f"\"{tile.id}\" is already the id of tiles[{seen[tile.id]}]; "
                                 "ids must be unique", node.members.get("id"), tile.id)
                    continue
                seen[tile.id] = index
                tiles.append(tile)
        self.problems.extend(overlaps(tiles))
        return Board(title, columns, row_height, tuple(tiles), tuple(self.problems))

    # --- one tile ---

    def tile(self, index: int, node: Node, columns: int) -> Tile | None:
        path = f"tiles[{index}]"
        if not isinstance(node.value, dict):
            self.problem(path, "must be an object", node)
            return None
        raw_id = node.members.get("id")
        if raw_id is None or not isinstance(raw_id.value, str) or not raw_id.value.strip():
            self.problem(f"{path}.id", "missing: every tile needs a unique string id", raw_id or node)
            return None
        tile_id = raw_id.value
        kind = node.members.get("type")
        if kind is None or kind.value not in TILE_TYPES:
            said = "missing" if kind is None else f"{json.dumps(kind.value)} is not a tile type"
            self.problem(f"{path}.type", f"{said} (one of {', '.join(TILE_TYPES)})", kind or node, tile_id)
            return None
        layout = self.layout(path, node, tile_id, columns)
        common: dict[str, Any] = {
            "id": tile_id, "type": kind.value, "index": index, "line": line_of(self.text, node.start),
            "title": self.string(node, "title", f"{path}.title", tile_id) or "", **layout,
        }
        return Tile(**common, **self.by_type(str(kind.value), path, node, tile_id))

    def layout(self, path: str, node: Node, tile_id: str, columns: int) -> dict[str, int]:
        x = self.integer(node, "x", f"{path}.x", tile_id, None, low=0, high=columns - 1)
        y = self.integer(node, "y", f"{path}.y", tile_id, None, low=0, high=10_000)
        w = self.integer(node, "w", f"{path}.w", tile_id, None, low=1, high=columns)
        h = self.integer(node, "h", f"{path}.h", tile_id, None, low=1, high=1_000)
        if x is not None and w is not None and x + w > columns:
            self.problem(f"{path}.w", f"{w} at x {x} ends at column {x + w}, past the board's {columns} columns "
                         f"(x + w must be at most {columns})", node.members.get("w"), tile_id)
            w = columns - x
        return {"x": x or 0, "y": y or 0, "w": w or 1, "h": h or 1}

    def by_type(self, kind: str, path: str, node: Node, tile_id: str) -> dict[str, Any]:
        if kind == "markdown":
            text = self.string(node, "text", f"{path}.text", tile_id, required=True)
            return {"text": text or ""}
        data = self.data_file(path, node, tile_id)
        if kind == "chart":
            return {"data": data, "spec": self.spec(path, node, tile_id)}
        if kind == "table":
            return {"data": data, "columns": self.fields(path, node, tile_id),
                    "limit": self.integer(node, "limit", f"{path}.limit", tile_id, DEFAULT_LIMIT, low=1,
                                          high=100_000)}
        aggregate = self.string(node, "aggregate", f"{path}.aggregate", tile_id) or "sum"
        if aggregate not in AGGREGATES:
            self.problem(f"{path}.aggregate", f"\"{aggregate}\" is not an aggregate (one of {', '.join(AGGREGATES)})",
                         node.members.get("aggregate"), tile_id)
            aggregate = "sum"
        number_field = self.string(node, "field", f"{path}.field", tile_id, required=aggregate != "count")
        return {"data": data, "field": number_field, "aggregate": aggregate,
                "format": self.string(node, "format", f"{path}.format", tile_id),
                "label": self.string(node, "label", f"{path}.label", tile_id)}

    def data_file(self, path: str, node: Node, tile_id: str) -> str | None:
        data = self.string(node, "data", f"{path}.data", tile_id, required=True)
        if data is None:
            return None
        if not data.lower().endswith(DATA_SUFFIXES):
            self.problem(f"{path}.data", f"\"{data}\" is not a data file ({', '.join(DATA_SUFFIXES)})",
                         node.members.get("data"), tile_id)
        elif not data.startswith(DATA_DIR):
            # the viewer reads data files from data/ only (docs/dashboard.md, "Workspace")
            self.problem(f"{path}.data", f"\"{data}\" is not under {DATA_DIR}: data files live there",
                         node.members.get("data"), tile_id)
        return data

    def spec(self, path: str, node: Node, tile_id: str) -> Mapping[str, Any] | None:
        spec = node.members.get("spec")
        if spec is None or not isinstance(spec.value, dict):
            said = "missing" if spec is None else "must be an object"
            self.problem(f"{path}.spec", f"{said}: a chart tile needs a Vega-Lite spec", spec or node, tile_id)
            return None
        if "data" in spec.value:
            self.problem(f"{path}.spec.data", f"remove it: the rows of {path}.data are the chart's data "
                         "(the host puts them in)", spec.members["data"], tile_id)
        return dict(spec.value)

    def fields(self, path: str, node: Node, tile_id: str) -> tuple[str, ...] | None:
        columns = node.members.get("columns")
        if columns is None:
            return None
        if not isinstance(columns.value, list) or not all(isinstance(c, str) for c in columns.value):
            self.problem(f"{path}.columns", "must be an array of field names", columns, tile_id)
            return None
        return tuple(columns.value)

    # --- values ---

    def string(self, node: Node, key: str, path: str, tile_id: str | None, *,
               required: bool = False) -> str | None:
        value = node.members.get(key)
        if value is None:
            if required:
                self.problem(path, "missing", node, tile_id)
            return None
        if not isinstance(value.value, str):
            self.problem(path, f"{json.dumps(value.value)} is not a string", value, tile_id)
            return None
        return value.value

    def integer(self, node: Node, key: str, path: str, tile_id: str | None, default: int | None, *,
                low: int, high: int) -> int | None:
        value = node.members.get(key)
        if value is None:
            if default is None:
                self.problem(path, "missing: a whole number of grid units", node, tile_id)
            return default
        number = value.value
        if isinstance(number, bool) or not isinstance(number, int | float) or number != int(number):
            self.problem(path, f"{json.dumps(number)} is not a whole number", value, tile_id)
            return default
        number = int(number)
        if number < low or number > high:
            where = f"wider than the {high} columns" if path.endswith(".w") else f"outside {low}..{high}"
            self.problem(path, f"{number} is {where}", value, tile_id)
            return max(low, min(high, number))
        return number


def overlaps(tiles: list[Tile]) -> list[BoardProblem]:
    """A problem for each tile that covers a cell an earlier tile covers."""
    problems: list[BoardProblem] = []
    for n, tile in enumerate(tiles):
        for other in tiles[:n]:
            left, right = max(tile.x, other.x), min(tile.x + tile.w, other.x + other.w)
            top, bottom = max(tile.y, other.y), min(tile.y + tile.h, other.y + other.h)
            if left < right and top < bottom:
                problems.append(BoardProblem(
                    f"tiles[{tile.index}]",
                    f"“{tile.name}” overlaps “{other.name}” (tiles[{other.index}]) in columns {left}-{right - 1}, "
                    f"rows {top}-{bottom - 1}; move it (x, y) or shrink it (w, h)",
                    tile.id, tile.line))
                break
    return problems

