"""The illustrate mode's exports: the chosen images as a ZIP (read back with
zipfile and PIL), and the contact sheet as a PDF (read back with pypdf)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from PIL import Image
from pneuma_illustrate.export import EXPORTER
from pypdf import PdfReader

from pneuma.api import ExportError
from pneuma.testing import make_workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace("illustrate", tmp_path / "ws")


def choose(root: Path, choices: dict[str, dict[str, object]]) -> None:
    (root / "choices.json").write_text(json.dumps(choices), encoding="utf-8")


def test_the_zip_holds_the_picked_images_and_their_records(workspace: Path, tmp_path: Path) -> None:
    choose(workspace, {"lighthouse-2": {"status": "picked", "starred": False, "comment": ""},
                       "fox-1": {"status": "picked", "starred": True, "comment": "this one"},
                       "fox-2": {"status": None, "starred": True, "comment": ""},
                       "lighthouse-1": {"status": "rejected", "starred": False, "comment": ""}})
    result = EXPORTER.run(workspace, "zip", tmp_path / "chosen.zip")
    with zipfile.ZipFile(result.files[0]) as archive:
        assert archive.namelist() == ["lighthouse-2.png", "lighthouse-2.json", "fox-1.png", "fox-1.json"]
        assert archive.read("fox-1.png") == (workspace / "images/fox-1.png").read_bytes()
        Image.open(io.BytesIO(archive.read("lighthouse-2.png"))).verify()
        assert json.loads(archive.read("fox-1.json"))["prompt"].startswith("A fox reading a book")
    assert result.summary.startswith("2 picked images")


def test_without_a_pick_the_starred_are_exported_and_the_summary_says_so(workspace: Path, tmp_path: Path) -> None:
    choose(workspace, {"fox-2": {"status": None, "starred": True, "comment": ""},
                       "lighthouse-3": {"status": "rejected", "starred": True, "comment": ""}})
    result = EXPORTER.run(workspace, "zip", tmp_path / "chosen.zip")
    with zipfile.ZipFile(result.files[0]) as archive:
        assert archive.namelist() == ["fox-2.png", "fox-2.json"]
    assert "starred (none is picked)" in result.summary


def test_nothing_chosen_is_a_clear_error_and_no_file(workspace: Path, tmp_path: Path) -> None:
    choose(workspace, {})
    with pytest.raises(ExportError) as refused:
        EXPORTER.run(workspace, "zip", tmp_path / "chosen.zip")
    assert "picked or starred" in str(refused.value)
    assert list(tmp_path.glob("chosen.zip*")) == []


def test_the_contact_sheet_shows_every_row_prompt_and_mark(workspace: Path, tmp_path: Path) -> None:
    board = json.loads((workspace / "board.json").read_text())
    board["rows"][1]["prompt"] = "一只在树下读书的狐狸 (a fox reading under a tree)"
    (workspace / "board.json").write_text(json.dumps(board, ensure_ascii=False))
    (workspace / "images/lighthouse-3.png").write_text("<html>not a picture</html>", encoding="utf-8")
    choose(workspace, {"fox-1": {"status": "picked", "starred": True, "comment": "warmer light please"},
                       "lighthouse-1": {"status": "rejected", "starred": False, "comment": "天空太暗了"}})
    result = EXPORTER.run(workspace, "contact-sheet", tmp_path / "sheet.pdf")
    reader = PdfReader(result.files[0])
    text = " ".join(" ".join((page.extract_text() or "").split()) for page in reader.pages)
    assert round(reader.pages[0].mediabox.width) == 595  # A4
    for expected in ("Lighthouse at dusk", "A lighthouse on a rocky coast at dusk", "Reading fox",
                     "fox-1", "Picked", "Starred", "Rejected", "warmer light please"):
        assert expected in text, expected
    # pypdf puts a space between CJK glyphs; they are there, in the embedded Noto slice
    assert "一只在树下读书的狐狸" in "".join(text.split())
    # a comment (set in italics) in Chinese too: drawn glyphs, not empty boxes
    assert "天空太暗了" in "".join(text.split())
    # a file that is not a picture is a note in its place, named in the warnings
    assert "is not a PNG, JPEG or WebP image" in text
    assert result.warnings == ["lighthouse-3: images/lighthouse-3.png is not a PNG, JPEG or WebP image"]
    assert sum(len(page.images) for page in reader.pages) == 4
    assert result.summary == "2 rows, 5 images"


def test_a_broken_board_is_named_not_a_crash(workspace: Path, tmp_path: Path) -> None:
    (workspace / "board.json").write_text('{"rows": [{"title": "no id"}]}')
    with pytest.raises(ExportError) as refused:
        EXPORTER.run(workspace, "contact-sheet", tmp_path / "sheet.pdf")
    assert "row 1 has no id" in str(refused.value)


def test_a_chosen_file_that_is_not_an_image_is_left_out_and_named(workspace: Path, tmp_path: Path) -> None:
    (workspace / "images/fox-2.png").write_text("<html>not a picture</html>", encoding="utf-8")
    choose(workspace, {"fox-1": {"status": "picked", "starred": False, "comment": ""},
                       "fox-2": {"status": "picked", "starred": False, "comment": ""}})
    result = EXPORTER.run(workspace, "zip", tmp_path / "chosen.zip")
    with zipfile.ZipFile(result.files[0]) as archive:
        assert archive.namelist() == ["fox-1.png", "fox-1.json"]
    assert result.warnings == ["fox-2: images/fox-2.png is not a PNG, JPEG or WebP image; left out"]
    assert result.summary.startswith("1 picked image ")
    # when no chosen file is a picture, there is nothing to export: said, and no file
    choose(workspace, {"fox-2": {"status": "picked", "starred": False, "comment": ""}})
    with pytest.raises(ExportError) as refused:
        EXPORTER.run(workspace, "zip", tmp_path / "none.zip")
    assert "fox-2" in str(refused.value) and not (tmp_path / "none.zip").exists()
