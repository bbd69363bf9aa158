"""The video mode for Pneuma: a composition (``video.json``) of HTML/CSS/JS
scenes on one timeline whose time the host drives, played in the page,
captured frame by frame and exported through ffmpeg."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, exporter=".export:EXPORTER", checks=".checks:CHECKS",
                    describer=".changes:DESCRIBER", routes=".routes:video_routes")
register_modes = plugin.register_modes
register_routes = plugin.register_routes
register_exporters = plugin.register_exporters
register_turn_checks = plugin.register_turn_checks
register_change_describers = plugin.register_change_describers
