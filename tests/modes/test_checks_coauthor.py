"""The coauthor mode's check after every turn: the paper's LaTeX build on a
private copy (the workspace is left as it was), each error with the file
and line; with no LaTeX engine on the machine, "skipped", which does not
fail the turn."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pneuma.api import CheckRequest, Problem
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_checks import checks_for
from pneuma.testing import make_workspace
from pneuma.turn_checks.runner import run_checks_sync

LATEXMK = pytest.mark.skipif(shutil.which("latexmk") is None or shutil.which("pdflatex") is None,
                             reason="needs latexmk and pdflatex (texlive-latex-base)")


def run_check(workspace: Path, changed: list[str]) -> list[Problem]:
    checks = checks_for(get_plugin_manager(), "coauthor")
    assert [c.name for c in checks] == ["latex"]
    return list(checks[0].run(CheckRequest(workspace=workspace, changed=tuple(changed), mode="coauthor")))


def listing(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and ".pneuma" not in p.parts}


@LATEXMK
def test_a_turn_that_breaks_the_paper_gets_the_error_with_file_and_line(tmp_path: Path) -> None:
    paper = make_workspace("coauthor", tmp_path / "paper")
    method = paper / "sections" / "method.tex"
    lines = method.read_text().splitlines()
    lines.insert(2, r"We measure \latencyof{the viewer}.")
    method.write_text("\n".join(lines) + "\n")
    before = listing(paper)

    problems = run_check(paper, ["sections/method.tex"])
    assert [(p.file, p.line, p.severity) for p in problems] == [("sections/method.tex", 3, "error")]
    assert problems[0].message == "sections/method.tex, line 3: Undefined control sequence."
    assert listing(paper) == before  # built elsewhere: no build/ folder, nothing written

    method.write_text("\n".join(lines[:2] + lines[3:]) + "\n")
    assert run_check(paper, ["sections/method.tex"]) == []


def test_without_a_latex_engine_the_check_says_skipped_without_failing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paper = make_workspace("coauthor", tmp_path / "paper")
    monkeypatch.setenv("PATH", str(tmp_path / "no-tex-here"))
    problems = run_check(paper, ["main.tex"])
    assert [(p.message, p.severity) for p in problems] == [
        ("skipped: no LaTeX engine (latexmk is not installed)", "warning")]
    # As the host's runner sees it: the turn's badge passes (no repair turn).
    turn = run_checks_sync(checks_for(get_plugin_manager(), "coauthor"),
                           CheckRequest(workspace=paper, changed=("main.tex",), mode="coauthor"))
    assert turn.status == "passed" and turn.problem_count == 1
    # A turn that touched no source of the paper builds nothing.
    assert run_check(paper, ["OUTLINE.md", "figures/coauthor-loop.pdf"]) == []


def left_running() -> list[str]:
    """The processes still working in a coauthor check's private copy that
    is gone (its check has returned)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cwd = os.readlink(proc / "cwd") if proc.name.isdigit() else ""
            if "pneuma-coauthor-check-" in cwd and cwd.endswith("(deleted)"):
                found.append((proc / "cmdline").read_text().replace("\0", " "))
        except OSError:
            continue
    return found


@LATEXMK
def test_a_paper_whose_build_never_ends_is_the_checks_error_and_leaves_nothing_running(tmp_path: Path) -> None:
    paper = make_workspace("coauthor", tmp_path / "paper")
    (paper / "main.tex").write_text("\\documentclass{article}\n\\begin{document}\n"
                                    "\\loop\\iftrue\\repeat\n\\end{document}\n")
    turn = run_checks_sync(checks_for(get_plugin_manager(), "coauthor"),
                           CheckRequest(workspace=paper, changed=("main.tex",), mode="coauthor"), budget_s=6)
    assert turn.status == "error" and turn.problems == []
    error = turn.outcomes[0].error
    assert error is not None and error.startswith("the LaTeX build check failed: latexmk did not finish within 4 s")
    assert left_running() == []  # TeX's run ended with latexmk
