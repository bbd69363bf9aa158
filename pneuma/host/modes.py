"""What a mode is to the host: ``ModeSource`` (what a plugin returns from
``register_modes``), ``LoadedMode`` (validated, with where it came from) and
the ``ModeRegistry`` of all of them. Loading lives in ``pneuma.host.registry``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma.host.manifest import ModeManifest


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


_REPO_PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
BUILT_IN_DISTRIBUTIONS = frozenset(
    {"pneuma-slide", "pneuma-doc", "pneuma-draw", "pneuma-webgal", "pneuma-coauthor",
     "pneuma-diagram", "pneuma-webcraft", "pneuma-print", "pneuma-illustrate", "pneuma-dashboard",
     "pneuma-video", "pneuma-mode-maker"})


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
    def built_in(self) -> bool:
        """One of the modes this repository ships (its plugins/ folder, or
        their wheels when that folder is not on disk)."""
        return (self.package_dir.resolve().is_relative_to(_REPO_PLUGINS)
                or self.distribution in BUILT_IN_DISTRIBUTIONS)

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
