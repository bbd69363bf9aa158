"""The print mode for Pneuma: documents of a fixed paper size (print.json,
one HTML fragment per sheet under pages/, one style.css), shown as true
pages with margins and page numbers, checked for overflow and exported to
PDF, PNG and standalone HTML."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, exporter=".export:EXPORTER",
                    checks=".checks:CHECKS", describer=".changes:DESCRIBER")
register_modes = plugin.register_modes
register_exporters = plugin.register_exporters
register_turn_checks = plugin.register_turn_checks
register_change_describers = plugin.register_change_describers
