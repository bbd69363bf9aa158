"""The webgal mode for Pneuma: manifest, skill, seed files, viewer and the
preview routes (the real WebGAL engine at /webgal/, the editor-sync socket)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pneuma import hookimpl
from pneuma.host.modes import ModeSource

if TYPE_CHECKING:
    from aiohttp import web

    from pneuma.host.modes import LoadedMode

PACKAGE_DIR = Path(__file__).resolve().parent


@hookimpl
def register_modes() -> list[ModeSource]:
    return [ModeSource(manifest=PACKAGE_DIR / "manifest.json", package_dir=PACKAGE_DIR)]


@hookimpl
def register_routes(pneuma):  # INTERIM
    from pneuma_webgal.routes import register

    register(pneuma._app)
    return []
