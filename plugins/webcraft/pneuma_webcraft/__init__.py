"""The webcraft mode for Pneuma: a static site (index.html and friends),
previewed live in an isolated frame at phone, tablet and desktop widths,
exported as a zip or as screenshots."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, routes=".routes:webcraft_routes", exporter=".export:WEBCRAFT_EXPORTER",
                    checks=".checks:CHECKS", describer=".changes:DESCRIBER")
register_modes = plugin.register_modes
register_routes = plugin.register_routes
register_exporters = plugin.register_exporters
register_turn_checks = plugin.register_turn_checks
register_change_describers = plugin.register_change_describers
