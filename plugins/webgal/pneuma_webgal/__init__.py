"""The webgal mode for Pneuma: manifest, skill, seed files, viewer and the
preview routes (the real WebGAL engine at /webgal/, the editor-sync socket).

The routes (aiohttp, the sync hub) are imported only by a server serving
this mode, not by every command that lists the modes."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, routes=".routes:routes", describer=".changes:DESCRIBER",
                    checks=".checks:CHECKS", exporter=".export:EXPORTER")
register_modes = plugin.register_modes
register_routes = plugin.register_routes
register_exporters = plugin.register_exporters
register_change_describers = plugin.register_change_describers
register_turn_checks = plugin.register_turn_checks
