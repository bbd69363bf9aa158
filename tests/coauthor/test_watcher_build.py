"""FileWatcher → ArtifactChanged with the new revision; the optional build."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from pneuma_coauthor.build import run_build
from pneuma_coauthor.domain.model import revision_of
from pneuma_coauthor.watcher import watch_workspace
from pneuma_coauthor.workflow.usecases import CoAuthor


async def test_watcher_reports_the_persons_edits(paper: Path):
    app = CoAuthor(paper)
    stop = asyncio.Event()
    seen: list = []
    job = asyncio.create_task(watch_workspace(app, stop, seen.append, debounce_ms=50))
    try:
        for _ in range(100):  # the initial scan records every watched file once
            if {e.payload.path for e in app.billboard.events()} >= {"OUTLINE.md", "BRIEF.md", "sections/intro.tex"}:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        (paper / "sections/intro.tex").write_text("\\section{Introduction}\nEdited by the person.\n")
        (paper / "notes.txt").write_text("not watched")
        (paper / "OUTLINE.md").write_text("# Outline\n- changed\n")
        for _ in range(100):
            if {e.payload.path for e in seen} >= {"sections/intro.tex", "OUTLINE.md"}:
                break
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        await asyncio.wait_for(job, 5)
    by_path = {e.payload.path: e.payload for e in seen}
    assert set(by_path) == {"sections/intro.tex", "OUTLINE.md"}
    assert by_path["sections/intro.tex"].revision == revision_of((paper / "sections/intro.tex").read_bytes())
    assert by_path["sections/intro.tex"].previous_revision is not None
    assert app.billboard.artifact("OUTLINE.md").type == "outline_md"
    # Saving the same bytes again records nothing new.
    assert app.record_file_change("OUTLINE.md") is None


def test_build_is_skipped_not_failed_without_a_paper(tmp_path: Path):
    assert run_build(tmp_path, mode="off").status == "skipped"
    result = run_build(tmp_path)
    assert result.status == "skipped"  # no latexmk, or no main.tex: never an error


@pytest.mark.skipif(shutil.which("latexmk") is None or shutil.which("pdflatex") is None, reason="needs latexmk")
def test_build_reports_latex_errors(tmp_path: Path):
    (tmp_path / "main.tex").write_text("\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}\n")
    result = run_build(tmp_path, timeout=60)
    assert result.status == "failed" and "Undefined control sequence" in result.detail
    (tmp_path / "main.tex").write_text("\\documentclass{article}\\begin{document}Hi.\\end{document}\n")
    assert run_build(tmp_path, timeout=60).status == "ok"
