"""``pneuma new-mode``, the command (the template's use is ``newmode``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("new-mode")
@click.argument("context", nargs=-1, metavar="[name=NAME]")
@click.option("--no-input", is_flag=True, help="Do not ask; use the given name or 'mymode'.")
@click.option("--output-dir", "-o", type=click.Path(path_type=Path),
              default=Path("."), show_default=True, help="Where pneuma-NAME/ is created.")
def new_mode_command(context: tuple[str, ...], no_input: bool, output_dir: Path) -> None:
    """Create a new mode package (pneuma-NAME/) from the template."""
    from pneuma.cli.newmode import (
        DEFAULT_NAME,
        NewModeError,
        check_name,
        create_mode,
        parse_extra_context,
    )

    try:
        name = parse_extra_context(context).get("name")
        if name is None and not no_input:
            while True:
                name = click.prompt("Mode name", default=DEFAULT_NAME).strip()
                try:
                    check_name(name)
                    break
                except NewModeError as exc:
                    click.echo(f"pneuma: {exc}", err=True)
        names = check_name(name or DEFAULT_NAME)
        project = create_mode(names.name, output_dir)
    except NewModeError as exc:
        click.echo(f"pneuma: error: {exc}", err=True)
        sys.exit(2)
    try:
        from pneuma.host.registry import load_modes

        existing = load_modes().modes.get(names.name)
    except Exception:  # a warning only; never let a broken plugin stop this
        existing = None
    if existing is not None:
        kind = "a built-in mode" if existing.built_in else "an installed mode"
        click.echo(f"[pneuma] warning: {kind} is named '{names.name}' "
                   f"(from {existing.distribution or existing.plugin_name}); installing this "
                   "one would clash with it: pick another name", err=True)
    # A workspace of its own: `pneuma run` with no -w would seed the
    # current folder, which is rarely where the person wants a new mode's files.
    click.echo(f"Created {project} (mode '{names.name}', distribution {names.distribution}, "
               f"package {names.package}).\n\nNext:\n"
               f"  pip install -e {project}\n"
               f"  pneuma run --mode {names.name} --workspace ~/{names.name}-workspace\n"
               f"  cd {project} && python -m pytest")
