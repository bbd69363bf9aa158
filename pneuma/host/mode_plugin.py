"""``ModePlugin``: the hooks of a mode that ships as one Python package,
declared in one call instead of one ``@hookimpl`` function per hook.

    plugin = ModePlugin(__name__, routes=".routes:kanban_routes", commands=[".cli:kanban"])
    register_modes = plugin.register_modes
    register_routes = plugin.register_routes
    register_commands = plugin.register_commands

Pluggy registers the module an entry point names and finds hooks by their
names in it, so the module offers exactly the hooks it assigns (``pneuma
modes --json`` lists those). Routes and commands are named, as entry points
are, by ``"module:attribute"`` and imported only when the hook is called:
listing the modes never imports a mode's server or CLI code.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pneuma import hookimpl
from pneuma.host.modes import ModeSource

if TYPE_CHECKING:
    import click
    from aiohttp import web

    from pneuma.host.exporters import Exporter
    from pneuma.host.turn_changes import ChangeDescriber
    from pneuma.host.turn_checks import TurnCheck

# A ``pneuma.api.Pneuma``, typed by name only: the server sits above this package.
Pneuma = Any


class ModePlugin:
    """One mode in the package (or module) ``module``, with its manifest
    file (relative to the package's directory), an optional routes factory
    (``pneuma -> list of route defs``, as ``register_routes`` returns) and
    optional click commands and an optional ``Exporter`` (``pneuma export``,
    the Export menu; its module is imported only when exports are asked
    for) and an optional ``ChangeDescriber`` (a turn's changes in the
    mode's terms; imported when a turn is described) and optional turn
    checks (a list of ``TurnCheck``, run after every turn; imported when a
    turn is checked). References starting with ``.`` are relative to
    that package."""

    def __init__(
        self,
        module: str,
        *,
        manifest: str = "manifest.json",
        routes: str | None = None,
        commands: Sequence[str] = (),
        exporter: str | None = None,
        describer: str | None = None,
        checks: str | None = None,
    ) -> None:
        references = [routes, *commands, exporter, describer, checks]
        for reference in [r for r in references if r is not None]:
            # A typo fails when the entry point loads (the plugin is reported
            # broken), not later in the middle of serving a session.
            module_name, _, attribute = reference.partition(":")
            if not module_name or not attribute:
                raise ValueError(f"{reference!r} is not a 'module:attribute' reference")
        self.module = module
        self.manifest = manifest
        self.routes = routes
        self.commands = tuple(commands)
        self.exporter = exporter
        self.describer = describer
        self.checks = checks

    @property
    def package_dir(self) -> Path:
        """The directory of ``module`` (its package's, for a plain module)."""
        file = importlib.import_module(self.module).__file__
        if file is None:
            raise ValueError(f"{self.module!r} has no directory on disk to hold a manifest")
        return Path(file).resolve().parent

    def load(self, reference: str) -> Any:
        """The object a ``"module:attribute"`` reference names, imported now."""
        module_name, _, attribute = reference.partition(":")
        anchor = importlib.import_module(self.module)
        package = anchor.__package__ or anchor.__name__
        return getattr(importlib.import_module(module_name, package), attribute)

    @hookimpl
    def register_modes(self) -> list[ModeSource]:
        package_dir = self.package_dir
        return [ModeSource(manifest=package_dir / self.manifest, package_dir=package_dir)]

    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        for reference in self.commands:
            cli.add_command(self.load(reference))

    @hookimpl
    def register_routes(self, pneuma: Pneuma) -> list[web.AbstractRouteDef] | None:
        if self.routes is None:
            return None
        routes: list[web.AbstractRouteDef] = self.load(self.routes)(pneuma)
        return routes

    @hookimpl
    def register_exporters(self) -> list[Exporter]:
        if self.exporter is None:
            return []
        return [self.load(self.exporter)]

    @hookimpl
    def register_change_describers(self) -> list[ChangeDescriber]:
        if self.describer is None:
            return []
        return [self.load(self.describer)]

    @hookimpl
    def register_turn_checks(self) -> list[TurnCheck]:
        if self.checks is None:
            return []
        return list(self.load(self.checks))
