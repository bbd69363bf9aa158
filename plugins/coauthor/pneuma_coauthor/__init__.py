"""The coauthor mode for Pneuma: manifest, skill, seed files, and the CoAuthor
runtime (billboard, agent workflow, REPL and `pneuma coauthor` subcommands)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pneuma import hookimpl
from pneuma.modes import ModeSource

if TYPE_CHECKING:
    import click

PACKAGE_DIR = Path(__file__).resolve().parent


@hookimpl
def register_modes() -> list[ModeSource]:
    return [ModeSource(manifest=PACKAGE_DIR / "manifest.json", package_dir=PACKAGE_DIR)]


@hookimpl
def register_commands(cli: click.Group) -> None:
    from pneuma_coauthor.cli import coauthor

    cli.add_command(coauthor)
