"""The {{ cookiecutter.name }} mode for Pneuma: manifest, skill, seed files, viewer and tools.

Pneuma finds this module through the entry point in pyproject.toml and calls
``register_modes`` once per process to learn which modes it provides.
Everything it needs of Pneuma comes from ``pneuma.api``, the one module
whose names Pneuma promises to keep (see Pneuma's docs/api.md).
"""

from __future__ import annotations

from pathlib import Path

from pneuma.api import ModeSource, hookimpl

PACKAGE_DIR = Path(__file__).resolve().parent


@hookimpl
def register_modes() -> list[ModeSource]:
    # Relative paths in the manifest (skill/, seeds/, static/) are resolved
    # against package_dir.
    return [ModeSource(manifest=PACKAGE_DIR / "manifest.json", package_dir=PACKAGE_DIR)]
