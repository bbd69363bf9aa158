"""The print mode as a package: listed, seeded on the paper asked for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PNEUMA = [sys.executable, "-m", "pneuma"]


def _init(workspace: Path, *params: str) -> dict[str, object]:
    args = [a for p in params for a in ("--param", p)]
    subprocess.run([*PNEUMA, "init", "--mode", "print", "-w", str(workspace), "--no-prompt", *args],
                   check=True, capture_output=True, timeout=60)
    data: dict[str, object] = json.loads((workspace / "print.json").read_text("utf-8"))
    return data


def test_print_is_listed_among_the_modes() -> None:
    out = subprocess.run([*PNEUMA, "modes"], check=True, capture_output=True, text=True, timeout=60).stdout
    line = next(line for line in out.splitlines() if line.startswith("print "))
    assert "pneuma-print" in line and "manifest" in line


def test_a_fresh_folder_gets_an_a4_portrait_document_with_every_page(tmp_path: Path) -> None:
    doc = _init(tmp_path / "w")
    assert (doc["paper"], doc["orientation"]) == ("A4", "portrait")
    pages = doc["pages"]
    assert isinstance(pages, list) and len(pages) == 3
    for page in pages:
        text = (tmp_path / "w" / page["file"]).read_text("utf-8")
        assert "<html" not in text and text.strip()
    assert "河畔共享花园" in (tmp_path / "w" / pages[2]["file"]).read_text("utf-8")


def test_paper_and_orientation_params_are_written_into_print_json(tmp_path: Path) -> None:
    doc = _init(tmp_path / "w", "paper=Letter", "orientation=landscape")
    assert (doc["paper"], doc["orientation"]) == ("Letter", "landscape")
