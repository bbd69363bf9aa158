"""The host's own tools, which any mode may offer its agent by name.

A mode's manifest lists one as ``{"name": "read_file", "handler":
"pneuma:read_file"}``: the description and the schemas come from here
(host_tools.json), and the mode may override the description in its own
words. ``pneuma:<name>`` is the promised way to name a host tool (docs/api.md);
where its handler lives inside the host is not.

This module imports nothing of Pneuma: the manifest models read it while a
manifest is validated.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

HOST_TOOL_PREFIX = "pneuma:"
_CATALOGUE = Path(__file__).with_name("host_tools.json")


@lru_cache(maxsize=1)
def _specs() -> dict[str, dict[str, Any]]:
    return {spec["name"]: spec for spec in json.loads(_CATALOGUE.read_text(encoding="utf-8"))}


def host_tool_names() -> list[str]:
    """Every host tool, by the name a manifest gives after ``pneuma:``."""
    return sorted(_specs())


def host_tool_spec(name: str) -> dict[str, Any] | None:
    """The full manifest entry of host tool ``name`` (camelCase keys, a copy)."""
    spec = _specs().get(name)
    return copy.deepcopy(spec) if spec is not None else None


def host_tool_handler(reference: str) -> str | None:
    """Where ``pneuma:<name>`` is implemented (``module:function``), or None
    when ``reference`` does not name a host tool."""
    if not reference.startswith(HOST_TOOL_PREFIX):
        return None
    spec = _specs().get(reference[len(HOST_TOOL_PREFIX):])
    return spec["handler"] if spec is not None else None
