"""``pneuma mode check NAME|FOLDER [--json] [--only CHECK,...]``: a mode
checked against the viewer contract (pneuma/mode_check; docs/mode-authors.md,
"Check a mode"). One line per check; exit 1 when any failed, 2 when the
mode cannot be checked at all (one line saying why)."""

from __future__ import annotations

import sys

import click


@click.command("check")
@click.argument("target", metavar="NAME|FOLDER")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--only", default="", metavar="CHECK,...",
              help="Run only these checks (manifest, imports, locales, mount, actions, selection, "
                   "annotate, edit, exports, a11y).")
@click.option("--timeout", type=float, default=120.0, show_default=True,
              help="Seconds the whole check may take.")
def check(target: str, as_json: bool, only: str, timeout: float) -> None:
    """Check an installed mode, or a mode package folder, before it runs."""
    from pneuma.core.errors import ToolError
    from pneuma.mode_check import check_mode

    names = [name.strip() for name in only.split(",") if name.strip()]
    try:
        report = check_mode(target, only=names or None, timeout=timeout)
    except ToolError as exc:
        click.echo(f"pneuma: error: {exc.message}", err=True)
        sys.exit(2)
    click.echo(report.to_json() if as_json else "\n".join(report.lines()))
    sys.exit(0 if report.ok else 1)
