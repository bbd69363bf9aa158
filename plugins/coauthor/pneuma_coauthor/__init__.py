"""The coauthor mode for Pneuma: manifest, skill, seed files, the CoAuthor
runtime (billboard, agent workflow, REPL and `pneuma coauthor` subcommands)
and the browser viewer with its /api/coauthor/ routes."""

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
    from pneuma_coauthor.cli import coauthor

    cli.add_command(coauthor)


@hookimpl
def register_routes(pneuma: Pneuma) -> list[web.RouteDef]:
    from pneuma_coauthor.routes import coauthor_routes

    return coauthor_routes(pneuma)
