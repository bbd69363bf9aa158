"""``pneuma modes [--json]``, ``pneuma modes schema``, ``pneuma modes show
NAME``: the installed modes, each with where it came from (built-in, or the
source ``pneuma mode add`` installed it from: pneuma/mode_sources), and the
plugins that failed to load."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

# The source last: it can be a long URL or path, and the columns before it keep their places.
HEADERS = ["name", "version", "distribution", "workspace", "actions", "tools", "workflows",
           "source"]


@click.group("modes", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable, with hooks and paths.")
@click.pass_context
def modes(ctx: click.Context, as_json: bool) -> None:
    """List installed modes (and plugins that failed to load)."""
    if ctx.invoked_subcommand is not None:
        return
    from pneuma.host.plugins import get_plugin_manager
    from pneuma.host.registry import get_plugins, load_modes
    from pneuma.mode_sources.installed import source_columns

    pm = get_plugin_manager()
    registry = load_modes(pm)
    loaded = sorted(registry.modes.values(), key=lambda m: m.name)
    if as_json:
        plugins = {p["name"]: p for p in get_plugins(pm)}
        payload: dict[str, Any] = {
            "modes": [
                {
                    **mode.summary(), **source_columns(mode),
                    "displayName": mode.manifest.to_json()["displayName"],
                    "plugin": mode.plugin_name,
                    "hooks": plugins.get(mode.plugin_name, {}).get("hooks", []),
                    "paths": {
                        "package": str(mode.package_dir),
                        "skill": str(mode.skill_dir),
                        "static": str(mode.static_dir),
                    },
                }
                for mode in loaded
            ],
            "plugins": list(plugins.values()),
            "errors": [
                {"plugin": e.plugin, "distribution": e.distribution, "error": e.error}
                for e in registry.errors
            ],
        }
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    rows = [{**mode.summary(), **source_columns(mode)} for mode in loaded]
    table = [[str(row[h] if row[h] is not None else "-") for h in HEADERS] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in table]) for i, h in enumerate(HEADERS)]
    click.echo("  ".join(h.upper().ljust(w) for h, w in zip(HEADERS, widths, strict=True)).rstrip())
    for r in table:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    if not rows:
        click.echo("(no modes installed)")
    for error in registry.errors:
        where = f" ({error.distribution})" if error.distribution else ""
        click.echo(f"broken: {error.plugin}{where}: {error.error}", err=True)


@modes.command("schema")
def modes_schema() -> None:
    """Print the JSON Schema of a mode manifest."""
    from pneuma.host.manifest import manifest_json_schema

    click.echo(json.dumps(manifest_json_schema(), indent=2, ensure_ascii=False))


@modes.command("show")
@click.argument("name")
def modes_show(name: str) -> None:
    """Print one mode's validated manifest as JSON."""
    from pneuma.startup.start_checks import StartProblem, load_mode

    try:
        mode = load_mode(name, schema_cache=False)
    except StartProblem as exc:
        click.echo(f"pneuma: error: {exc.message}", err=True)
        sys.exit(exc.code)
    click.echo(json.dumps(mode.manifest.to_json(), indent=2, ensure_ascii=False))
