"""Installed modes: what plugins return from ``register_modes``, validated.

The host knows no mode by name; everything here comes through entry points.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma.manifest import ManifestError, ModeManifest, parse_manifest
from pneuma.plugins import PneumaPluginManager, get_plugin_manager


@dataclass(frozen=True)
class ModeSource:
    """What a plugin's ``register_modes`` returns for each mode.

    ``manifest`` is the raw manifest (a mapping) or the path of a JSON file
    holding it; ``package_dir`` is the directory the manifest's relative
    paths (skill, seeds, static files) are resolved against.
    """

    manifest: Mapping[str, Any] | Path
    package_dir: Path


SECTION_KEY_PATTERN = r"(?:[a-z0-9][a-z0-9-]*)?"


@dataclass(frozen=True)
class ClaudeMdSection:
    """A block of CLAUDE.md owned by Pneuma, between its own pair of markers.

    ``key`` is empty (the skill section) or lowercase letters, digits and
    hyphens, so that it can be written in a marker and found again.
    """

    key: str
    body: str

    def __post_init__(self) -> None:
        if not re.fullmatch(SECTION_KEY_PATTERN, self.key):
            raise ValueError(
                f"CLAUDE.md section key {self.key!r} must be lowercase letters, digits and '-'"
            )

    @property
    def start_marker(self) -> str:
        return "<!-- pneuma:start -->" if not self.key else f"<!-- pneuma:{self.key}:start -->"

    @property
    def end_marker(self) -> str:
        return "<!-- pneuma:end -->" if not self.key else f"<!-- pneuma:{self.key}:end -->"


@dataclass(frozen=True)
class LoadedMode:
    """A validated mode, with where it came from."""

    manifest: ModeManifest
    package_dir: Path
    plugin_name: str
    distribution: str | None
    distribution_version: str | None

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def skill_dir(self) -> Path:
        return self.package_dir / self.manifest.skill.source_dir

    @property
    def static_dir(self) -> Path:
        return self.package_dir / self.manifest.viewer.static_dir

    def summary(self) -> dict[str, Any]:
        """One row of ``pneuma modes``."""
        workspace = self.manifest.viewer_api.workspace
        return {
            "name": self.name,
            "version": self.manifest.version,
            "distribution": self.distribution,
            "workspace": workspace.type if workspace else None,
            "actions": len(self.manifest.viewer_api.actions),
            "tools": len(self.manifest.tools),
            "workflows": len(self.manifest.workflows),
        }


@dataclass(frozen=True)
class ModeLoadError:
    plugin: str
    distribution: str | None
    error: str


@dataclass
class ModeRegistry:
    modes: dict[str, LoadedMode] = field(default_factory=dict)
    errors: list[ModeLoadError] = field(default_factory=list)

    def get(self, name: str) -> LoadedMode:
        """The mode called ``name``, or UnknownModeError listing what exists."""
        try:
            return self.modes[name]
        except KeyError:
            raise UnknownModeError(name, self) from None


class UnknownModeError(LookupError):
    def __init__(self, name: str, registry: ModeRegistry):
        self.name = name
        known = ", ".join(sorted(registry.modes)) or "none"
        message = f"no mode named '{name}' is installed (installed: {known})"
        broken = [e for e in registry.errors]
        if broken:
            message += "; plugins that failed to load: " + ", ".join(e.plugin for e in broken)
        super().__init__(message)


_cache: dict[int, ModeRegistry] = {}
# Modes loaded one at a time by get_mode(), by (id(pm), name, schema_cache).
_one_cache: dict[tuple[int, str, bool], LoadedMode] = {}


def clear_cache() -> None:
    _cache.clear()
    _one_cache.clear()


def load_modes(pm: PneumaPluginManager | None = None) -> ModeRegistry:
    """Call every plugin's ``register_modes`` and validate what comes back.

    Each plugin is called on its own so that an exception or an invalid
    manifest is attributed to the plugin that caused it.
    """
    pm = pm or get_plugin_manager()
    cached = _cache.get(id(pm))
    if cached is not None:
        return cached
    registry = ModeRegistry()
    for load_error in pm.load_errors:
        registry.errors.append(
            ModeLoadError(load_error.name, load_error.distribution, load_error.error)
        )
    for impl in pm.hook.register_modes.get_hookimpls():
        plugin_name = impl.plugin_name
        origin = pm.origins.get(plugin_name)
        distribution = origin.distribution if origin else None
        try:
            sources = impl.function() or []
        except Exception as exc:
            registry.errors.append(
                ModeLoadError(plugin_name, distribution, f"register_modes() raised "
                              f"{type(exc).__name__}: {exc}")
            )
            continue
        for source in sources:
            try:
                mode = _load_one(source, plugin_name, origin)
            except (ManifestError, OSError, ValueError, TypeError) as exc:
                registry.errors.append(ModeLoadError(plugin_name, distribution, str(exc)))
                continue
            if mode.name in registry.modes:
                other = registry.modes[mode.name]
                registry.errors.append(
                    ModeLoadError(
                        plugin_name,
                        distribution,
                        f"mode '{mode.name}' is already provided by plugin '{other.plugin_name}'",
                    )
                )
                continue
            registry.modes[mode.name] = mode
    _cache[id(pm)] = registry
    return registry


def get_mode(
    name: str, pm: PneumaPluginManager | None = None, *, schema_cache: bool = False
) -> LoadedMode:
    """The mode called ``name``, or UnknownModeError listing what exists.

    Only that mode's manifest is validated (``pneuma run`` should not pay
    for the other modes): each plugin's sources are read as plain JSON and
    the first one carrying that name is validated. Anything unusual (no
    such name, an invalid manifest, a plugin that raises) falls back to
    ``load_modes()``, which gives the same answer and the full error
    report. ``schema_cache``: tool schemas already found valid by an
    earlier run are not checked against the JSON Schema meta-schema again
    (see ``pneuma.manifest.SchemaCheckCache``); ``pneuma modes`` and the
    default keep the full check.
    """
    pm = pm or get_plugin_manager()
    registry = _cache.get(id(pm))
    if registry is not None:
        return registry.get(name)
    key = (id(pm), name, schema_cache)
    mode = _one_cache.get(key)
    if mode is None:
        mode = _find_one(name, pm, schema_cache)
        if mode is None:
            return load_modes(pm).get(name)
        _one_cache[key] = mode
    return mode


def _find_one(name: str, pm: PneumaPluginManager, schema_cache: bool) -> LoadedMode | None:
    for impl in pm.hook.register_modes.get_hookimpls():
        origin = pm.origins.get(impl.plugin_name)
        try:
            sources = impl.function() or []
            for source in sources:
                if not isinstance(source, ModeSource):
                    return None
                raw = _read_raw(source, impl.plugin_name)
                if isinstance(raw, Mapping) and raw.get("name") == name:
                    return _load_one(source, impl.plugin_name, origin, raw=raw,
                                     schema_cache=schema_cache)
        except Exception:
            return None  # load_modes() reports it, attributed to its plugin
    return None


def _read_raw(source: ModeSource, plugin_name: str) -> Any:
    raw: Any = source.manifest
    if isinstance(raw, Path):
        try:
            raw = json.loads(raw.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"invalid manifest in plugin '{plugin_name}': {raw} is not valid JSON "
                f"(line {exc.lineno}, column {exc.colno}: {exc.msg})"
            ) from None
    return raw


def _load_one(source: Any, plugin_name: str, origin: Any, *, raw: Any = None,
              schema_cache: bool = False) -> LoadedMode:
    if not isinstance(source, ModeSource):
        raise TypeError(
            f"plugin '{plugin_name}': register_modes() must return ModeSource objects, "
            f"got {type(source).__name__}"
        )
    if raw is None:
        raw = _read_raw(source, plugin_name)
    manifest = parse_manifest(raw, plugin_name, schema_cache=schema_cache)
    package_dir = Path(source.package_dir)
    mode = LoadedMode(
        manifest=manifest,
        package_dir=package_dir,
        plugin_name=plugin_name,
        distribution=origin.distribution if origin else None,
        distribution_version=origin.version if origin else None,
    )
    _check_paths(mode, plugin_name)
    return mode


def _check_paths(mode: LoadedMode, plugin_name: str) -> None:
    """Paths a manifest names must exist in its package, or the mode is broken."""
    problems = []
    if not mode.skill_dir.is_dir():
        problems.append(f"skill.sourceDir: directory {mode.skill_dir} does not exist")
    for source in mode.manifest.init.seed_files:
        if not (mode.package_dir / source).exists():
            problems.append(f"init.seedFiles.{source}: {mode.package_dir / source} does not exist")
    module = mode.manifest.viewer.module
    if module is not None and not (mode.static_dir / module).is_file():
        problems.append(f"viewer.module: {mode.static_dir / module} does not exist")
    if problems:
        raise ManifestError(plugin_name, problems)
