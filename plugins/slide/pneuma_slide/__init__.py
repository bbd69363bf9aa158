"""The slide mode for Pneuma: manifest, skill, seed files, viewer and export."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pneuma.api import ModeSource, hookimpl

if TYPE_CHECKING:
    import click
    from aiohttp import web

    from pneuma.api import Pneuma

PACKAGE_DIR = Path(__file__).resolve().parent


@hookimpl
def register_modes() -> list[ModeSource]:
    return [ModeSource(manifest=PACKAGE_DIR / "manifest.json", package_dir=PACKAGE_DIR)]


@hookimpl
def register_commands(cli: click.Group) -> None:
    from pneuma_slide.commands import export_command

    cli.add_command(export_command)


@hookimpl
def register_routes(pneuma: Pneuma) -> list[web.RouteDef]:
    from aiohttp import web

    from pneuma_slide.routes import export_route

    return [web.get("/api/slide/export", export_route)]
