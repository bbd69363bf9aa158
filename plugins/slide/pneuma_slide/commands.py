"""``pneuma export``: the slide deck as one HTML file or a PDF."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click


def _workspace_mode(workspace: Path) -> str | None:
    try:
        return json.loads((workspace / ".pneuma" / "session.json").read_text("utf-8")).get("mode")
    except (OSError, ValueError, AttributeError):
        return None


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"pneuma: error: {message}", err=True)
    sys.exit(code)


def _not_slide_message(workspace: Path, mode_name: str, asked: bool) -> str:
    """Why there is nothing to export, and what to do instead."""
    if asked:
        return f"pneuma export supports --mode slide only (got {mode_name!r})"
    if (workspace / "manifest.json").is_file():
        # A deck that `pneuma run --switch-mode` last ran with another mode:
        # its slides are still there, only the mode recorded is not slide.
        return (f"{workspace} is switched to the {mode_name} mode; switch it back with "
                f"`pneuma run --mode slide --switch-mode -w {workspace}`, or export its "
                f"deck as it is with `pneuma export --mode slide`")
    return f"{workspace} is a {mode_name} workspace; pneuma export exports slide decks only"


@click.command("export")
@click.option("--mode", "mode_name", default=None,
              help="Mode of the workspace (default: the one it was last run with). "
                   "Supported: slide.")
@click.option("--workspace", "-w", type=click.Path(file_okay=False, path_type=Path),
              default=Path("."), show_default=True, help="The workspace directory.")
@click.option("--format", "fmt", type=click.Choice(["pdf", "html"]), required=True,
              help="pdf: one page per slide; html: one self-contained file.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write (default: W/exports/<deck-title>.<format>).")
def export_command(mode_name: str | None, workspace: Path, fmt: str, output: Path | None) -> None:
    """Export the workspace's deck as a PDF or a self-contained HTML file."""
    from pneuma_slide.export import ExportError, export_deck

    asked = mode_name is not None
    mode_name = mode_name or _workspace_mode(workspace) or "slide"
    if mode_name != "slide":
        _fail(_not_slide_message(workspace, str(mode_name), asked), 2)
    if not workspace.is_dir():
        _fail(f"{workspace} is not a directory", 2)
    try:
        result = export_deck(workspace, fmt, output)
    except ExportError as exc:
        _fail(str(exc), 1)
    except OSError as exc:  # the output could not be written there
        _fail(f"cannot write {exc.filename or output}: {exc.strerror or exc}", 1)
    for rel in result.missing_assets:
        click.echo(f"[pneuma] warning: {rel} is referenced by a slide but does not exist",
                   err=True)
    click.echo(f"[pneuma] exported {result.slides} slide(s) to {result.path}", err=True)
    click.echo(str(result.path))
