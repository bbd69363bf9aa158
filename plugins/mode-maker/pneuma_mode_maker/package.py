"""The mode package the workspace holds: made on first start, found after.

The workspace *is* the package (``pyproject.toml`` at its top, the Python
package beside it), so Check, Install and Package act on the workspace
folder itself. Which Python package is the mode's comes from the entry
point Pneuma loads it by (``[project.entry-points.pneuma]``), as it does
once the package is installed.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.api import AGENT_INSTRUCTION_FILES, ToolError, generate_mode_package

PYPROJECT = "pyproject.toml"
# What Pneuma and the agent keep in any workspace: not the person's files.
# (.gitignore too: the skill installer keeps a line of its own there.)
PNEUMAS_OWN = frozenset({".pneuma", ".claude", ".git", ".mcp.json", ".gitignore", *AGENT_INSTRUCTION_FILES})
DEFAULT_NAME = "mymode"


@dataclass(frozen=True)
class ModePackage:
    """The package in the workspace: its distribution, its mode's entry
    point name and the folder of its Python package (relative)."""

    distribution: str
    entry_point: str
    package: str


def ensure_package(workspace: Path, params: dict[str, Any]) -> list[str]:
    """Write the new mode's package into ``workspace`` when it has none yet
    (no ``pyproject.toml``); the files written. ``params``: ``name`` (the
    new mode's name) and ``from`` (an installed mode to fork, optional)."""
    if (workspace / PYPROJECT).exists():
        return []
    theirs = sorted(entry.name for entry in workspace.iterdir() if entry.name not in PNEUMAS_OWN)
    if theirs:  # never a package spread among the person's own files
        raise ToolError("E_CONFLICT", f"this folder holds files of its own ({', '.join(theirs[:5])}) and no "
                        "pyproject.toml: start the mode maker in an empty folder, or in a mode package's folder")
    name = str(params.get("name") or DEFAULT_NAME).strip()
    fork = str(params.get("from") or "").strip() or None
    return generate_mode_package(workspace, name, fork_from=fork).written


def find_package(workspace: Path) -> ModePackage:
    """The package ``pyproject.toml`` declares, or ``ToolError`` saying what is missing."""
    try:
        project = tomllib.loads((workspace / PYPROJECT).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ToolError("E_NOT_FOUND", "the workspace has no pyproject.toml: it is not a mode package",
                        hint="restart with an empty folder, or write pyproject.toml") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ToolError("E_PARSE_FAIL", f"pyproject.toml cannot be read: {exc}") from None
    table = project.get("project") if isinstance(project.get("project"), dict) else {}
    points = table.get("entry-points", {}).get("pneuma") if isinstance(table, dict) else None
    if not isinstance(points, dict) or not points:
        raise ToolError("E_PARSE_FAIL", "pyproject.toml declares no [project.entry-points.pneuma]: "
                                        "Pneuma would not find the mode")
    entry, target = next(iter(points.items()))
    package = str(target).split(":", 1)[0].split(".", 1)[0]
    return ModePackage(distribution=str(table.get("name", "")), entry_point=str(entry), package=package)


def read_manifest(workspace: Path, package: ModePackage) -> dict[str, Any]:
    """The package's manifest.json as JSON, or ``ToolError`` naming the problem."""
    path = workspace / package.package / "manifest.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ToolError("E_NOT_FOUND", f"{package.package}/manifest.json is missing") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ToolError("E_PARSE_FAIL", f"{package.package}/manifest.json is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ToolError("E_PARSE_FAIL", f"{package.package}/manifest.json is not a JSON object")
    return data
