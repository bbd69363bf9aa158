"""Which mode `pneuma mode check` looks at: an installed mode by name, or a
folder holding a mode package that is not installed (a mode under
construction in mode-maker: pyproject.toml beside a package with a
manifest.json).

A folder is loaded without installing it: its root goes first on
``sys.path`` of the process that checks it (the checks run in a child
process, so the person's own process never sees it) and its plugin module,
named by the ``pneuma`` entry point of its pyproject.toml, is registered
with a plugin manager of its own.
"""

from __future__ import annotations

import json
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError

SKIP_DIRS = frozenset({"node_modules", "__pycache__", ".venv", "venv", "build", "dist", ".git",
                       ".pneuma", ".claude"})


@dataclass(frozen=True)
class ModeTarget:
    """Where a mode's files are. ``root``: the project folder (pyproject.toml)
    when known, else the package itself; ``plugin_module``: the module its
    entry point names (a folder target only)."""

    name: str
    package_dir: Path
    root: Path
    plugin_module: str | None = None

    @property
    def manifest_path(self) -> Path:
        return self.package_dir / "manifest.json"

    def raw_manifest(self) -> Any:
        return json.loads(self.manifest_path.read_text(encoding="utf-8"))

    def python_files(self) -> list[Path]:
        return sorted(path for path in self.root.rglob("*.py")
                      if not SKIP_DIRS.intersection(path.relative_to(self.root).parts))


def looks_like_folder(target: str | Path) -> bool:
    text = str(target)
    return isinstance(target, Path) or "/" in text or text.startswith(".") or Path(text).is_dir()


def resolve(target: str | Path) -> ModeTarget:
    """The mode ``target`` names, or ToolError (E_NOT_FOUND, E_BAD_ARGS)."""
    if looks_like_folder(target):
        return folder_target(Path(target))
    return installed_target(str(target))


def installed_target(name: str) -> ModeTarget:
    from pneuma.host.modes import UnknownModeError
    from pneuma.host.registry import get_mode

    try:
        mode = get_mode(name)
    except UnknownModeError as exc:
        raise ToolError("E_NOT_FOUND", str(exc)) from None
    package_dir = mode.package_dir.resolve()
    project = package_dir.parent
    root = project if (project / "pyproject.toml").is_file() else package_dir
    return ModeTarget(mode.name, package_dir, root)


def folder_target(folder: Path) -> ModeTarget:
    folder = folder.expanduser().resolve()
    if not folder.is_dir():
        raise ToolError("E_NOT_FOUND", f"{folder} is not a folder")
    module = entry_point_module(folder)
    packages = sorted(p.parent for p in folder.glob("*/manifest.json")
                      if not SKIP_DIRS.intersection(p.relative_to(folder).parts))
    if module is not None:
        named = folder / module.split(".")[0]
        packages = [p for p in packages if p == named] or packages
    if len(packages) != 1:
        found = ", ".join(p.name for p in packages) or "none"
        raise ToolError("E_BAD_ARGS", f"{folder} is not a mode package: expected one package folder "
                        f"with a manifest.json beside pyproject.toml (found: {found})")
    package_dir = packages[0]
    try:
        name = str(json.loads((package_dir / "manifest.json").read_text(encoding="utf-8"))["name"])
    except (OSError, ValueError, KeyError, TypeError):
        name = package_dir.name.removeprefix("pneuma_")
    return ModeTarget(name, package_dir, folder, module or package_dir.name)


def entry_point_module(folder: Path) -> str | None:
    """The module the folder's pyproject.toml names in ``[project.entry-points.pneuma]``."""
    try:
        data = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    points = data.get("project", {}).get("entry-points", {}).get("pneuma", {})
    values = [str(v).split(":")[0] for v in points.values()] if isinstance(points, dict) else []
    return values[0] if values else None


def expose_folder(target: ModeTarget, scratch: Path) -> None:
    """Make the folder's mode visible to this process as if installed: its
    root first on ``sys.path`` and a distribution record in ``scratch``
    declaring its entry point, so every part of the host (the server, the
    exporters, the launcher's listing) finds it the one way it finds modes.
    Call only in the checking process; an installed mode of the same name
    is shadowed (the first entry point of a name wins)."""
    import importlib

    module = target.plugin_module or target.package_dir.name
    info = scratch / f"pneuma_mode_check_{target.name.replace('-', '_')}-0.0.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: pneuma-mode-check-{target.name}\n"
                                   "Version: 0.0.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[pneuma]\n{target.name} = {module}\n", encoding="utf-8")
    sys.path[:0] = [str(scratch), str(target.root)]
    importlib.invalidate_caches()
