"""Modes from anywhere: install, update and remove a mode with pip from a git
URL, a folder, a wheel or sdist, or PyPI, and remember where each came from
(``pneuma mode``, the launcher's "Add a mode" box; docs/mode-authors.md,
"Install from anywhere")."""

from pneuma.mode_sources.installed import InstalledMode, installed_mode, installed_modes
from pneuma.mode_sources.installer import (
    build_mode_wheel,
    install_mode,
    remove_mode,
    update_mode,
)

__all__ = ["InstalledMode", "build_mode_wheel", "install_mode", "installed_mode",
           "installed_modes", "remove_mode", "update_mode"]
