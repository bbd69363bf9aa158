"""The illustrate mode for Pneuma: images made by an OpenAI-compatible images
endpoint (the ``generate_image`` tool), laid out in rows of variants by
``board.json``, each with its record (prompt, model, seed, parent) beside it,
and the person's picks, rejections, stars and comments in ``choices.json``."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, routes=".routes:illustrate_routes", exporter=".export:EXPORTER",
                    checks=".checks:CHECKS", describer=".changes:DESCRIBER")
register_modes = plugin.register_modes
register_routes = plugin.register_routes
register_exporters = plugin.register_exporters
register_turn_checks = plugin.register_turn_checks
register_change_describers = plugin.register_change_describers
