"""``pneuma mode add|list|remove|update``: modes installed from anywhere with
pip (pneuma/mode_sources; docs/mode-authors.md, "Install from anywhere").

Progress goes to stderr a line per step while pip works; a failure is one
line (``pneuma: error: …``) and exit status 1, with nothing changed.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, NoReturn

import click

from pneuma.cli.mode_check_command import check

if TYPE_CHECKING:
    from pneuma.core.errors import ToolError
    from pneuma.mode_sources import InstalledMode

_MAX_PROGRESS = 160


@click.group("mode")
def mode() -> None:
    """Install, list, update, remove (and check) modes."""


def _progress(line: str) -> None:
    shown = line if len(line) <= _MAX_PROGRESS else line[:_MAX_PROGRESS - 1] + "…"
    click.echo(f"[pneuma] {shown}", err=True)


def _refuse(exc: ToolError, as_json: bool = False) -> NoReturn:
    if as_json:
        click.echo(json.dumps(exc.to_dict(), indent=2, ensure_ascii=False))
    click.echo(f"pneuma: error: {exc.message}", err=True)
    sys.exit(1)


def _described(found: InstalledMode) -> str:
    commit = f" at {found.commit[:12]}" if found.commit else ""
    editable = " (editable)" if found.editable else ""
    return f"{found.name} {found.version} from {found.source}{commit}{editable}"


@mode.command("add")
@click.argument("source")
@click.option("--editable", "-e", is_flag=True, help="Install a local folder editable.")
@click.option("--no-check", is_flag=True,
              help="Install even when `pneuma mode check` finds a problem.")
@click.option("--json", "as_json", is_flag=True, help="Say what was installed as JSON.")
def mode_add(source: str, editable: bool, no_check: bool, as_json: bool) -> None:
    """Install a mode: a git URL (@ref), a folder, a wheel or sdist, or a PyPI name."""
    from pneuma.core.errors import ToolError
    from pneuma.mode_sources import install_mode

    try:
        found = install_mode(source, editable=editable, check=False if no_check else None,
                             progress=_progress)
    except ToolError as exc:
        _refuse(exc, as_json)
    if as_json:
        click.echo(json.dumps(found.to_json(), indent=2, ensure_ascii=False))
        return
    click.echo(f"Installed {_described(found)}.\nRun it: pneuma run --mode {found.name}")


@mode.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable.")
def mode_list(as_json: bool) -> None:
    """List installed modes with where each came from."""
    from pneuma.mode_sources import installed_modes

    found = installed_modes()
    if as_json:
        click.echo(json.dumps([m.to_json() for m in found], indent=2, ensure_ascii=False))
        return
    rows = [[m.name, m.version, m.source, (m.commit or "")[:12], "yes" if m.editable else ""]
            for m in found]
    _table(["NAME", "VERSION", "SOURCE", "COMMIT", "EDITABLE"], rows)


def _table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    for row in [headers, *rows]:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


@mode.command("remove")
@click.argument("name")
def mode_remove(name: str) -> None:
    """Uninstall a mode that was added (built-in modes stay)."""
    from pneuma.core.errors import ToolError
    from pneuma.mode_sources import remove_mode

    try:
        remove_mode(name, progress=_progress)
    except ToolError as exc:
        _refuse(exc)
    click.echo(f"Removed {name}.")


@mode.command("update")
@click.argument("name")
@click.option("--no-check", is_flag=True,
              help="Install even when `pneuma mode check` finds a problem.")
def mode_update(name: str, no_check: bool) -> None:
    """Install a mode again from where it came from: the newest commit of its
    git ref, the newest release on PyPI."""
    from pneuma.core.errors import ToolError
    from pneuma.mode_sources import update_mode

    try:
        before, after = update_mode(name, check=False if no_check else None, progress=_progress)
    except ToolError as exc:
        _refuse(exc)
    click.echo(f"Updated {name}: {_version_of(before)} → {_version_of(after)}")


def _version_of(found: InstalledMode) -> str:
    return found.version + (f" ({found.commit[:12]})" if found.commit else "")


mode.add_command(check)  # `pneuma mode check` (pneuma/cli/mode_check_command.py)
