"""The dashboard's review hooks: the check after every turn (the board's
problems, each locating its tile) and a turn's changes in the board's terms
(tiles added, removed, moved, changed; data rows added)."""

from __future__ import annotations

import json
from pathlib import Path

from pneuma.api import CheckRequest, Problem, TurnFilesFromMaps
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_changes import all_describers
from pneuma.host.turn_checks import checks_for
from pneuma.testing import make_workspace

SEED = Path(__file__).resolve().parents[2] / "plugins/dashboard/pneuma_dashboard/seeds"


def run_check(workspace: Path, changed: list[str]) -> list[Problem]:
    checks = checks_for(get_plugin_manager(), "dashboard")
    assert [c.name for c in checks] == ["board"]
    return list(checks[0].run(CheckRequest(workspace=workspace, changed=tuple(changed), mode="dashboard")))


def test_the_check_reports_the_boards_problems_each_locating_its_tile(tmp_path: Path) -> None:
    workspace = make_workspace("dashboard", tmp_path / "ws")
    assert run_check(workspace, ["dashboard.json", "data/sales.csv"]) == []
    board = json.loads((workspace / "dashboard.json").read_text(encoding="utf-8"))
    board["tiles"][3]["spec"]["encoding"]["x"]["field"] = "date"
    board["tiles"][5]["y"] = 5  # over both charts
    (workspace / "dashboard.json").write_text(json.dumps(board, indent=2), encoding="utf-8")
    problems = run_check(workspace, ["dashboard.json"])
    assert [(p.locate, p.severity) for p in problems] == [
        ({"file": "dashboard.json", "tile": "latest-rows"}, "error"),
        ({"file": "dashboard.json", "tile": "revenue-by-month"}, "error")]
    assert problems[0].message.startswith("tiles[5]: “All rows” overlaps “Revenue by month” (tiles[3])")
    assert problems[1].message.startswith('tiles[3].spec.encoding.x.field: "date" is not a field of data/sales.csv')
    assert all(p.file == "dashboard.json" and p.line for p in problems)
    # a data file that lost a column: the tiles over it, not the board's layout
    csv = (workspace / "data/sales.csv").read_text(encoding="utf-8").replace("revenue", "amount", 1)
    (workspace / "data/sales.csv").write_text(csv, encoding="utf-8")
    only_data = run_check(workspace, ["data/sales.csv"])
    assert {p.locate["tile"] for p in only_data} == {
        "total-revenue", "revenue-by-month", "revenue-by-product", "latest-rows"}
    (workspace / "data/sales.csv").write_bytes(b"month,revenue\n\xff\n")
    broken = run_check(workspace, ["data/sales.csv"])
    assert {(p.file, p.message.split(":")[0]) for p in broken} == {
        ("data/sales.csv", f"tiles[{n}].data") for n in range(1, 6)}
    assert run_check(workspace, ["notes.md"]) == []


def _seed_files() -> dict[str, bytes]:
    return {"dashboard.json": (SEED / "dashboard.json").read_bytes(),
            "data/sales.csv": (SEED / "data/sales.csv").read_bytes()}


def _describe(before: dict[str, bytes], after: dict[str, bytes]) -> list[dict]:
    describer = all_describers(get_plugin_manager())["dashboard"]
    return [c.to_json() for c in describer.describe(TurnFilesFromMaps(before, after))]


def test_a_turns_changes_are_said_tile_by_tile_and_in_rows(tmp_path: Path) -> None:
    before = _seed_files()
    board = json.loads(before["dashboard.json"])
    tiles = {t["id"]: t for t in board["tiles"]}
    tiles["revenue-by-month"]["spec"]["mark"] = "area"
    tiles["total-units"].update(x=0, y=10)
    tiles["about"]["title"] = "Read me"
    board["tiles"] = [t for t in board["tiles"] if t["id"] != "latest-rows"]
    board["tiles"].append({"id": "units-by-region", "type": "chart", "title": "Units by region", "x": 4, "y": 10,
                           "w": 8, "h": 3, "data": "data/sales.csv", "spec": {"mark": "bar"}})
    csv = before["data/sales.csv"] + b"".join(b"2027-01-01,North,Notebook,%d,1.00\n" % n for n in range(12))
    after = {"dashboard.json": json.dumps(board, indent=2).encode(), "data/sales.csv": csv}
    said = [(c["where"]["en"], c["what"]["en"], c["kind"], c["locate"]) for c in _describe(before, after)]
    board_file = {"file": "dashboard.json"}
    assert said == [
        ("Tile “Read me”", "retitled “Read me”", "changed", {**board_file, "tile": "about"}),
        ("Tile “Units sold”", "moved to 0,10", "moved", {**board_file, "tile": "total-units"}),
        ("Tile “Revenue by month”", "spec changed", "changed", {**board_file, "tile": "revenue-by-month"}),
        ("Tile “Units by region”", "added (chart, 8×3 at 4,10)", "added", {**board_file, "tile": "units-by-region"}),
        ("Tile “All rows”", "removed", "removed", board_file),
        ("data/sales.csv", "12 rows added", "changed", {"file": "data/sales.csv", "tile": "total-revenue"}),
    ]
    changes = _describe(before, after)
    assert changes[2]["what"]["zh-CN"] == "图表定义修改" and changes[2]["id"] == "tile:revenue-by-month"


def test_a_board_that_stops_parsing_and_edited_rows_are_said_plainly() -> None:
    before = _seed_files()
    lines = before["data/sales.csv"].decode().splitlines(keepends=True)
    lines[1] = lines[1].replace("549.00", "600.00")
    after = {"dashboard.json": before["dashboard.json"].replace(b'"title": "Revenue",', b'"title": "Revenue"'),
             "data/sales.csv": "".join(lines).encode()}
    said = [(c["where"]["en"], c["what"]["en"], c["locate"]) for c in _describe(before, after)]
    assert said == [("Board", "changed (not valid JSON, line 17)", {"file": "dashboard.json", "line": 17}),
                    ("data/sales.csv", "1 rows changed", {"file": "data/sales.csv"})]


def test_each_tile_change_is_reverted_alone_keeping_the_rest_of_the_file() -> None:
    before = _seed_files()
    text = before["dashboard.json"].decode()
    # the turn: "Units sold" moved, "About" retitled, "All rows" removed, a tile added
    after_text = (text.replace('"x": 8, "y": 0, "w": 4, "h": 2,', '"x": 8, "y": 10, "w": 4, "h": 2,')
                  .replace('"About this board"', '"Read me"'))
    start = after_text.index(',\n    {\n      "id": "latest-rows"')
    end = after_text.index("\n  ]\n}")
    after_text = (after_text[:start] + ',\n    {"id": "note", "type": "markdown", "title": "Note", '
                  '"x": 0, "y": 12, "w": 4, "h": 2, "text": "hi"}' + after_text[end:])
    after = {**before, "dashboard.json": after_text.encode()}
    describer = all_describers(get_plugin_manager())["dashboard"]
    changes = {c.id: c for c in describer.describe(TurnFilesFromMaps(before, after))}
    assert set(changes) == {"tile:about", "tile:total-units", "tile:latest-rows", "tile:note"}
    files = TurnFilesFromMaps(before, after)
    current = {"dashboard.json": after["dashboard.json"]}

    def reverted(change_id: str) -> str:
        assert describer.revert is not None
        return describer.revert(files, changes[change_id], current)["dashboard.json"].decode()

    moved_back = reverted("tile:total-units")
    assert moved_back == after_text.replace('"x": 8, "y": 10, "w": 4, "h": 2,', '"x": 8, "y": 0, "w": 4, "h": 2,')
    assert reverted("tile:about") == after_text.replace('"Read me"', '"About this board"')
    assert '"id": "note"' not in reverted("tile:note")
    json.loads(reverted("tile:note"))
    restored = json.loads(reverted("tile:latest-rows"))
    assert [t["id"] for t in restored["tiles"]][-2:] == ["latest-rows", "note"]
    assert restored["tiles"][-2] == json.loads(text)["tiles"][-1]
