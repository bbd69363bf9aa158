"""The dashboard's exports, read back with the programs people open them
with: the PNG with PIL (the board's size, its charts' colours), the PDF
with pypdf (one page the board's size, the tile titles as text), the
standalone HTML in Chromium with every request refused (its charts drawn:
SVG marks counted)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pneuma_dashboard.export import EXPORTER, WIDTH_PX, board_job
from pypdf import PdfReader

from pneuma.api import CHROMIUM_ARGS, ExportError, ExportRequest, find_chromium
from pneuma.testing import make_workspace

VEGA_BLUE = (76, 120, 168)  # vega's first category colour (#4c78a8): the bars, the East line
TITLES = ["Sales 2025–2026", "About this board", "Revenue", "Units sold", "Revenue by month",
          "Revenue by product", "All rows"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workspace = make_workspace("dashboard", tmp_path_factory.mktemp("dash") / "ws")
    board_file = workspace / "dashboard.json"
    board = json.loads(board_file.read_text(encoding="utf-8"))
    # one tile that cannot draw, below the others: exported as its error
    board["tiles"].append({"id": "lost", "type": "table", "title": "Lost data", "x": 0, "y": 10, "w": 6, "h": 2,
                           "data": "data/missing.csv"})
    board_file.write_text(json.dumps(board, indent=2), encoding="utf-8")
    return workspace


def _export(workspace: Path, fmt: str, name: str, said: list[str] | None = None):
    output = workspace / "exports" / name
    output.parent.mkdir(exist_ok=True)
    progress = (lambda done, total, what: said.append(what)) if said is not None else None
    return EXPORTER.export(ExportRequest(workspace=workspace, format=fmt, output=output, progress=progress)), output


@pytest.fixture(scope="module")
def exports(workspace: Path) -> dict[str, tuple[Any, Path, list[str]]]:
    """The three formats one after another, as from the Export menu: each
    format's result, file and what its progress said."""
    made = {}
    for fmt in ("png", "pdf", "html"):
        said: list[str] = []
        result, output = _export(workspace, fmt, f"board.{fmt}", said)
        made[fmt] = (result, output, said)
    return made


def test_the_next_formats_of_an_unchanged_board_do_not_draw_it_again(exports: dict[str, Any]) -> None:
    assert exports["png"][2][0] == "drawing the board"
    assert exports["pdf"][2][0] == exports["html"][2][0] == "the board as last drawn"


def test_png_is_the_board_at_its_size_with_its_charts(exports: dict[str, Any]) -> None:
    result, output, _ = exports["png"]
    assert result.files == [output]
    assert result.left_out == ["tile “Lost data” (lost): drawn as its error: data/missing.csv is not in the workspace"]
    image = Image.open(output).convert("RGB")
    assert image.width == WIDTH_PX and 700 < image.height < 1400
    assert result.summary.endswith(f"{image.width}×{image.height} px")
    colours = image.getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 50, "a blank or flat image"
    blue = sum(count for count, rgb in colours if all(abs(a - b) <= 4 for a, b in zip(rgb, VEGA_BLUE, strict=True)))
    assert blue > 5000, "the bar chart's bars are not in the image"


def test_pdf_is_one_page_the_boards_size_with_the_tiles_as_text(exports: dict[str, Any]) -> None:
    _, output, _ = exports["pdf"]
    reader = PdfReader(output)
    assert len(reader.pages) == 1
    box = reader.pages[0].mediabox
    assert float(box.width) == pytest.approx(WIDTH_PX * 0.75, abs=1)  # CSS px → pt
    text = reader.pages[0].extract_text()
    for title in [*TITLES, "$229,320", "17,569"]:
        assert title in text, title


async def _draw_offline(page_file: Path) -> tuple[dict[str, int], list[str]]:
    from playwright.async_api import async_playwright

    refused: list[str] = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context()

            async def refuse(route) -> None:
                refused.append(route.request.url)
                await route.abort()

            await context.route("**/*", refuse)
            page = await context.new_page()
            await page.set_content(page_file.read_text(encoding="utf-8"), wait_until="load")
            await page.wait_for_function(
                "() => document.querySelectorAll('[data-dbx-chart] svg').length === 2", timeout=15_000)
            marks = await page.evaluate("""() => ({
              bars: document.querySelectorAll('[data-dbx-chart] .mark-rect path').length,
              lines: document.querySelectorAll('[data-dbx-chart] .mark-line path').length,
              points: document.querySelectorAll('[data-dbx-chart] .mark-symbol path').length,
              rows: document.querySelectorAll('.db-table tbody tr').length,
            })""")
        finally:
            await browser.close()
    return marks, refused


def test_standalone_html_draws_its_charts_with_every_request_refused(exports: dict[str, Any]) -> None:
    _, output, _ = exports["html"]
    text = output.read_text(encoding="utf-8")
    assert "<svg" not in text.split("<script", 1)[0], "charts must be drawn by the file's own scripts"
    marks, refused = asyncio.run(_draw_offline(output))
    assert refused == []
    # 4 regions × 24 months of points, and the legend's 4 symbols
    assert marks == {"bars": 3, "lines": 4, "points": 4 * 24 + 4, "rows": 100}
    assert "data/missing.csv is not in the workspace" in text


def test_a_board_that_is_not_json_exports_nothing_and_says_where(tmp_path: Path) -> None:
    workspace = make_workspace("dashboard", tmp_path / "ws")
    board_file = workspace / "dashboard.json"
    board_file.write_text("{\n  \"tiles\": [\n", encoding="utf-8")
    with pytest.raises(ExportError, match=r"not valid JSON.*line 3") as broken:
        _export(workspace, "png", "b.png")
    assert broken.value.code == "E_PARSE_FAIL"


def test_a_data_file_over_the_limit_reaches_the_export_as_its_reason(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = make_workspace("dashboard", tmp_path / "ws")
    monkeypatch.setenv("PNEUMA_DASHBOARD_MAX_DATA_MB", "0.01")  # the seed's CSV is ~12 KB
    job = board_job(workspace)
    assert job["files"] == {}
    size = (workspace / "data/sales.csv").stat().st_size / (1024 * 1024)
    assert job["errors"] == {
        "data/sales.csv": f"data/sales.csv is {size:.1f} MB; the dashboard reads data files up to 0.0 MB"}
