"""``pneuma backends``: the installed agent backends and whether each can
work now (docs/backends.md); and the same states for ``pneuma run``'s
warning, its ``supportedBackends`` refusal and the launcher's picker.

A backend's state comes from its optional ``BackendSpec.check``; a check
that raises is shown as not usable, with the exception as what is
missing, never as a crash of the listing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from pneuma.core.backend import BackendCheckContext, BackendSpec, BackendStatus


@dataclass(frozen=True)
class BackendState:
    """One installed backend and what its check said."""

    spec: BackendSpec
    plugin: str
    status: BackendStatus

    @property
    def name(self) -> str:
        return self.spec.name

    def to_json(self) -> dict[str, Any]:
        return {"name": self.spec.name, "description": self.spec.description,
                "plugin": self.plugin, **self.status.to_json()}

    def problem(self) -> str:
        """What is missing and the fix, in one phrase (empty when usable)."""
        if self.status.usable:
            return ""
        parts = [f"missing {self.status.missing or 'something (its check did not say what)'}"]
        if self.status.fix:
            parts.append(f"fix: {self.status.fix}")
        return "; ".join(parts)


def installed_backends() -> list[tuple[BackendSpec, str]]:
    """Every backend with the plugin that registered it, in registration
    order; a name registered twice keeps its first spec (as ``find_backend``)."""
    from pneuma.host.plugins import get_plugin_manager

    seen: dict[str, tuple[BackendSpec, str]] = {}
    for impl in get_plugin_manager().hook.register_backends.get_hookimpls():
        try:
            specs = impl.function() or []
        except Exception:  # a broken plugin's backends are simply not there
            continue
        for spec in specs:
            if isinstance(spec, BackendSpec):
                seen.setdefault(spec.name, (spec, impl.plugin_name))
    return list(seen.values())


def check_backend(spec: BackendSpec, context: BackendCheckContext) -> BackendStatus:
    """``spec.check(context)``, or usable when it has none; never raises."""
    if spec.check is None:
        return BackendStatus(usable=True, found="(this backend has no check)")
    try:
        status = spec.check(context)
    except Exception as exc:
        return BackendStatus(usable=False, missing=f"a working check ({type(exc).__name__}: {exc})",
                             fix=f"report it to the author of the {spec.name} backend")
    if not isinstance(status, BackendStatus):
        return BackendStatus(usable=False, missing="a BackendStatus from its check",
                             fix=f"report it to the author of the {spec.name} backend")
    return status


def backend_states(context: BackendCheckContext,
                   names: Iterable[str] | None = None) -> list[BackendState]:
    """The state of every installed backend sorted by name, or of those of
    ``names`` that are installed, in the order given."""
    installed = {spec.name: (spec, plugin) for spec, plugin in installed_backends()}
    order = sorted(installed) if names is None else [n for n in names if n in installed]
    return [BackendState(installed[name][0], installed[name][1],
                         check_backend(installed[name][0], context)) for name in order]


def check_context(env: Mapping[str, str] | None = None, *, workspace: Path | None = None,
                  claude_bin: str | None = None, version: bool = True) -> BackendCheckContext:
    return BackendCheckContext(env=dict(os.environ if env is None else env),
                               workspace=workspace, claude_bin=claude_bin, version=version)


def suggestion(states: Iterable[BackendState], besides: str) -> str:
    """``--backend native or --backend none``: the usable ones other than
    ``besides`` (an agent-backed one first: none is the last resort)."""
    usable = [s.name for s in states if s.status.usable and s.name != besides]
    usable.sort(key=lambda name: (name == "none", name))
    return " or ".join(f"--backend {name}" for name in usable)


def unusable_line(chosen: BackendState, states: Iterable[BackendState]) -> str:
    """The one terminal line for a chosen backend that cannot work now."""
    line = f"the {chosen.name} backend cannot work now: {chosen.problem()}"
    alternatives = suggestion(states, chosen.name)
    if alternatives:
        line += f"; usable now: {alternatives}"
    return line


def unusable_warning(backend: str, claude_bin: str | None = None) -> str | None:
    """``unusable_line`` for an installed ``backend`` that cannot work now,
    else None (`pneuma open`, before it serves)."""
    context = check_context(claude_bin=claude_bin, version=False)
    states = backend_states(context)
    chosen = next((state for state in states if state.name == backend), None)
    if chosen is None or chosen.status.usable:
        return None
    return unusable_line(chosen, states)


def _table(states: list[BackendState]) -> list[str]:
    rows = []
    for state in states:
        status = state.status
        detail = (status.found or "") if status.usable else state.problem()
        rows.append([state.name, "usable" if status.usable else "not usable",
                     status.version or "-", detail])
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join([*(cell.ljust(w) for cell, w in zip(row, widths)), row[3]]).rstrip()
             for row in rows]
    for state in states:
        lines.extend(f"  {state.name}: note: {note}" for note in state.status.notes)
    return lines


@click.command("backends")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--claude-bin", default=None, type=click.Path(dir_okay=False),
              help="Check this Claude Code CLI instead of the usual lookup.")
def backends(as_json: bool, claude_bin: str | None) -> None:
    """The installed agent backends: usable now or not, version, what is
    missing and how to fix it (always exits 0)."""
    states = backend_states(check_context(claude_bin=claude_bin, workspace=Path.cwd()))
    if as_json:
        click.echo(json.dumps({"backends": [s.to_json() for s in states]}, indent=2,
                              ensure_ascii=False))
        return
    if not states:
        click.echo("(no backends installed)")
        return
    for line in _table(states):
        click.echo(line)
