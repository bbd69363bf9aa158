"""Loading modes: every plugin's ``register_modes``, validated, cached per
plugin manager; and the listing of plugins behind ``pneuma modes --json``.

The host knows no mode by name; everything here comes through entry points.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pneuma.host.manifest import ManifestError, parse_manifest
from pneuma.host.modes import LoadedMode, ModeLoadError, ModeRegistry, ModeSource
from pneuma.host.plugins import (
    PneumaPluginManager,
    forget_plugin_manager,
    get_plugin_manager,
)

# Keyed by the manager itself, weakly: an id() outlives its object, and a
# new manager given a freed one's id would inherit that manager's modes (a
# test's two-mode manager leaked into every later test of its worker).
_cache: weakref.WeakKeyDictionary[PneumaPluginManager, ModeRegistry] = weakref.WeakKeyDictionary()
# Modes loaded one at a time by get_mode(), by manager then (name, schema_cache).
_one_cache: weakref.WeakKeyDictionary[
    PneumaPluginManager, dict[tuple[str, bool], LoadedMode]
] = weakref.WeakKeyDictionary()


def clear_cache() -> None:
    _cache.clear()
    _one_cache.clear()


def load_modes(pm: PneumaPluginManager | None = None) -> ModeRegistry:
    """Call every plugin's ``register_modes`` and validate what comes back.

    Each plugin is called on its own so that an exception or an invalid
    manifest is attributed to the plugin that caused it.
    """
    pm = pm or get_plugin_manager()
    cached = _cache.get(pm)
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
    _cache[pm] = registry
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
    (see ``pneuma.host.manifest.SchemaCheckCache``); ``pneuma modes`` and the
    default keep the full check.
    """
    pm = pm or get_plugin_manager()
    registry = _cache.get(pm)
    if registry is not None:
        return registry.get(name)
    loaded = _one_cache.setdefault(pm, {})
    key = (name, schema_cache)
    mode = loaded.get(key)
    if mode is None:
        mode = _find_one(name, pm, schema_cache)
        if mode is None:
            return load_modes(pm).get(name)
        loaded[key] = mode
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


def reset_plugin_manager() -> None:
    """Forget the cached plugin manager and the modes it loaded (tests, or
    after installing a package)."""
    forget_plugin_manager()
    clear_cache()


def get_plugins(pm: PneumaPluginManager | None = None) -> list[dict[str, Any]]:
    """Every loaded plugin: name, distribution, version, hooks and the paths
    of the modes it provides (what ``pneuma modes --json`` prints)."""
    pm = pm or get_plugin_manager()
    registry = load_modes(pm)
    plugins = []
    for name, plugin in pm.list_name_plugin():
        if name is None or plugin is None:
            continue
        origin = pm.origins.get(name)
        hooks = sorted(impl.name for impl in pm.get_hookcallers(plugin) or [])
        plugins.append(
            {
                "name": name,
                "distribution": origin.distribution if origin else None,
                "version": origin.version if origin else None,
                "entryPoint": origin.entry_point if origin else None,
                "hooks": hooks,
                "modes": [m.name for m in registry.modes.values() if m.plugin_name == name],
            }
        )
    plugins.sort(key=lambda p: p["name"])
    return plugins
