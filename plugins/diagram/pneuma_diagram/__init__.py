"""The diagram mode for Pneuma: Mermaid sources (``*.mmd``), one diagram per
file, rendered live by the real mermaid package; tools to validate and render
them headlessly, and SVG/PNG export."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, exporter=".export:EXPORTER",
                    checks=".checks:CHECKS", describer=".changes:DESCRIBER")
register_modes = plugin.register_modes
register_exporters = plugin.register_exporters
register_turn_checks = plugin.register_turn_checks
register_change_describers = plugin.register_change_describers
