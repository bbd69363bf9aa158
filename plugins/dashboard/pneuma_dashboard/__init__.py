"""The dashboard mode for Pneuma: a board of tiles (Vega-Lite charts, tables,
numbers, Markdown) described in ``dashboard.json`` over data files under
``data/``, laid out on a grid the person can rearrange in the page.

The exporter, the turn checks and the change describer are named here by
reference and imported only when asked for (``pneuma.api.ModePlugin``)."""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__, exporter=".export:EXPORTER", checks=".checks:CHECKS",
                    describer=".changes:DESCRIBER")
register_modes = plugin.register_modes
register_exporters = plugin.register_exporters
register_turn_checks = plugin.register_turn_checks
register_change_describers = plugin.register_change_describers
