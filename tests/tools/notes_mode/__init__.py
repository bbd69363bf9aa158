"""``notes``: the smallest mode that offers every one of the host's tools.

The host's generic tools (tests/tools) are tested on this mode rather than
on a real one, so that nothing a mode adds (a script grammar, resource
folders, its own words in the tool descriptions) colours what the host
promises every mode. It is a mode package as a third party writes one:
a manifest naming each host tool as ``"handler": "pneuma:<tool>"``, one tool
of its own (``find_note``), a skill and a few plain text and Markdown seed
files; it imports nothing of Pneuma but ``pneuma.api``.

In-process the tests load its manifest directly; ``pneuma tool`` and
``pneuma mcp`` find it through an entry point (``notes = notes_mode``) that
the tests install into a throwaway site directory.
"""

from __future__ import annotations

from pneuma.api import ModePlugin

plugin = ModePlugin(__name__)
register_modes = plugin.register_modes
