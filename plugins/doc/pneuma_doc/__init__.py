"""The doc mode for Pneuma: manifest, skill, seed files, viewer and export."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, exporter=".exporter:EXPORTER", describer=".changes:DESCRIBER",
                    checks=".checks:CHECKS")
register_modes = plugin.register_modes
register_exporters = plugin.register_exporters
register_change_describers = plugin.register_change_describers
register_turn_checks = plugin.register_turn_checks
