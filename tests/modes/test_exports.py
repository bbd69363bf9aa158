"""`pneuma export` through the ``register_exporters`` hook: a plugin's own
exporter, the slide deck as PNGs and PPTX, the doc workspace as standalone
HTML and a PDF — each read back the way a person would open it."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pneuma.api import (
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    hookimpl,
)
from pneuma.cli import cli
from pneuma.host.registry import get_mode
from pneuma.testing import register_plugin
from pneuma.workspace.params import init_workspace

CHROMIUM = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")
PNEUMA = shutil.which("pneuma", path=str(Path(sys.executable).parent))


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", data[16:24])


def seeded(workspace: Path, mode: str) -> Path:
    """``workspace`` holding ``mode``'s seed files, as `pneuma run` leaves it."""
    init_workspace(get_mode(mode), workspace)
    return workspace


def _export(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PNEUMA, "export", *args], capture_output=True, text=True, timeout=180,
                          check=False)


# --- the hook: any plugin can give a mode its exports ---


class NotesExporter:
    """A third-party plugin exporting the doc mode as plain text."""

    @staticmethod
    def _export(request: ExportRequest) -> ExportResult:
        notes = sorted(request.workspace.rglob("*.md"))
        if not notes:
            raise ExportError(f"{request.workspace} has no notes")
        request.output.write_text("\n".join(p.name for p in notes), encoding="utf-8")
        return ExportResult([request.output], summary=f"{len(notes)} note(s)")

    @hookimpl
    def register_exporters(self) -> list[Exporter]:
        return [Exporter("doc", [ExportFormat("names", {"en": "File names", "zh-CN": "文件名"}, ".txt")],
                         self._export),
                Exporter("nomode", [ExportFormat("x", "X", ".x")], self._export)]


def test_a_plugins_exporter_is_what_pneuma_export_runs(tmp_path: Path) -> None:
    workspace = tmp_path / "notes"
    workspace.mkdir()
    (workspace / "a.md").write_text("# A\n")
    (workspace / "b.md").write_text("# B\n")
    # The doc plugin registered first keeps the doc mode; a mode nobody
    # else exports ("nomode") is the new plugin's.
    with register_plugin(NotesExporter(), "notes-exporter"):
        listed = CliRunner().invoke(cli, ["export", "--mode", "nomode", "-w", str(workspace), "--list"])
        assert listed.exit_code == 0 and listed.output.strip() == "x\tX"
        done = CliRunner().invoke(cli, ["export", "--mode", "nomode", "-w", str(workspace),
                                        "--format", "x"])
        assert done.exit_code == 0, done.output
        out = workspace / "exports" / "nomode.x"
        assert out.read_text() == "a.md\nb.md"
        assert f"exported 2 note(s) to {out}" in done.output
        # Its ExportError is one line, exit 1.
        empty = tmp_path / "empty"
        empty.mkdir()
        failed = CliRunner().invoke(cli, ["export", "--mode", "nomode", "-w", str(empty), "--format", "x"])
        assert failed.exit_code == 1
        assert failed.output == f"pneuma: error: {empty} has no notes\n"
    gone = CliRunner().invoke(cli, ["export", "--mode", "nomode", "-w", str(workspace), "--format", "x"])
    assert gone.exit_code == 2 and "no mode named 'nomode'" in gone.output


def test_wrong_format_names_the_formats_the_mode_offers(tmp_path: Path) -> None:
    workspace = seeded(tmp_path / "docs", "doc")
    proc = _export("--mode", "doc", "-w", str(workspace), "--format", "pptx")
    assert proc.returncode == 2
    assert proc.stderr == "pneuma: error: the doc mode cannot export 'pptx'; it offers: pdf, html, html-raw\n"
    listed = _export("--mode", "slide", "-w", str(workspace), "--list", "--json")
    assert '"name": "pptx"' in listed.stdout and "PowerPoint" in listed.stdout


# --- slide: PNG per slide, PPTX with the text in the notes ---


@pytest.fixture
def deck(tmp_path: Path) -> Path:
    return seeded(tmp_path / "deck", "slide")


@CHROMIUM
def test_slide_png_is_one_image_per_slide_at_the_slide_size(deck: Path, tmp_path: Path) -> None:
    out = tmp_path / "pngs"
    proc = _export("--mode", "slide", "-w", str(deck), "--format", "png", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    files = [Path(line) for line in proc.stdout.split()]
    assert [f.name for f in files][:3] == ["01-title.png", "02-problem.png", "03-point.png"]
    assert len(files) == 8 and sorted(out.iterdir()) == sorted(files)
    assert all(_png_size(f) == (1280, 720) for f in files)
    # Not blank: a rendered slide is far larger than a flat colour.
    assert all(f.stat().st_size > 8_000 for f in files)


@CHROMIUM
def test_slide_pptx_has_each_slide_as_an_image_and_its_text_in_the_notes(deck: Path) -> None:
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    proc = _export("--mode", "slide", "-w", str(deck), "--format", "pptx")
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert path.parent == deck / "exports" and path.suffix == ".pptx"
    presentation = Presentation(str(path))
    assert len(presentation.slides) == 8
    assert (presentation.slide_width, presentation.slide_height) == (1280 * 9525, 720 * 9525)
    second = presentation.slides[1]
    pictures = [s for s in second.shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE]
    assert len(pictures) == 1 and pictures[0].width == presentation.slide_width
    assert pictures[0].image.content_type == "image/png"
    notes = second.notes_slide.notes_text_frame.text
    source = (deck / "slides" / "02-problem.html").read_text()
    assert "Chat alone hides the work" in notes and "Chat alone hides the work" in source
    assert "<" not in notes  # text, not markup


# --- doc: standalone HTML and a print-styled PDF with the contents ---


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return seeded(tmp_path / "docs", "doc")


def test_doc_html_is_one_standalone_file_with_contents(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "book.html"
    proc = _export("--mode", "doc", "-w", str(docs), "--format", "html", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("[pneuma] exported 3 document(s)")
    page = out.read_text()
    # README first, then the others by path; CLAUDE.md is not a document.
    files = re.findall(r'<article id="[^"]+" data-file="([^"]+)"', page)
    assert files == ["README.md", "guide/markdown.md", "notes/ideas.md"]
    # Every entry of the contents points at a heading that exists.
    toc = page.split("</nav>", 1)[0]
    targets = re.findall(r'href="#([^"]+)"', toc)
    assert len(targets) > 10
    ids = set(re.findall(r'\sid="([^"]+)"', page))
    assert set(targets) <= ids
    # Self-contained: the image is inlined, nothing is fetched from the workspace.
    assert 'src="data:image/svg+xml;base64,' in page
    assert 'src="images/' not in page
    # A link to another document goes to its section in this file.
    assert 'href="#doc-guide-markdown"' in page


@CHROMIUM
def test_doc_pdf_has_the_contents_and_every_document_searchable(docs: Path) -> None:
    from pypdf import PdfReader

    proc = _export("--mode", "doc", "-w", str(docs), "--format", "pdf")
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert path == docs / "exports" / "docs.pdf"
    reader = PdfReader(str(path))
    assert len(reader.pages) >= 4  # contents, then each of 3 documents from a new page
    first = reader.pages[0].extract_text()
    assert "Contents" in first and "Markdown guide" in first and "Notes and ideas" in first
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert "This folder is where you and the agent write documents together" in " ".join(text.split())
    # A4 pages (595×842 pt), as the print styles ask.
    box = reader.pages[1].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (595, 842)


def test_doc_export_of_a_workspace_without_documents_is_one_error_line(tmp_path: Path) -> None:
    workspace = tmp_path / "empty"
    workspace.mkdir()
    (workspace / "CLAUDE.md").write_text("# not a document\n")
    proc = _export("--mode", "doc", "-w", str(workspace), "--format", "html")
    assert proc.returncode == 1
    assert proc.stderr == f"pneuma: error: {workspace.resolve()} has no Markdown documents to export\n"


# --- draw: SVG and PNG from the real Excalidraw renderer ---

DRAW_BUNDLE = Path(__file__).resolve().parents[2] / "plugins/draw/pneuma_draw/static/vendor/excalidraw.js"
NEEDS_BUNDLE = pytest.mark.skipif(not DRAW_BUNDLE.exists(),
                                  reason="the draw viewer's bundle is not built (scripts/build-web)")


@pytest.fixture
def drawing(tmp_path: Path) -> Path:
    return seeded(tmp_path / "drawing", "draw")


@CHROMIUM
@NEEDS_BUNDLE
def test_draw_svg_is_excalidraws_own_drawing_with_its_font(drawing: Path) -> None:
    import xml.etree.ElementTree as ET

    proc = _export("--mode", "draw", "-w", str(drawing), "--format", "svg")
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert path == drawing / "exports" / "drawing-svg" / "welcome.svg"
    text = path.read_text(encoding="utf-8")
    root = ET.fromstring(text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "svg-source:excalidraw" in text  # Excalidraw's exportToSvg, not a re-drawing
    words = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "How Pneuma works" in words and "Looks right?" in words.replace("\n", " ")
    # Standalone: the hand-drawn font is embedded, nothing is fetched.
    assert "@font-face { font-family: Virgil; src: url(data:font/woff2;base64," in text


@CHROMIUM
@NEEDS_BUNDLE
def test_draw_png_is_the_drawing_at_twice_its_size(drawing: Path, tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    svg = _export("--mode", "draw", "-w", str(drawing), "--format", "svg", "-o", str(tmp_path / "svg"))
    png = _export("--mode", "draw", "-w", str(drawing), "--format", "png", "-o", str(tmp_path / "png"))
    assert svg.returncode == 0 and png.returncode == 0, svg.stderr + png.stderr
    root = ET.fromstring((tmp_path / "svg" / "welcome.svg").read_text(encoding="utf-8"))
    width, height = int(root.get("width")), int(root.get("height"))
    assert _png_size(tmp_path / "png" / "welcome.png") == (2 * width, 2 * height)
    assert (tmp_path / "png" / "welcome.png").stat().st_size > 50_000  # shapes, not a blank page


def test_draw_export_without_drawings_is_one_error_line(tmp_path: Path) -> None:
    workspace = tmp_path / "empty"
    workspace.mkdir()
    proc = _export("--mode", "draw", "-w", str(workspace), "--format", "svg")
    assert proc.returncode == 1
    assert proc.stderr == f"pneuma: error: {workspace.resolve()} has no drawings (*.excalidraw) to export\n"


# --- no Chromium, or a Chromium that fails: the same error from every mode ---
#
# Each export that renders with Chromium says so the same way, whatever the
# mode: no Chromium installed is E_UNAVAILABLE (503) naming it and how to
# install it; a Chromium that crashes is E_PREVIEW_FAIL (502) with what it
# said. `pneuma export` prints the same message as one line, exit 1.


@pytest.fixture
def no_chromium(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """No Chromium anywhere: the host's path is missing and PATH has none.
    (Modes that launch Playwright themselves got CHROMIUM from pneuma.api at
    import; they are pointed at the missing path too.)"""
    import pneuma.tools.html_render
    import pneuma_webcraft.render

    missing = str(tmp_path / "no-chromium")
    monkeypatch.setattr(pneuma.tools.html_render, "CHROMIUM", missing)
    monkeypatch.setattr(pneuma_webcraft.render, "CHROMIUM", missing)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    return missing


@pytest.fixture
def crashing_chromium(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """A Chromium that dies at once, as one with a broken GPU stack or sandbox does."""
    import pneuma.tools.html_render

    crashing = _crashing_chromium(tmp_path / "bin")
    monkeypatch.setattr(pneuma.tools.html_render, "CHROMIUM", crashing)
    return crashing


def _crashing_chromium(directory: Path) -> str:
    crashing = directory / "chromium"
    directory.mkdir()
    crashing.write_text("#!/bin/sh\necho 'chromium: Trace/breakpoint trap' >&2\nexit 133\n")
    crashing.chmod(0o755)
    return str(crashing)


def _needs_chromium(missing: str) -> str:
    return (f"this export needs Chromium ({missing}), and it is not installed; install it with "
            "`sudo apt-get install chromium` (Debian, Ubuntu) or your system's package manager, "
            "then export again")


async def _export_error(mode: str, fmt: str, workspace: Path) -> tuple[int, dict]:
    from pneuma.testing import serve

    async with serve(mode, workspace, backend="none", watch=False) as server:
        response = await server.get(f"/api/export/{fmt}")
        return response.status, (await response.json())["error"]


@pytest.mark.parametrize(("mode", "fmt"), [("slide", "pdf"), ("slide", "pptx"), ("doc", "pdf"),
                                           ("webcraft", "png"),
                                           pytest.param("draw", "png", marks=NEEDS_BUNDLE)])
async def test_the_export_menu_says_chromium_is_missing_and_how_to_install_it(
        no_chromium: str, tmp_path: Path, mode: str, fmt: str) -> None:
    status, error = await _export_error(mode, fmt, tmp_path / "ws")
    assert (status, error["code"]) == (503, "E_UNAVAILABLE"), error
    assert error["message"] == f"cannot export {fmt}: {_needs_chromium(no_chromium)}"
    assert error["details"] == {"format": fmt}
    assert not list((tmp_path / "ws").glob(f"exports/*.{fmt}"))


@pytest.mark.parametrize(("mode", "fmt"), [("slide", "pdf"), ("slide", "png"), ("doc", "pdf")])
async def test_the_export_menu_says_chromium_failed_and_what_it_said(
        crashing_chromium: str, tmp_path: Path, mode: str, fmt: str) -> None:
    status, error = await _export_error(mode, fmt, tmp_path / "ws")
    assert (status, error["code"]) == (502, "E_PREVIEW_FAIL"), error
    assert error["message"].startswith(f"cannot export {fmt}: Chromium failed: ")
    assert "exit status 133" in error["message"]
    assert "chromium: Trace/breakpoint trap" in error["message"]
    assert error["recoverable"] is True and "chromium --headless" in error["hint"]


def test_pneuma_export_without_chromium_is_one_line(no_chromium: str, deck: Path, docs: Path,
                                                    tmp_path: Path) -> None:
    done = CliRunner().invoke(cli, ["export", "--mode", "doc", "-w", str(docs), "--format", "pdf"])
    assert done.exit_code == 1
    assert done.output == f"pneuma: error: {_needs_chromium(no_chromium)}\n"
    # The slide mode adds what a person can do without Chromium.
    done = CliRunner().invoke(cli, ["export", "--mode", "slide", "-w", str(deck), "--format", "pdf"])
    assert done.exit_code == 1
    assert done.output == (f"pneuma: error: {_needs_chromium(no_chromium)} (Or export HTML: it needs "
                           "no Chromium and prints to PDF from any browser)\n")
    # A mode whose exporter lets Playwright's own error escape is answered the same way.
    site = seeded(tmp_path / "site", "webcraft")
    done = CliRunner().invoke(cli, ["export", "--mode", "webcraft", "-w", str(site), "--format", "png"])
    assert done.exit_code == 1
    assert done.output == f"pneuma: error: {_needs_chromium(no_chromium)}\n"


def test_pneuma_export_with_a_crashing_chromium_is_one_line(crashing_chromium: str, deck: Path) -> None:
    done = CliRunner().invoke(cli, ["export", "--mode", "slide", "-w", str(deck), "--format", "png"])
    assert done.exit_code == 1
    assert done.output.startswith("pneuma: error: Chromium failed: ")
    assert done.output.count("\n") == 1 and "Traceback" not in done.output
    assert "exit status 133; chromium: Trace/breakpoint trap" in done.output


async def test_the_diagram_export_says_chromium_is_missing_or_failed_as_the_others_do(
        no_chromium: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The diagram mode renders with its own Chromium command line (the
    # mermaid bundle in a page): the same codes and the same words.
    status, error = await _export_error("diagram", "svg", tmp_path / "ws")
    assert (status, error["code"]) == (503, "E_UNAVAILABLE"), error
    assert _needs_chromium(no_chromium) in error["message"]

    import pneuma.tools.html_render

    monkeypatch.setattr(pneuma.tools.html_render, "CHROMIUM", _crashing_chromium(tmp_path / "bin"))
    status, error = await _export_error("diagram", "png", tmp_path / "ws2")
    assert (status, error["code"]) == (502, "E_PREVIEW_FAIL"), error
    assert "exit status 133" in error["message"]
    assert "chromium: Trace/breakpoint trap" in error["message"]
