"""A slide or page whose script never ends, or a diagram too big to draw,
leaves out that one item: the others are exported, the result names what was
left out (``pneuma export``'s ``[pneuma] left out:`` lines, the Export menu's
``X-Pneuma-Export-Left-Out``), each within its own time budget, and a
timeout is ``E_TIMEOUT`` naming the item — never "Chromium failed"."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from pneuma.host.registry import get_mode
from pneuma.workspace.params import init_workspace

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")
PNEUMA = shutil.which("pneuma", path=str(Path(sys.executable).parent))
LOOP = "<script>while (true) {}</script>"
PAGE_BUDGET_S = 3  # PNEUMA_EXPORT_PAGE_TIMEOUT for these tests: short, so they stay quick


def _export(*args: str, budget_s: float = PAGE_BUDGET_S,
            ) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**_env(), "PNEUMA_EXPORT_PAGE_TIMEOUT": str(budget_s)}
    started = time.monotonic()
    proc = subprocess.run([PNEUMA, "export", *args], capture_output=True, text=True, timeout=180,
                          check=False, env=env)
    return proc, time.monotonic() - started


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def _looping_deck(tmp_path: Path, looping: list[int]) -> Path:
    """The seeded deck (8 slides) with a never-ending script in the given slides (1-based)."""
    workspace = tmp_path / "deck"
    init_workspace(get_mode("slide"), workspace)
    manifest = json.loads((workspace / "manifest.json").read_text())
    for n in looping:
        slide = workspace / manifest["slides"][n - 1]["file"]
        slide.write_text(slide.read_text() + LOOP)
    return workspace


def test_a_looping_slide_is_left_out_of_the_png_export_and_named(tmp_path: Path) -> None:
    deck = _looping_deck(tmp_path, [2])
    out = tmp_path / "pngs"
    proc, took = _export("--mode", "slide", "-w", str(deck), "--format", "png", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    files = [Path(line) for line in proc.stdout.split()]
    assert len(files) == 7 and "02-problem.png" not in [f.name for f in files]
    assert all(f.is_file() for f in files)
    assert "[pneuma] left out: slide 2 (slides/02-problem.html): left out, it did not finish within 3 s" \
        in proc.stderr
    assert "7 of 8 slide(s), 1 left out" in proc.stderr
    assert "Chromium failed" not in proc.stderr
    assert took < 30, took


def test_a_looping_slide_is_left_out_of_the_pptx_export(tmp_path: Path) -> None:
    from pptx import Presentation

    deck = _looping_deck(tmp_path, [3])
    # A PPTX slide is measured and shot at 2x: on a busy machine a good one
    # can take a few seconds, and must not be left out with the looping one.
    proc, _took = _export("--mode", "slide", "-w", str(deck), "--format", "pptx", budget_s=8)
    assert proc.returncode == 0, proc.stderr
    presentation = Presentation(proc.stdout.strip())
    assert len(presentation.slides) == 7
    assert "left out: slide 3 (slides/03-point.html)" in proc.stderr


def test_a_deck_where_every_slide_loops_is_e_timeout_naming_the_slides(tmp_path: Path) -> None:
    workspace = tmp_path / "deck"
    init_workspace(get_mode("slide"), workspace)
    manifest = json.loads((workspace / "manifest.json").read_text())
    manifest["slides"] = manifest["slides"][:1]
    (workspace / "manifest.json").write_text(json.dumps(manifest))
    deck = _looping_deck_from(workspace, manifest)
    proc, _took = _export("--mode", "slide", "-w", str(deck), "--format", "png")
    assert proc.returncode == 1
    assert proc.stderr.startswith("pneuma: error: nothing exported: slide 1 (slides/01-title.html): "
                                  "left out, it did not finish within 3 s"), proc.stderr
    assert "Chromium failed" not in proc.stderr and proc.stderr.count("\n") == 1


def _looping_deck_from(workspace: Path, manifest: dict) -> Path:
    for slide in manifest["slides"]:
        path = workspace / slide["file"]
        path.write_text(path.read_text() + LOOP)
    return workspace


async def test_the_export_menu_gets_the_rest_and_the_names_of_what_was_left_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pneuma.testing import serve

    monkeypatch.setenv("PNEUMA_EXPORT_PAGE_TIMEOUT", str(PAGE_BUDGET_S))
    deck = _looping_deck(tmp_path, [4])
    async with serve("slide", deck, backend="none", watch=False) as server:
        response = await server.get("/api/export/png")
        assert response.status == 200, await response.text()
        left_out = json.loads(unquote(response.headers["X-Pneuma-Export-Left-Out"]))
        await response.read()
    assert len(left_out) == 1 and left_out[0].startswith("slide 4 (slides/04-")


def test_a_looping_page_is_left_out_of_the_webcraft_screenshots(tmp_path: Path) -> None:
    workspace = tmp_path / "site"
    init_workspace(get_mode("webcraft"), workspace)
    (workspace / "loop.html").write_text(f"<!doctype html><title>loop</title><p>never</p>{LOOP}")
    out = tmp_path / "shots"
    proc, took = _export("--mode", "webcraft", "-w", str(workspace), "--format", "png", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    names = [Path(line).name for line in proc.stdout.split()]
    assert names and not [n for n in names if n.startswith("loop-")]
    assert any(n.startswith("index-") for n in names)
    assert proc.stderr.count("[pneuma] left out: loop.html at ") == 3, proc.stderr
    assert took < 60, took


# --- item 10: a document's raw HTML is shown as text, as the viewer shows it ---

SCRIPTED = ("# Notes\n\nBefore.\n\n<script>document.title = 'ran'; fetch('https://example.invalid/x')</script>\n\n"
            "<img src=x onerror=\"document.title='ran'\">\n\nAfter.\n")


@pytest.fixture
def scripted_docs(tmp_path: Path) -> Path:
    workspace = tmp_path / "docs"
    init_workspace(get_mode("doc"), workspace)
    (workspace / "notes.md").write_text(SCRIPTED)
    return workspace


def _title_when_opened(page_file: Path) -> str:
    from playwright.sync_api import sync_playwright

    from pneuma.tools.chromium import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(page_file.as_uri(), wait_until="load")
            return page.title()
        finally:
            browser.close()


def test_the_doc_html_export_shows_a_documents_script_as_text_and_runs_nothing(
        scripted_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "book.html"
    proc, _took = _export("--mode", "doc", "-w", str(scripted_docs), "--format", "html", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    page = out.read_text()
    assert "<script" not in page and "onerror=" not in page.replace("onerror=&quot;", "")
    assert "&lt;script&gt;document.title = 'ran'" in page  # the person still sees what the file holds
    assert _title_when_opened(out) != "ran"


def test_keeping_a_documents_scripts_is_a_choice_by_name(scripted_docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "raw.html"
    proc, _took = _export("--mode", "doc", "-w", str(scripted_docs), "--format", "html-raw", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "<script>document.title = 'ran'" in out.read_text()
    listed = subprocess.run([PNEUMA, "export", "--mode", "doc", "--list"], capture_output=True, text=True,
                            check=True)
    assert "html-raw\tHTML keeping raw HTML and scripts (they run when opened)" in listed.stdout


def test_the_doc_pdf_prints_a_documents_script_as_text(scripted_docs: Path) -> None:
    from pypdf import PdfReader

    proc, _took = _export("--mode", "doc", "-w", str(scripted_docs), "--format", "pdf")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(page.extract_text() for page in PdfReader(proc.stdout.strip()).pages)
    assert "<script>document.title" in text


# --- diagrams: one too big to draw is left out, in plain words ---


def heavy_flowchart(nodes: int = 4000) -> str:
    """A flowchart under both of mermaid's limits (no arrows, about 31,000
    characters) that takes it far longer than the tests' page budget to lay
    out: 4,000 nodes took 45 s on the CI machine."""
    return "flowchart TD\n" + "\n".join(f"  n{i}" for i in range(nodes)) + "\n"


def too_many_arrows() -> str:
    return "flowchart TD\n" + "\n".join(f"  a{i} --> a{i + 1}" for i in range(600)) + "\n"


def too_much_text() -> str:
    return "flowchart TD\n" + "\n".join(f'  n{i}["{"x" * 80}"]' for i in range(800)) + "\n"


@pytest.fixture
def diagrams(tmp_path: Path) -> Path:
    workspace = tmp_path / "diagrams"
    init_workspace(get_mode("diagram"), workspace)
    (workspace / "heavy.mmd").write_text(heavy_flowchart())
    (workspace / "arrows.mmd").write_text(too_many_arrows())
    (workspace / "text.mmd").write_text(too_much_text())
    (workspace / "small.mmd").write_text("flowchart LR\n  A --> B\n")
    return workspace


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_a_diagram_too_big_to_draw_is_left_out_and_the_others_exported(
        diagrams: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "out"
    proc, took = _export("--mode", "diagram", "-w", str(diagrams), "--format", fmt, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    names = sorted(Path(line).name for line in proc.stdout.split())
    assert f"small.{fmt}" in names and not {f"heavy.{fmt}", f"arrows.{fmt}", f"text.{fmt}"} & set(names)
    assert ("[pneuma] left out: arrows.mmd: left out, it has more than 500 arrows, the most mermaid "
            "draws in one diagram; split it into smaller diagrams") in proc.stderr
    assert ("[pneuma] left out: text.mmd: left out, it is longer than 50,000 characters") in proc.stderr
    assert "[pneuma] left out: heavy.mmd: left out, it did not finish within 3 s" in proc.stderr
    assert "mermaid.initialize" not in proc.stderr and "Traceback" not in proc.stderr
    assert took < 60, took


async def test_the_diagram_export_menu_names_what_was_left_out(
        diagrams: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pneuma.testing import serve

    monkeypatch.setenv("PNEUMA_EXPORT_PAGE_TIMEOUT", str(PAGE_BUDGET_S))
    async with serve("diagram", diagrams, backend="none", watch=False) as server:
        response = await server.get("/api/export/svg")
        assert response.status == 200, await response.text()
        left_out = json.loads(unquote(response.headers["X-Pneuma-Export-Left-Out"]))
        await response.read()
    assert sorted(line.split(":")[0] for line in left_out) == ["arrows.mmd", "heavy.mmd", "text.mmd"]


def test_only_diagrams_over_the_limits_is_one_line_naming_them(tmp_path: Path) -> None:
    workspace = tmp_path / "diagrams"
    init_workspace(get_mode("diagram"), workspace)
    for seeded in workspace.glob("*.mmd"):
        seeded.unlink()
    (workspace / "arrows.mmd").write_text(too_many_arrows())
    proc, _took = _export("--mode", "diagram", "-w", str(workspace), "--format", "svg")
    assert proc.returncode == 1
    assert proc.stderr.startswith("pneuma: error: nothing exported: arrows.mmd: left out, it has more "
                                  "than 500 arrows"), proc.stderr
    assert proc.stderr.count("\n") == 1
