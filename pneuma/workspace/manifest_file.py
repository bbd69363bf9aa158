"""The workspace's own manifest (``workspace.manifestFile`` of a mode whose
workspace ``type`` is ``"manifest"``, such as a deck's ``manifest.json``).

The viewer reads it to know what to show; when it is not valid JSON the
page can only say so in the browser. ``pneuma run`` checks it at start so
that the terminal says so too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def manifest_file_problem(mode: Any, workspace: Path) -> str | None:
    """A one-line description of what is wrong with the workspace manifest
    of ``mode`` (a ``LoadedMode``) in ``workspace``, or None when it is
    fine, absent, or the mode has none."""
    model = mode.manifest.viewer_api.workspace
    if model is None or model.type != "manifest" or not model.manifest_file:
        return None
    path = workspace / model.manifest_file
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        return f"{model.manifest_file} cannot be read ({exc})"
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"{model.manifest_file} is not valid JSON ({exc})"
    if not isinstance(value, dict):
        return f"{model.manifest_file} must hold a JSON object, not {type(value).__name__}"
    return None
