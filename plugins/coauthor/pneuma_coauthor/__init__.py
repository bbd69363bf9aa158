"""The coauthor mode for Pneuma: manifest, skill, seed files, the CoAuthor
runtime (billboard, agent workflow, REPL and `pneuma coauthor` subcommands)
and the browser viewer with its /api/coauthor/ routes."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, routes=".routes:coauthor_routes", commands=[".cli:coauthor"],
                    checks=".checks:CHECKS", describer=".changes:DESCRIBER", exporter=".export:EXPORTER")
register_modes = plugin.register_modes
register_commands = plugin.register_commands
register_routes = plugin.register_routes
register_exporters = plugin.register_exporters
register_turn_checks = plugin.register_turn_checks
register_change_describers = plugin.register_change_describers
