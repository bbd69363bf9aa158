"""The plugin manager: hook specs plus everything registered under the
entry-point group ``pneuma``.

A plugin that fails to import is recorded with its error and skipped, so one
broken package never takes the host or the other modes down.
"""

from __future__ import annotations

import importlib.metadata
import os
import traceback
from dataclasses import dataclass, field

import pluggy

from pneuma.host import hookspecs

ENTRY_POINT_GROUP = "pneuma"
LOAD_PLUGINS_ENV = "PNEUMA_LOAD_PLUGINS"

# Plugins that are part of the host itself (not modes): registered first, always.
DEFAULT_PLUGINS = (
    "pneuma.workspace.default_sections",
    "pneuma.agents.builtin",
    "pneuma.agents.native.plugin",
    "pneuma.agents.codex.plugin",
    "pneuma.agents.acp.plugin",
    "pneuma.editing.plugin",
    "pneuma.headless_viewer.plugin",
    "pneuma.annotations.plugin",
    "pneuma.turn_checks.plugin",
    "pneuma.server.branches_plugin",
    "pneuma.publish.plugin",
    "pneuma.share.imported_plugin",
    "pneuma.share.plugin",
    "pneuma.replay.plugin",
)


@dataclass(frozen=True)
class PluginLoadError:
    """An entry point that could not be loaded."""

    name: str
    distribution: str | None
    version: str | None
    error: str
    traceback: str = field(repr=False, default="")


@dataclass(frozen=True)
class PluginOrigin:
    """Where a registered plugin came from."""

    name: str
    distribution: str | None
    version: str | None
    entry_point: str | None


class PneumaPluginManager(pluggy.PluginManager):
    """A pluggy manager that remembers load failures and where plugins came from."""

    def __init__(self) -> None:
        super().__init__("pneuma")
        self.load_errors: list[PluginLoadError] = []
        self.origins: dict[str, PluginOrigin] = {}


_plugin_manager: PneumaPluginManager | None = None


def get_plugin_manager() -> PneumaPluginManager:
    """The process-wide plugin manager, built on first use."""
    global _plugin_manager
    if _plugin_manager is None:
        _plugin_manager = build_plugin_manager()
    return _plugin_manager


def forget_plugin_manager() -> None:
    """Forget the cached manager; ``pneuma.host.registry.reset_plugin_manager``
    also forgets the modes it loaded."""
    global _plugin_manager
    _plugin_manager = None


def build_plugin_manager(*, load_entry_points: bool = True) -> PneumaPluginManager:
    pm = PneumaPluginManager()
    pm.add_hookspecs(hookspecs)
    for module_name in DEFAULT_PLUGINS:
        module = importlib.import_module(module_name)
        pm.register(module, name=module_name)
        pm.origins[module_name] = PluginOrigin(module_name, "pneuma", _host_version(), None)
    if load_entry_points:
        _load_entry_points(pm, _allowed_plugins())
    return pm


def _allowed_plugins() -> set[str] | None:
    raw = os.environ.get(LOAD_PLUGINS_ENV)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _load_entry_points(pm: PneumaPluginManager, allowed: set[str] | None) -> None:
    seen: set[str] = set()
    for entry_point in sorted(
        importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name
    ):
        dist = entry_point.dist
        dist_name = dist.metadata["Name"] if dist is not None else None
        dist_version = dist.version if dist is not None else None
        if allowed is not None and entry_point.name not in allowed and dist_name not in allowed:
            continue
        # The same distribution can be visible twice (e.g. an editable install
        # next to a regular one); the first one wins, as Python's import would.
        if entry_point.name in seen:
            continue
        seen.add(entry_point.name)
        try:
            plugin = entry_point.load()
            pm.register(plugin, name=entry_point.name)
        except Exception as exc:  # a broken plugin must never be fatal
            pm.load_errors.append(
                PluginLoadError(
                    name=entry_point.name,
                    distribution=dist_name,
                    version=dist_version,
                    error=f"{type(exc).__name__}: {exc}",
                    traceback=traceback.format_exc(),
                )
            )
            continue
        pm.origins[entry_point.name] = PluginOrigin(
            entry_point.name, dist_name, dist_version, entry_point.value
        )


def _host_version() -> str:
    from pneuma import __version__

    return __version__
