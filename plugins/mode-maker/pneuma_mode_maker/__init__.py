"""The mode-maker mode for Pneuma: the workspace is a mode package (made from
the ``pneuma new-mode`` template, or forked from an installed mode); the page
plays the mode under construction live in an isolated frame, checks it,
installs it editable and packages it as a wheel (docs/mode-maker.md)."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, routes=".routes:mode_maker_routes", checks=".checks:CHECKS")
register_modes = plugin.register_modes
register_routes = plugin.register_routes
register_turn_checks = plugin.register_turn_checks
