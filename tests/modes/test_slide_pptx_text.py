"""The PPTX export keeps a slide's text as text (issue 25, item 13): headings,
paragraphs and lists are text boxes that can be edited in PowerPoint and
LibreOffice, placed, sized, coloured and set in the font Chromium drew them
with; the slide's picture behind them, at twice the slide's size, carries
only what could not be mapped, so no line is drawn twice."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pneuma.host.registry import get_mode
from pneuma.workspace.params import init_workspace

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")
PNEUMA = shutil.which("pneuma", path=str(Path(sys.executable).parent))
SOFFICE = shutil.which("soffice")
PDFTOTEXT = shutil.which("pdftotext")

THEME = """
html, body { margin: 0; width: 1280px; height: 720px; overflow: hidden; background: #f7f5f0; }
body { font-family: "Liberation Sans", Arial, sans-serif; font-size: 24px; line-height: 1.4;
       color: #2b2a36; }
.slide { box-sizing: border-box; width: 1280px; height: 720px; padding: 64px 88px; }
h1 { margin: 0 0 24px; font-size: 56px; line-height: 1.1; color: #5b3df5; font-weight: 700; }
p { margin: 0 0 16px; }
ul, ol { margin: 0; }
.turned { transform: rotate(-8deg); width: 400px; margin-top: 40px; color: #0d9488; }
.card { background: #ffffff; border: 4px solid #17161f; padding: 20px; width: 560px; }
"""

SLIDES = {
    "slides/01-title.html": """<section class="slide">
  <h1>Quarterly review</h1>
  <p>Revenue grew <strong>twelve percent</strong> and costs held <em>steady</em> all year.</p>
  <ul>
    <li>North region ahead</li>
    <li>South region level
      <ul><li>Two new shops</li></ul>
    </li>
    <li>West region behind</li>
  </ul>
  <p class="turned">Drawn askew, kept as a picture</p>
</section>""",
    "slides/02-plan.html": """<section class="slide">
  <h1>Plan for next year</h1>
  <ol><li>Hire two engineers</li><li>Open the Lisbon office</li></ol>
  <div class="card"><p>Inside a bordered card</p></div>
  <p>Water is H<sub>2</sub>O and the area r<sup>2</sup></p>
</section>""",
}


@pytest.fixture
def deck(tmp_path: Path) -> Path:
    workspace = tmp_path / "deck"
    init_workspace(get_mode("slide"), workspace)
    (workspace / "theme.css").write_text(THEME)
    for name, html in SLIDES.items():
        (workspace / name).write_text(html)
    manifest = {"title": "Review", "slides": [{"file": name, "title": Path(name).stem} for name in SLIDES]}
    (workspace / "manifest.json").write_text(json.dumps(manifest))
    return workspace


def export(deck: Path, fmt: str, out: Path) -> Path:
    proc = subprocess.run([PNEUMA, "export", "--mode", "slide", "-w", str(deck), "--format", fmt,
                           "-o", str(out)], capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr
    return out


def text_frames(slide: Any) -> dict[str, Any]:
    return {shape.text_frame.text: shape for shape in slide.shapes if shape.has_text_frame}


def run_styles(paragraph: Any) -> list[tuple[str, float, bool, bool, str]]:
    return [(run.text, run.font.size.pt, bool(run.font.bold), bool(run.font.italic), str(run.font.color.rgb))
            for run in paragraph.runs]


def test_headings_paragraphs_and_lists_are_text_boxes_with_their_font_and_colour(deck: Path,
                                                                                 tmp_path: Path) -> None:
    from PIL import Image
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    presentation = Presentation(str(export(deck, "pptx", tmp_path / "review.pptx")))
    first, second = presentation.slides
    frames = text_frames(first)

    heading = frames["Quarterly review"]
    # Where Chromium drew it: the slide's padding, in EMU (9525 a CSS px).
    assert (heading.left, heading.top) == (88 * 9525, 64 * 9525)
    assert run_styles(heading.text_frame.paragraphs[0]) == [("Quarterly review", 42.0, True, False, "5B3DF5")]

    lead = frames["Revenue grew twelve percent and costs held steady all year."]
    assert run_styles(lead.text_frame.paragraphs[0]) == [
        ("Revenue grew ", 18.0, False, False, "2B2A36"), ("twelve percent", 18.0, True, False, "2B2A36"),
        (" and costs held ", 18.0, False, False, "2B2A36"), ("steady", 18.0, False, True, "2B2A36"),
        (" all year.", 18.0, False, False, "2B2A36")]
    assert lead.text_frame.paragraphs[0].runs[0].font.name == "Liberation Sans"

    # A list is one text box: a paragraph per item, nested items a level down, with their bullets.
    items = frames["North region ahead\nSouth region level\nTwo new shops\nWest region behind"]
    paragraphs = items.text_frame.paragraphs
    assert [p.level for p in paragraphs] == [0, 0, 1, 0]
    assert [p._p.pPr.find(qn("a:buChar")).get("char") for p in paragraphs] == ["•", "•", "◦", "•"]
    numbered = text_frames(second)["Hire two engineers\nOpen the Lisbon office"].text_frame.paragraphs
    assert [p._p.pPr.find(qn("a:buAutoNum")).get("type") for p in numbered] == ["arabicPeriod"] * 2

    # Raised and lowered text keeps its place in the line.
    water = text_frames(second)["Water is H2O and the area r2"].text_frame.paragraphs[0].runs
    assert [(run.text, run._r.rPr.get("baseline")) for run in water] == [
        ("Water is H", None), ("2", "-25000"), ("O and the area r", None), ("2", "30000")]

    # The rotated line cannot be a text box: it stays in the picture (and in the notes).
    assert not any("askew" in text for text in frames)
    assert "Drawn askew, kept as a picture" in first.notes_slide.notes_text_frame.text

    # The picture is at twice the slide's size and does not draw the mapped text again:
    # under the heading it is the bare background; the rotated line is in it.
    pictures = [s for s in first.shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE]
    assert len(pictures) == 1 and pictures[0].width == presentation.slide_width
    picture = Image.open(io.BytesIO(pictures[0].image.blob)).convert("RGB")
    assert picture.size == (2560, 1440)
    under_heading = picture.crop((88 * 2, 64 * 2, 500 * 2, 124 * 2))
    assert under_heading.getcolors() == [(under_heading.width * under_heading.height, (0xF7, 0xF5, 0xF0))]
    askew = picture.crop((80 * 2, 300 * 2, 600 * 2, 520 * 2))
    assert any(colour != (0xF7, 0xF5, 0xF0) for _count, colour in askew.getcolors(1 << 20))
    # The card's border stays in the picture though its text is a text box.
    card = text_frames(second)["Inside a bordered card"]
    card_picture = Image.open(io.BytesIO(
        next(s for s in second.shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE).image.blob)).convert("RGB")
    border_y = (card.top // 9525 - 20 - 2) * 2  # 20 px padding, 4 px border: its middle
    assert card_picture.getpixel((card.left // 9525 * 2 + 200, border_y)) == (0x17, 0x16, 0x1F)


def qn(tag: str) -> str:
    from pptx.oxml.ns import qn as namespaced

    return str(namespaced(tag))


def words(pdf: Path) -> list[dict[str, Any]]:
    """Each word poppler finds in ``pdf``: its page (from 1), text and box in points."""
    html = subprocess.run([PDFTOTEXT, "-bbox", str(pdf), "-"], capture_output=True, text=True,
                          timeout=60, check=True).stdout
    found: list[dict[str, Any]] = []
    for number, page in enumerate(html.split("<page ")[1:], start=1):
        for m in re.finditer(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>',
                             page):
            found.append({"page": number, "text": m.group(5), "x": float(m.group(1)), "y": float(m.group(2)),
                          "right": float(m.group(3)), "bottom": float(m.group(4))})
    return found


def find(found: list[dict[str, Any]], page: int, text: str) -> dict[str, Any]:
    hits = [w for w in found if w["page"] == page and w["text"] == text]
    assert len(hits) == 1, (page, text, [w for w in found if w["page"] == page])
    return hits[0]


@pytest.mark.skipif(not (SOFFICE and PDFTOTEXT), reason="needs LibreOffice (soffice) and poppler-utils")
def test_libreoffice_shows_the_text_as_text_where_chromium_drew_it(deck: Path, tmp_path: Path) -> None:
    pptx = export(deck, "pptx", tmp_path / "review.pptx")
    # Chromium's own drawing of the same slides: the deck's PDF, also 960×540 pt a page.
    chromium = words(export(deck, "pdf", tmp_path / "chromium.pdf"))
    profile = tmp_path / "lo-profile"  # a profile of its own: no clash with another soffice
    proc = subprocess.run([SOFFICE, f"-env:UserInstallation={profile.as_uri()}", "--headless",
                           "--convert-to", "pdf", "--outdir", str(tmp_path / "lo"), str(pptx)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    libreoffice = words(tmp_path / "lo" / "review.pdf")

    checked = [(1, "Quarterly"), (1, "review"), (1, "Revenue"), (1, "steady"), (1, "North"), (1, "shops"),
               (1, "West"), (2, "Plan"), (2, "Lisbon"), (2, "bordered")]
    for page, text in checked:
        drawn, shown = find(chromium, page, text), find(libreoffice, page, text)
        # Text on the right slide, as text, within a few points of where Chromium put it
        # (measured: within 1 pt across, 2.5 pt down), as wide (the same font at the same size).
        assert abs(shown["x"] - drawn["x"]) <= 3 and abs(shown["y"] - drawn["y"]) <= 5, (page, text, drawn, shown)
        assert abs((shown["right"] - shown["x"]) - (drawn["right"] - drawn["x"])) <= 1.5, (page, text, drawn, shown)
    # The picture holds no text of its own: LibreOffice finds each word once.
    assert [w["text"] for w in libreoffice if w["page"] == 1].count("Quarterly") == 1
