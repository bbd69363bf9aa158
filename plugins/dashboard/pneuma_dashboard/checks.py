"""The dashboard's check after every turn (docs/checks.md): the problems
``validate_board`` finds (validate.py), each with the tile it is in as the
viewer's ``locate``.

A turn that changed ``dashboard.json`` gets every problem of the board; a
turn that changed only data files gets the problems of the tiles that read
them (a CSV that lost a column breaks the charts over it, not the rest).
"""

from __future__ import annotations

from pneuma.api import CheckRequest, Problem, Sandbox, TurnCheck
from pneuma_dashboard.board import BOARD_FILE, BoardProblem
from pneuma_dashboard.data import SUFFIXES
from pneuma_dashboard.validate import BoardReport, validate_board


def board_problems(request: CheckRequest) -> list[Problem]:
    board_changed = BOARD_FILE in request.changed
    data_changed = set(request.changed_with_suffix(*SUFFIXES)) - {BOARD_FILE}
    if not board_changed and not data_changed:
        return []
    report = validate_board(Sandbox(request.workspace))
    wanted = report.problems if board_changed else [
        p for p in report.problems if _reads(report, p, data_changed)]
    return [_problem(p, report) for p in wanted]


def _reads(report: BoardReport, problem: BoardProblem, files: set[str]) -> bool:
    """A problem of a tile over one of ``files`` that data can cause (not its place on the grid)."""
    tile = report.board.tile(problem.tile) if problem.tile else None
    where = f"tiles[{tile.index}]" if tile else ""
    about_place = problem.path == where or problem.path.endswith((".x", ".y", ".w", ".h"))
    return tile is not None and tile.data in files and not about_place


def _problem(problem: BoardProblem, report: BoardReport) -> Problem:
    tile = report.board.tile(problem.tile) if problem.tile else None
    locate: dict[str, str] = {"file": BOARD_FILE}
    if tile is not None:
        locate["tile"] = tile.id
    if tile is not None and tile.data and problem.message.startswith(tile.data):
        # the data file itself is wrong (does not parse, too large): said at that file
        return Problem(str(problem), file=tile.data, severity=problem.severity, locate=locate)
    return Problem(str(problem), file=BOARD_FILE, line=problem.line, severity=problem.severity, locate=locate)


CHECKS = [TurnCheck(mode="dashboard", name="board",
                    label={"en": "Every tile draws", "zh-CN": "每个图块都能绘制"},
                    run=board_problems)]
