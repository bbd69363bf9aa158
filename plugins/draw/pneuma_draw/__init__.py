"""The draw mode for Pneuma: manifest, skill, seed files, viewer and export."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, exporter=".exporter:EXPORTER", checks=".checks:CHECKS",
                    describer=".changes:DESCRIBER")
register_modes = plugin.register_modes
register_exporters = plugin.register_exporters
register_turn_checks = plugin.register_turn_checks
register_change_describers = plugin.register_change_describers
