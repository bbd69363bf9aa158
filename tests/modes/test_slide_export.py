"""`pneuma export --mode slide`: one self-contained HTML file, or a PDF with
one page per slide, from a seeded slide workspace."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pneuma.cli import cli
from pneuma.host.registry import get_mode
from pneuma.workspace.params import init_workspace
from pneuma_slide.export import ExportError, count_pdf_pages, export_deck, load_deck

SRCDOC = re.compile(r'<iframe [^>]*srcdoc="([^"]*)"')


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "deck"
    init_workspace(get_mode("slide"), ws)
    return ws


def manifest_files(ws: Path) -> list[str]:
    return [s["file"] for s in json.loads((ws / "manifest.json").read_text())["slides"]]


def slide_docs(text: str) -> list[str]:
    return [html.unescape(m) for m in SRCDOC.findall(text)]


def test_html_export_holds_every_slide_in_manifest_order(workspace: Path) -> None:
    # Reorder first, so file-name order and manifest order differ.
    data = json.loads((workspace / "manifest.json").read_text())
    data["slides"].insert(0, data["slides"].pop(5))
    (workspace / "manifest.json").write_text(json.dumps(data, indent=2))
    result = export_deck(workspace, "html")
    assert result.path == workspace / "exports" / "pneuma-making-things-with-an-agent-you-can-see.html"
    text = result.path.read_text()
    files = re.findall(r'<section class="page[^"]*" id="slide-\d+" data-file="([^"]+)"', text)
    assert files == manifest_files(workspace)
    docs = slide_docs(text)
    assert len(docs) == 8
    for file, doc in zip(files, docs, strict=True):
        # The slide's own markup is there, with the theme inlined beside it.
        headline = re.search(r"<(?:h1|p class=\"statement\")>(.*?)</", (workspace / file).read_text())
        assert headline and headline.group(1) in doc, file
        assert "--color-accent: #5b3df5" in doc
        assert "width:1280px;height:720px" in doc
    assert "Seven modes, one protocol" in docs[0]


def test_html_export_is_self_contained(workspace: Path) -> None:
    text = export_deck(workspace, "html").path.read_text()
    everything = text + "".join(slide_docs(text))
    assert "/content/" not in everything
    assert 'src="assets/' not in everything and "url(assets/" not in everything
    docs = slide_docs(text)
    # The logo on slide 1 and the loop diagram on slide 4 are inlined SVG data.
    assert 'src="data:image/svg+xml;base64,' in docs[0]
    assert 'src="data:image/svg+xml;base64,' in docs[3]
    # Navigation on screen, one page per slide in print.
    assert "ArrowRight" in text and "@page { size: 1280px 720px; margin: 0; }" in text
    assert "break-after: page" in text


def test_html_export_inlines_css_urls_and_reports_missing_assets(workspace: Path) -> None:
    (workspace / "assets" / "dot.png").write_bytes(
        bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d"
                      "4944415478da63f8cfc0f01f0005000201a5e2e8a60000000049454e44ae426082"))
    (workspace / "slides" / "02-problem.html").write_text(
        '<section class="slide" style="background: url(\'assets/dot.png\')">'
        '<h1>Chat alone hides the work</h1><img src="assets/not-there.png" alt=""></section>')
    result = export_deck(workspace, "html")
    doc = slide_docs(result.path.read_text())[1]
    assert "url(\"data:image/png;base64," in doc
    assert result.missing_assets == ["assets/not-there.png"]


def test_html_export_uses_the_slide_size_param(workspace: Path) -> None:
    deck = load_deck(workspace, {"slideWidth": 1920, "slideHeight": 1080})
    assert (deck.width, deck.height) == (1920, 1080)
    text = export_deck(workspace, "html", params={"slideWidth": 1920, "slideHeight": 1080}).path.read_text()
    assert "@page { size: 1920px 1080px; margin: 0; }" in text


def test_export_refuses_a_broken_deck(workspace: Path) -> None:
    (workspace / "slides" / "04-loop.html").unlink()
    with pytest.raises(ExportError, match="slides/04-loop.html"):
        export_deck(workspace, "html")
    (workspace / "manifest.json").write_text("{not json")
    with pytest.raises(ExportError, match="not valid JSON"):
        export_deck(workspace, "html")


def test_cli_exports_html(workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "talk.html"
    result = CliRunner().invoke(cli, ["export", "--mode", "slide", "--workspace", str(workspace),
                                      "--format", "html", "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert out.is_file() and len(slide_docs(out.read_text())) == 8
    bad = CliRunner().invoke(cli, ["export", "--mode", "slide", "-w", str(workspace), "--format", "docx"])
    assert bad.exit_code == 2 and "pdf, html, png, pptx" in bad.output


def test_count_pdf_pages_ignores_the_pages_tree() -> None:
    assert count_pdf_pages(b"<< /Type /Pages /Kids [3 0 R 4 0 R] >> << /Type /Page >> <</Type/Page>>") == 2


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")
def test_pdf_export_has_one_page_per_slide(workspace: Path, tmp_path: Path) -> None:
    data = json.loads((workspace / "manifest.json").read_text())
    data["slides"] = data["slides"][:5]  # five slides → five pages
    (workspace / "manifest.json").write_text(json.dumps(data, indent=2))
    out = tmp_path / "deck.pdf"
    # Through the real command line, as a person runs it.
    pneuma = shutil.which("pneuma", path=str(Path(sys.executable).parent))
    proc = subprocess.run([pneuma, "export", "--mode", "slide", "--workspace", str(workspace),
                           "--format", "pdf", "--output", str(out)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    pdf = out.read_bytes()
    assert pdf.startswith(b"%PDF-")
    assert count_pdf_pages(pdf) == 5
    # Every page is the slide's size: 1280×720 px = 960×540 pt.
    boxes = re.findall(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf)
    assert len(boxes) == 5
    assert all((float(w), float(h)) == (960.0, 540.0) for w, h in boxes)
