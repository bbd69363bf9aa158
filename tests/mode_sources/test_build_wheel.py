"""`pneuma.api.build_mode_wheel`: the wheel of a mode package folder (the
mode-maker's "Package"), built offline with what is installed."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from pneuma.api import ToolError, build_mode_wheel
from pneuma.mode_sources.wheel_metadata import read_wheel
from tests.mode_sources.mode_env import new_mode


def test_a_mode_folder_becomes_a_wheel_holding_its_viewer_and_manifest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_NO_BUILD_ISOLATION", "0")  # pip's way of saying: build with what is here
    folder = new_mode("packed", tmp_path / "src")
    lines: list[str] = []
    wheel = build_mode_wheel(folder, tmp_path / "dist", progress=lines.append)
    assert wheel.parent == tmp_path / "dist" and wheel.name.startswith("pneuma_packed-0.1.0-")
    facts = read_wheel(wheel)
    assert (facts.distribution, facts.entry_points) == ("pneuma-packed", ("packed",))
    names = zipfile.ZipFile(wheel).namelist()
    assert {"pneuma_packed/manifest.json", "pneuma_packed/static/viewer.js"} <= set(names)
    assert any(line.startswith("building:") for line in lines)

    with pytest.raises(ToolError) as caught:
        build_mode_wheel(tmp_path / "src", tmp_path / "dist")
    assert caught.value.code == "E_NOT_FOUND" and "no pyproject.toml" in caught.value.message
