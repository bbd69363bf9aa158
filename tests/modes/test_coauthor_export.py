"""The coauthor mode's exports (issue 29, item 4): the paper as a PDF through
the mode's own LaTeX build, and an arXiv-ready source archive. Both build
on a private copy: the workspace gets the export and nothing else. A
LaTeX error is the export's error, naming the file and line; a build that
never ends is stopped and leaves no TeX run behind; without latexmk the
person is told how to install it."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from pypdf import PdfReader

from pneuma.api import ExportError
from pneuma.cli import cli
from pneuma.host.exporters import exporter_for
from pneuma.host.plugins import get_plugin_manager
from pneuma.testing import make_workspace

LATEXMK = pytest.mark.skipif(shutil.which("latexmk") is None or shutil.which("pdflatex") is None,
                             reason="needs latexmk and pdflatex (texlive-latex-base)")
PNEUMA = shutil.which("pneuma", path=str(Path(sys.executable).parent))
TITLE = "Live Viewers for Human–Agent Co-Creation"  # main.tex's \title, as the PDF prints "--"
HEADINGS = ["Introduction", "Design", "Analysis", "Conclusion"]  # the seed's \\section{…}s, in order
PAPER = ["main.tex", "refs.bib", "main.bbl", "figures/coauthor-loop.pdf", "sections/abstract.tex",
         "sections/conclusion.tex", "sections/introduction.tex", "sections/method.tex", "sections/results.tex"]


def export(workspace: Path, fmt: str, output: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert PNEUMA
    args = [PNEUMA, "export", "-w", str(workspace), "--mode", "coauthor", "--format", fmt]
    return subprocess.run(args + (["-o", str(output)] if output else []),
                          capture_output=True, text=True, timeout=300, check=False)


def listing(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and ".pneuma" not in p.parts}


def pdf_text(path: Path) -> str:
    return " ".join(page.extract_text() for page in PdfReader(path).pages)


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    return make_workspace("coauthor", tmp_path / "paper")


@LATEXMK
def test_the_pdf_is_the_paper_and_the_workspace_gets_nothing_else(paper: Path) -> None:
    before = listing(paper)
    done = export(paper, "pdf")
    assert done.returncode == 0, done.stderr
    target = paper / "exports" / "Live-Viewers-for-Human-Agent-Co-Creation.pdf"
    assert done.stdout.strip() == str(target)  # stdout: the file written; the summary is on stderr
    text = pdf_text(target)
    assert TITLE in text
    for number, heading in enumerate(HEADINGS, start=1):
        assert f"{number} {heading}" in text, heading
    assert "(Engelbart, 1962)" in text  # bibtex ran: the citations are resolved
    after = listing(paper)
    assert sorted(set(after) - set(before)) == ["exports/Live-Viewers-for-Human-Agent-Co-Creation.pdf"]
    assert {k: v for k, v in after.items() if k in before} == before  # no build/, nothing touched


def plant_error(paper: Path) -> None:
    method = paper / "sections" / "method.tex"
    lines = method.read_text().splitlines()
    lines.insert(2, r"We measure \latencyof{the viewer}.")
    method.write_text("\n".join(lines) + "\n")


@LATEXMK
def test_a_latex_error_is_the_exports_error_with_its_file_and_line(paper: Path, tmp_path: Path) -> None:
    plant_error(paper)
    done = export(paper, "pdf", tmp_path / "paper.pdf")
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("pneuma: error: the LaTeX build failed: "
                           "sections/method.tex:3: Undefined control sequence \\latencyof"), line
    # The person's own latexmkrc, which does not ask TeX for file:line errors: the file is still named.
    (paper / "latexmkrc").write_text("$pdf_mode = 1;\n$out_dir = 'out';\n")
    with pytest.raises(ExportError) as caught:
        run(paper, "pdf", tmp_path / "paper.pdf")
    assert str(caught.value) == ("the LaTeX build failed: "
                                 "sections/method.tex:3: Undefined control sequence \\latencyof")
    assert caught.value.code == "E_CONFLICT"  # the Export menu's 409: the paper is what needs fixing
    assert (paper / "latexmkrc").read_text() == "$pdf_mode = 1;\n$out_dir = 'out';\n"
    assert not (tmp_path / "paper.pdf").exists()
    assert not (paper / "build").exists() and not (paper / "out").exists()


@LATEXMK
def test_the_arxiv_archive_holds_the_sources_and_builds_again_from_them_alone(paper: Path, tmp_path: Path) -> None:
    (paper / "build").mkdir()
    (paper / "build" / "stale.aux").write_text("left by an earlier build\n")
    (paper / "notes.tex").write_text("not part of the paper\n")  # never \input: left out
    first = tmp_path / "paper.tar.gz"
    run(paper, "arxiv", first)

    with tarfile.open(first) as archive:
        assert sorted(archive.getnames()) == sorted(PAPER)
        unpacked = tmp_path / "arxiv"
        archive.extractall(unpacked, filter="data")
    for name in PAPER[:2] + PAPER[3:]:
        assert (unpacked / name).read_bytes() == (paper / name).read_bytes(), name
    assert b"\\bibitem" in (unpacked / "main.bbl").read_bytes()

    # As arXiv builds it: TeX on the sources and the .bbl, bibtex never run.
    built = subprocess.run(["latexmk", "-pdf", "-bibtex-", "-interaction=nonstopmode", "-halt-on-error",
                            "main.tex"], cwd=unpacked, capture_output=True, text=True, timeout=180, check=False)
    assert built.returncode == 0, built.stdout[-2000:]
    assert not (unpacked / "main.blg").exists()
    text = pdf_text(unpacked / "main.pdf")
    assert TITLE in text and "(Engelbart, 1962)" in text


@LATEXMK
async def test_the_export_menu_offers_both_and_shows_the_latex_error(paper: Path) -> None:
    from pneuma.testing import serve

    plant_error(paper)
    async with serve("coauthor", paper, backend="none", watch=False) as server:
        offered = await (await server.get("/api/export")).json()
        assert [(f["name"], f["label"]["en"]) for f in offered["formats"]] == [
            ("pdf", "PDF (the paper, built with LaTeX)"),
            ("arxiv", "arXiv source archive (.tex, .bib, figures, .bbl)")]
        response = await server.get("/api/export/arxiv")
        error = (await response.json())["error"]
    assert (response.status, error["code"]) == (409, "E_CONFLICT")
    assert error["message"] == ("cannot export arxiv: the LaTeX build failed: "
                                "sections/method.tex:3: Undefined control sequence \\latencyof")
    assert list((paper / "exports").iterdir()) == []  # the folder the host made for it, left empty


def run(workspace: Path, fmt: str, output: Path) -> None:
    exporter = exporter_for(get_plugin_manager(), "coauthor")
    assert exporter is not None
    exporter.run(workspace, fmt, output)


def tex_left_running() -> list[str]:
    """Processes still working in an export's private copy that is gone."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cwd = os.readlink(proc / "cwd") if proc.name.isdigit() else ""
            if "pneuma-coauthor-export-" in cwd:
                found.append((proc / "cmdline").read_text().replace("\0", " "))
        except OSError:
            continue
    return found


@LATEXMK
def test_a_build_that_never_ends_is_a_timeout_and_leaves_nothing_running(
        paper: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pneuma_coauthor import export as coauthor_export

    monkeypatch.setattr(coauthor_export, "BUILD_SECONDS", 3.0)
    (paper / "main.tex").write_text("\\documentclass{article}\n\\begin{document}\n"
                                    "\\loop\\iftrue\\repeat\n\\end{document}\n")
    with pytest.raises(ExportError) as caught:
        run(paper, "pdf", tmp_path / "paper.pdf")
    assert caught.value.code == "E_TIMEOUT"
    assert str(caught.value) == "the LaTeX build did not finish within 3 s and was stopped"
    assert tex_left_running() == []
    assert not (tmp_path / "paper.pdf").exists()


def test_without_latexmk_the_export_says_how_to_install_it(
        paper: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = listing(paper)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tex-here"))
    for fmt in ("pdf", "arxiv"):
        with pytest.raises(ExportError) as caught:
            run(paper, fmt, tmp_path / f"paper-{fmt}")
        assert caught.value.code == "E_UNAVAILABLE"
        assert "latexmk" in str(caught.value)
        assert caught.value.hint and "apt-get install latexmk texlive-latex-base" in caught.value.hint
    assert listing(paper) == before


def test_export_list_offers_the_pdf_and_the_archive(paper: Path) -> None:
    listed = CliRunner().invoke(cli, ["export", "--mode", "coauthor", "-w", str(paper), "--list"])
    assert listed.exit_code == 0, listed.output
    assert listed.output.splitlines() == ["pdf\tPDF (the paper, built with LaTeX)",
                                          "arxiv\tarXiv source archive (.tex, .bib, figures, .bbl)"]


def test_the_archive_is_the_same_bytes_for_the_same_files(tmp_path: Path) -> None:
    from pneuma_coauthor.export import write_tar_gz

    (tmp_path / "b.tex").write_text("b")
    (tmp_path / "a.bib").write_text("a")
    write_tar_gz(tmp_path / "one.tar.gz", {"b.tex": tmp_path / "b.tex", "a.bib": tmp_path / "a.bib"})
    os.utime(tmp_path / "b.tex", (1, 1))
    write_tar_gz(tmp_path / "two.tar.gz", {"a.bib": tmp_path / "a.bib", "b.tex": tmp_path / "b.tex"})
    assert (tmp_path / "one.tar.gz").read_bytes() == (tmp_path / "two.tar.gz").read_bytes()
    with tarfile.open(fileobj=io.BytesIO((tmp_path / "one.tar.gz").read_bytes())) as archive:
        assert [(m.name, m.mtime, m.uid, m.uname) for m in archive.getmembers()] == [
            ("a.bib", 0, 0, ""), ("b.tex", 0, 0, "")]
