"""The shell's Export menu lists what the served mode's exporter offers
(`register_exporters`) and each entry downloads the export, which is also
kept under the workspace's exports/."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.browser.export_menu import download_export, open_export_menu

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                reason="needs Debian's chromium")


def test_the_doc_menu_offers_pdf_and_html_and_downloads_the_html(pneuma_server, open_page, shot):
    server = pneuma_server("doc", backend="none")
    page = open_page(server)
    assert open_export_menu(page) == ["pdf", "html", "html-raw"]
    page.keyboard.press("Escape")  # closes, as a press outside does
    page.wait_for_selector(".export-menu .menu-pop", state="detached")
    assert open_export_menu(page) == ["pdf", "html", "html-raw"]
    labels = page.inner_text(".export-menu .menu-pop")
    assert "PDF (print-styled, with contents)" in labels
    shot(page, "export-menu-doc")
    download = download_export(page, "html", timeout=60_000)
    assert download.suggested_filename.endswith(".html")
    text = Path(download.path()).read_text(encoding="utf-8")
    assert "<nav class=\"toc\"" in text and "Welcome to your document workspace" in text
    page.wait_for_selector(".export-note.ok")
    assert "exports/" in page.inner_text(".export-note")
    saved = list((server.workspace / "exports").glob("*.html"))
    assert len(saved) == 1 and saved[0].read_text(encoding="utf-8") == text


def test_the_slide_menu_zips_the_png_per_slide_and_says_in_chinese(pneuma_server, open_page, shot):
    server = pneuma_server("slide", backend="none")
    page = open_page(server, locale="zh-CN")
    assert open_export_menu(page) == ["pdf", "html", "png", "pptx"]
    assert "PowerPoint（文字可编辑）" in page.inner_text(".export-menu .menu-pop")
    download = download_export(page, "png")
    assert download.suggested_filename.endswith("-png.zip")
    with zipfile.ZipFile(download.path()) as archive:
        names = archive.namelist()
    assert len(names) == 8 and names[0] == "01-title.png"
    page.wait_for_selector(".export-note.ok")
    assert "已下载" in page.inner_text(".export-note")
    shot(page, "export-menu-slide-zh")


def test_the_menu_names_a_slide_left_out_of_the_png_export(pneuma_server, open_page, tmp_path):
    """A slide whose script never ends: the others are downloaded, and the
    note names the one left out instead of saying the export failed."""
    import json

    from pneuma.host.registry import get_mode
    from pneuma.workspace.params import init_workspace

    workspace = tmp_path / "deck"
    init_workspace(get_mode("slide"), workspace)
    manifest = json.loads((workspace / "manifest.json").read_text())
    looping = workspace / manifest["slides"][1]["file"]
    looping.write_text(looping.read_text() + "<script>while (true) {}</script>")
    server = pneuma_server("slide", backend="none", workspace=workspace,
                           env={"PNEUMA_EXPORT_PAGE_TIMEOUT": "3"})
    page = open_page(server)
    open_export_menu(page)
    with zipfile.ZipFile(download_export(page, "png").path()) as archive:
        assert len(archive.namelist()) == 7
    page.wait_for_selector(".export-note.warn")
    note = page.inner_text(".export-note")
    assert "Left out:" in note and "slide 2 (slides/02-problem.html)" in note
    assert "did not finish within 3 s" in note
