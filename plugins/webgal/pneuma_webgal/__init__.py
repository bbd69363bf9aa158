"""The webgal mode for Pneuma: manifest, skill, seed files, viewer and the
preview routes (the real WebGAL engine at /webgal/, the editor-sync socket)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pneuma.api import ModeSource, hookimpl

if TYPE_CHECKING:
    from aiohttp import web

    from pneuma.api import Pneuma

PACKAGE_DIR = Path(__file__).resolve().parent


@hookimpl
def register_modes() -> list[ModeSource]:
    return [ModeSource(manifest=PACKAGE_DIR / "manifest.json", package_dir=PACKAGE_DIR)]


@hookimpl
def register_routes(pneuma: Pneuma) -> list[web.RouteDef]:
    # Imported here: the routes (aiohttp, the sync hub) are needed only by a
    # server serving this mode, not by every command that lists the modes.
    from .routes import routes

    return routes(pneuma)
