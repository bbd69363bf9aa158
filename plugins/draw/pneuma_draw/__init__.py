"""The draw mode for Pneuma: manifest, skill, seed files and viewer."""

from __future__ import annotations

from pneuma.api import ModePlugin

register_modes = ModePlugin(__name__).register_modes
