"""The installed modes with where each came from: ``pneuma mode list``,
``pneuma modes``' SOURCE column and the launcher's cards."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pneuma.mode_sources.provenance import provenance_of

BUILT_IN_SOURCE = "built-in"


@dataclass(frozen=True)
class InstalledMode:
    """One installed mode: its name, distribution and where it came from."""

    name: str
    distribution: str
    version: str
    source: str
    commit: str | None = None
    editable: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def installed_mode(mode: Any) -> InstalledMode:
    """The ``InstalledMode`` of a loaded mode (``pneuma.api.LoadedMode``)."""
    distribution = mode.distribution or ""
    version = mode.distribution_version or mode.manifest.version
    if mode.built_in:
        return InstalledMode(mode.name, distribution, version, BUILT_IN_SOURCE)
    origin = provenance_of(distribution) if distribution else None
    if origin is None:
        return InstalledMode(mode.name, distribution, version, "unknown")
    return InstalledMode(mode.name, distribution, origin.version or version, origin.source,
                         origin.commit, origin.editable)


def installed_modes() -> list[InstalledMode]:
    from pneuma.host.registry import load_modes

    registry = load_modes()
    return [installed_mode(mode) for mode in sorted(registry.modes.values(), key=lambda m: m.name)]


def source_columns(mode: Any) -> dict[str, Any]:
    """The columns ``pneuma modes`` adds to a mode's row."""
    found = installed_mode(mode)
    return {"version": found.version, "source": found.source, "commit": found.commit,
            "editable": found.editable}
