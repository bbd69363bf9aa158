"""The runner: at most two checks at once, a time budget each, a failing
check reported as the check's error, the turn's status from the problems."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from pneuma.api import CheckRequest, Problem, TurnCheck
from pneuma.turn_checks.runner import run_checks_sync


def _request(tmp_path: Path) -> CheckRequest:
    return CheckRequest(workspace=tmp_path, changed=("a.md",))


def test_problems_fail_the_turn_and_warnings_do_not(tmp_path: Path) -> None:
    checks = [
        TurnCheck("m", "links", "Links", lambda r: [Problem("broken link x.md", file="a.md", line=3)]),
        TurnCheck("m", "style", "Style", lambda r: [Problem("long line", file="a.md", severity="warning")]),
    ]
    result = run_checks_sync(checks, _request(tmp_path))
    assert result.status == "failed"
    assert [(p["check"], p["file"], p["line"], p["severity"]) for p in result.problems] == [
        ("links", "a.md", 3, "error"), ("style", "a.md", None, "warning")]
    assert run_checks_sync(checks[1:], _request(tmp_path)).status == "passed"


def test_a_check_that_raises_or_hangs_is_its_own_error_and_the_others_still_answer(tmp_path: Path) -> None:
    release = threading.Event()

    def hangs(request: CheckRequest) -> list[Problem]:
        release.wait(10)
        return []

    def raises(request: CheckRequest) -> list[Problem]:
        raise RuntimeError("the parser is missing\nmore text")

    checks = [TurnCheck("m", "hangs", "Hangs", hangs), TurnCheck("m", "raises", "Raises", raises),
              TurnCheck("m", "fine", "Fine", lambda r: [])]
    started = time.monotonic()
    try:
        result = run_checks_sync(checks, _request(tmp_path), budget_s=0.5)
    finally:
        release.set()
    assert time.monotonic() - started < 3
    assert result.status == "error"
    errors = {o.check.name: o.error for o in result.outcomes}
    assert errors == {"hangs": "timed out after 0.5 s", "raises": "the parser is missing", "fine": None}


def test_no_more_than_two_checks_run_at_once(tmp_path: Path) -> None:
    running = 0
    most = 0
    lock = threading.Lock()

    def slow(request: CheckRequest) -> list[Problem]:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.15)
        with lock:
            running -= 1
        return []

    checks = [TurnCheck("m", f"c{i}", "C", slow) for i in range(5)]
    assert run_checks_sync(checks, _request(tmp_path)).status == "passed"
    assert most == 2


def test_a_check_gets_the_mode_and_its_budget(tmp_path: Path) -> None:
    seen: list[tuple[str, float]] = []

    def record(request: CheckRequest) -> list[Problem]:
        seen.append((request.mode, request.budget_s))
        return []

    run_checks_sync([TurnCheck("deck", "c", "C", record)], _request(tmp_path), budget_s=7)
    assert seen == [("deck", 7)]


def test_the_kept_results_stay_within_what_the_next_start_reads(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from pneuma.turn_checks import state

    monkeypatch.setattr(state, "MAX_FILE_BYTES", 20_000)
    kept = state.TurnCheckState(tmp_path)
    kept.set_repair(False)
    for n in range(60):
        kept.keep({"client_msg_id": f"c{n}", "status": "failed", "problems": [{"message": "x" * 900}]})
    on_disk = (tmp_path / ".pneuma" / "turn-checks.json").read_bytes()
    assert len(on_disk) <= 20_000
    again = state.TurnCheckState(tmp_path)
    assert again.repair is False
    assert again.results[-1]["client_msg_id"] == "c59" and len(again.results) < 60


def test_a_link_out_of_the_workspace_is_never_checked(tmp_path: Path) -> None:
    from pneuma.turn_checks.feature import _checkable

    workspace = tmp_path / "ws"
    (workspace / "docs").mkdir(parents=True)
    (tmp_path / "secret.md").write_text("[x](nowhere.md)\n", encoding="utf-8")
    (workspace / "leak.md").symlink_to(tmp_path / "secret.md")
    (workspace / "docs" / "guide.md").write_text("# G\n", encoding="utf-8")
    (workspace / "inside.md").symlink_to(workspace / "docs" / "guide.md")
    assert not _checkable(workspace, "leak.md")
    assert _checkable(workspace, "docs/guide.md") and _checkable(workspace, "inside.md")
    assert not _checkable(workspace, "docs") and not _checkable(workspace, "gone.md")
