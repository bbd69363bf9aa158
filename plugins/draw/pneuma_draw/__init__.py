"""The draw mode for Pneuma: manifest, skill, seed files and viewer."""

from __future__ import annotations

from pathlib import Path

from pneuma.api import ModeSource, hookimpl

PACKAGE_DIR = Path(__file__).resolve().parent


@hookimpl
def register_modes() -> list[ModeSource]:
    return [ModeSource(manifest=PACKAGE_DIR / "manifest.json", package_dir=PACKAGE_DIR)]
