"""`pneuma export` of a print workspace, read back with the programs people
open the files with: pypdf and poppler (pdftotext, pdffonts) for the PDF,
PIL for the PNGs, the file itself for the standalone HTML.

Each export below starts one Chromium; they run once per module and the
tests read their files."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image
from pypdf import PdfReader
from pypdf.generic import ContentStream

from pneuma.cli import cli
from pneuma.host.registry import get_mode
from pneuma.workspace.params import init_workspace

CHINESE = "河畔共享花园理事会"  # the seed's letter, page 3


def seeded(folder: Path, **params: str) -> Path:
    init_workspace(get_mode("print"), folder, {"paper": "A4", "orientation": "portrait", **params})
    return folder


def export(workspace: Path, fmt: str, output: Path) -> str:
    result = CliRunner().invoke(cli, ["export", "-w", str(workspace), "--mode", "print",
                                      "--format", fmt, "-o", str(output)])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def a4(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    ws = seeded(tmp_path_factory.mktemp("a4") / "report")
    pdf = ws.parent / "report.pdf"
    return ws, pdf, export(ws, "pdf", pdf)


def pdftotext(pdf: Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout


def test_a4_pdf_has_one_595_by_842_pt_page_per_page_of_print_json(a4: tuple[Path, Path, str]) -> None:
    ws, pdf, output = a4
    pages = json.loads((ws / "print.json").read_text())["pages"]
    reader = PdfReader(pdf)
    assert len(reader.pages) == len(pages) == 3
    for page in reader.pages:
        assert (round(float(page.mediabox.width)), round(float(page.mediabox.height))) == (595, 842)
    assert "3 page(s), A4" in output


def test_a4_pdf_text_is_selectable_chinese_included(a4: tuple[Path, Path, str]) -> None:
    _, pdf, _ = a4
    per_page = [page.extract_text() for page in PdfReader(pdf).pages]
    assert "Annual Report" in per_page[0]
    assert CHINESE in per_page[2].replace(" ", "").replace("\n", "")
    sheets = pdftotext(pdf).split("\f")
    assert "Forty-two beds" in sheets[0]
    assert "致邻居们" in sheets[2]
    # Page numbers as print.json says: none on the cover, then 2 and 3, last on their page.
    last_lines = [[line.strip() for line in sheet.splitlines() if line.strip()][-1] for sheet in sheets[:3]]
    assert last_lines[1:] == ["2", "3"]
    assert last_lines[0] != "1"


def empty_boxes(pdf: Path) -> list[tuple[int, str]]:
    """(page, font) of each text run that draws a glyph as .notdef (an empty
    box: the font had no glyph for the character). Chromium writes text in
    Identity-H fonts, two bytes a glyph, and .notdef is glyph 0."""
    reader = PdfReader(pdf)
    found = []
    for number, page in enumerate(reader.pages, start=1):
        fonts = page["/Resources"]["/Font"]
        font = None
        for operands, operator in ContentStream(page.get_contents(), reader).operations:
            if operator == b"Tf":
                font = fonts[operands[0]].get_object()
            elif operator in (b"Tj", b"TJ") and font is not None and font.get("/Encoding") == "/Identity-H":
                for item in operands[0] if operator == b"TJ" else [operands[0]]:
                    data = getattr(item, "original_bytes", None)
                    if data and 0 in (data[i] << 8 | data[i + 1] for i in range(0, len(data) - 1, 2)):
                        found.append((number, str(font.get("/BaseFont"))))
    return found


def test_a4_pdf_draws_every_character_chinese_included(a4: tuple[Path, Path, str]) -> None:
    # No system CJK font here: without the shell's Noto slices, or with the
    # face after a font that has the punctuation (the letter's blockquote
    # opens with “), Chromium draws empty boxes.
    _, pdf, _ = a4
    assert empty_boxes(pdf) == []


@pytest.mark.skipif(shutil.which("pdffonts") is None, reason="poppler-utils is not installed")
def test_a4_pdf_embeds_every_font_it_uses(a4: tuple[Path, Path, str]) -> None:
    _, pdf, _ = a4
    lines = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True, check=True).stdout.splitlines()
    fonts = lines[2:]
    assert fonts, "no fonts in the PDF"
    # name, type, encoding, then "emb sub uni" as yes/no
    embedded = [re.findall(r"\b(yes|no)\b", line)[0] for line in fonts]
    assert embedded == ["yes"] * len(fonts), "\n".join(lines)
    assert any("NotoSansSC" in line for line in fonts), "Chinese was not drawn with the shell's Noto Sans SC"


def test_letter_landscape_pdf_pages_are_792_by_612_pt(tmp_path: Path) -> None:
    ws = seeded(tmp_path / "wide", paper="Letter", orientation="landscape")
    pdf = tmp_path / "wide.pdf"
    export(ws, "pdf", pdf)
    sizes = {(round(float(p.mediabox.width)), round(float(p.mediabox.height))) for p in PdfReader(pdf).pages}
    assert sizes == {(792, 612)}


def test_png_export_is_one_image_per_page_at_the_papers_aspect(tmp_path: Path) -> None:
    ws = seeded(tmp_path / "pictures")
    # a page made too long: exported as it is, and named in the result
    long_page = ws / "pages" / "02-the-year.html"
    long_page.write_text(long_page.read_text() + "<div style='height:400mm'>tall</div>")
    folder = tmp_path / "pngs"
    folder.mkdir()
    output = export(ws, "png", folder)
    files = sorted(folder.glob("*.png"))
    assert [f.name for f in files] == ["01-cover.png", "02-the-year.png", "03-neighbours.png"]
    for file in files:
        width, height = Image.open(file).size
        assert abs(height / width - 297 / 210) < 0.005, (file.name, width, height)
        assert width >= 1500  # two device pixels per CSS pixel by default
    colours = Image.open(files[0]).convert("RGB").getcolors(1 << 20) or []
    assert len(colours) > 50, "the cover is blank"
    assert "page 2 (pages/02-the-year.html) overflows its content box by" in output


def test_html_export_is_one_file_with_every_page_and_nothing_fetched(tmp_path: Path) -> None:
    ws = seeded(tmp_path / "site")
    (ws / "assets").mkdir(exist_ok=True)
    (ws / "assets" / "dot.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>')
    cover = ws / "pages" / "01-cover.html"
    (ws / ".env").write_text("API_KEY=sk-secret-never-exported")
    cover.write_text(cover.read_text() + '<img src="../assets/dot.svg" alt="dot">'
                     '<img src="assets/missing.png" alt="gone"><img src="/.env" alt="no">')
    out = tmp_path / "doc.html"
    output = export(ws, "html", out)
    text = out.read_text()
    assert "@page { size: 210mm 297mm; margin: 0; }" in text
    frames = [html.unescape(m) for m in re.findall(r'srcdoc="([^"]*)"', text)]
    assert len(frames) == 3
    assert 'src="data:image/svg+xml;base64,' in frames[0]
    assert "src=\"../assets" not in frames[0]
    assert "sk-secret" not in text and "QVBJX0tFWT1zay1zZWNyZXQ" not in text  # .env: never read
    assert "assets/missing.png is referred to by the document but does not exist" in output
    # the Chinese page carries the font slices it needs, and only that page
    assert "Pneuma Noto Sans SC" in frames[2] and "data:font/woff2;base64," in frames[2]
    assert "data:font/woff2;base64," not in frames[1]
    assert 'sandbox="allow-same-origin"' in text and "allow-scripts" not in text


def test_a_bad_print_json_is_a_clear_error_not_a_crash(tmp_path: Path) -> None:
    ws = seeded(tmp_path / "broken")
    (ws / "print.json").write_text('{"paper": "A3", "pages": []}')
    result = CliRunner().invoke(cli, ["export", "-w", str(ws), "--mode", "print", "--format", "html",
                                      "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 1
    assert 'unknown "paper" "A3"; use one of A4, Letter, Legal, A5, B5' in result.output
    assert "Traceback" not in result.output
