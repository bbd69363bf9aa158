"""The slide mode for Pneuma: manifest, skill, seed files, viewer and export."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, exporter=".exporter:EXPORTER")
register_modes = plugin.register_modes
register_exporters = plugin.register_exporters
