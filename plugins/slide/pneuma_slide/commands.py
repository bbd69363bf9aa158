"""``pneuma export``: the slide deck as one HTML file or a PDF."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


def _workspace_mode(workspace: Path) -> str | None:
    try:
        return json.loads((workspace / ".pneuma" / "session.json").read_text("utf-8")).get("mode")
    except (OSError, ValueError, AttributeError):
        return None


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

    mode_name = mode_name or _workspace_mode(workspace) or "slide"
    if mode_name != "slide":
        click.echo(f"Error: pneuma export supports --mode slide only (got {mode_name!r})",
                   err=True)
        sys.exit(2)
    if not workspace.is_dir():
        click.echo(f"Error: {workspace} is not a directory", err=True)
        sys.exit(2)
    try:
        result = export_deck(workspace, fmt, output)
    except ExportError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    for rel in result.missing_assets:
        click.echo(f"[pneuma] warning: {rel} is referenced by a slide but does not exist",
                   err=True)
    click.echo(f"[pneuma] exported {result.slides} slide(s) to {result.path}", err=True)
    click.echo(str(result.path))
