"""pneuma.api.generate_mode_package: the mode-maker's workspace is a mode
package, made from the template or forked from an installed mode, and
nothing the folder already held is overwritten."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from pneuma.api import ToolError, generate_mode_package


def test_the_template_package_lands_at_the_top_of_the_folder(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("mine\n")
    (tmp_path / ".gitignore").write_text(".env\n")
    made = generate_mode_package(tmp_path, "lab-notes")
    project = tomllib.loads((tmp_path / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["pneuma"] == {"lab-notes": "pneuma_lab_notes"}
    assert json.loads((tmp_path / "pneuma_lab_notes/manifest.json").read_text())["name"] == "lab-notes"
    assert (tmp_path / "pneuma_lab_notes/static/viewer.js").is_file()
    assert (tmp_path / "README.md").read_text() == "mine\n"
    assert made.skipped == ["README.md"] and "pneuma_lab_notes/__init__.py" in made.written
    assert (tmp_path / ".gitignore").read_text().splitlines()[:2] == [".env", "__pycache__/"]


def test_a_fork_copies_the_installed_mode_renamed(tmp_path: Path) -> None:
    generate_mode_package(tmp_path, "charts", fork_from="diagram")
    manifest = json.loads((tmp_path / "pneuma_charts/manifest.json").read_text())
    assert manifest["name"] == "charts"
    assert manifest["skill"]["installName"] == "pneuma-charts"
    assert "pneuma_charts.tools:validate_diagram" in (tmp_path / "pneuma_charts/manifest.json").read_text()
    assert (tmp_path / "pneuma_charts/seeds/architecture.mmd").is_file()
    assert "pneuma_diagram" not in (tmp_path / "pneuma_charts/checks.py").read_text()


@pytest.mark.parametrize(("name", "fork", "said"), [
    ("Bad Name", None, "not a valid mode name"),
    ("charts", "no-such-mode", "cannot fork mode 'no-such-mode'"),
])
def test_a_bad_name_or_fork_is_one_clear_error_and_writes_nothing(
        tmp_path: Path, name: str, fork: str | None, said: str) -> None:
    with pytest.raises(ToolError) as caught:
        generate_mode_package(tmp_path / "ws", name, fork_from=fork)
    assert caught.value.code == "E_BAD_ARGS" and said in caught.value.message
    assert not (tmp_path / "ws").exists()


def test_the_mode_maker_writes_no_package_among_the_persons_own_files(tmp_path: Path) -> None:
    from pneuma_mode_maker.package import ensure_package

    (tmp_path / "notes.md").write_text("mine\n")
    with pytest.raises(ToolError) as caught:
        ensure_package(tmp_path, {"name": "notes"})
    assert caught.value.code == "E_CONFLICT" and "notes.md" in caught.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]
    (tmp_path / "notes.md").unlink()
    (tmp_path / "CLAUDE.md").write_text("the agent's\n")
    assert "pyproject.toml" in ensure_package(tmp_path, {"name": "notes"})
    assert ensure_package(tmp_path, {"name": "other"}) == []  # a package already: nothing more
