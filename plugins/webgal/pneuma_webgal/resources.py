"""What a WebGAL game folder holds: resource files per folder, scenes, animations.

The engine fetches every resource as ``./game/<folder>/<name>`` from a web server,
where names are case-sensitive; this index answers "does that exact name exist"
and "which existing names are close to it" for the validator and lists the
resources for ``list_project_resources``.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

#: Folders of game/ whose files scripts refer to.
FOLDERS: tuple[str, ...] = ("background", "figure", "bgm", "vocal", "video", "scene", "animation", "tex")

#: Response keys of list_project_resources -> folder.
LISTED: dict[str, str] = {
    "backgrounds": "background",
    "figures": "figure",
    "bgm": "bgm",
    "vocals": "vocal",
    "scenes": "scene",
}

# Files that operating systems and editors leave behind; never resources.
_JUNK = {"desktop.ini", "Thumbs.db", ".DS_Store"}


def game_root_for(workspace: Path, rel_path: str | None = None) -> Path:
    """The game/ folder a scene belongs to.

    A scene at ``<x>/scene/<name>.txt`` belongs to ``<x>``; anything else (or no
    path) to the workspace's ``game/`` folder.
    """
    if rel_path:
        parts = PurePosixPath(rel_path).parts
        for i in range(len(parts) - 2, -1, -1):
            if parts[i] == "scene":
                return workspace.joinpath(*parts[:i]) if i else workspace
    return workspace / "game"


@dataclass
class GameIndex:
    """The files of one game folder."""

    root: Path
    exists: bool = False
    files: dict[str, list[str]] = field(default_factory=dict)  # folder -> sorted names
    animation_table: list[str] | None = None  # names listed in animationTable.json
    animation_table_error: str | None = None
    _sets: dict[str, set[str]] = field(default_factory=dict, repr=False)
    _lower: dict[str, dict[str, list[str]]] = field(default_factory=dict, repr=False)

    def names(self, folder: str) -> list[str]:
        return self.files.get(folder, [])

    def has(self, folder: str, name: str) -> bool:
        return name in self._sets.get(folder, ())

    def case_variants(self, folder: str, name: str) -> list[str]:
        """Existing names equal to ``name`` ignoring case (but not equal)."""
        return [n for n in self._lower.get(folder, {}).get(name.lower(), []) if n != name]

    def near(self, folder: str, name: str, limit: int = 3) -> list[str]:
        """Existing names in ``folder`` that are probably what ``name`` meant."""
        found: list[str] = []

        def add(items):
            for item in items:
                if item not in found and item != name:
                    found.append(item)

        add(self.case_variants(folder, name))
        stripped = name.strip()
        if stripped != name:
            if self.has(folder, stripped):
                add([stripped])
            add(self.case_variants(folder, stripped))
        stem = PurePosixPath(stripped).stem.lower()
        if stem:
            add(n for n in self.names(folder) if PurePosixPath(n).stem.lower() == stem)
        names = self.names(folder)
        add(difflib.get_close_matches(stripped, names, n=limit, cutoff=0.6))
        if len(found) < limit:
            lowered = {n.lower(): n for n in names}
            add(lowered[m] for m in difflib.get_close_matches(stripped.lower(), list(lowered), n=limit, cutoff=0.5))
        return found[:limit]

    def folders_holding(self, name: str, exclude: str) -> list[str]:
        return [f for f in FOLDERS if f != exclude and self.has(f, name)]


def _walk(folder: Path) -> list[str]:
    """Every file under ``folder`` as a POSIX path relative to it (hidden files skipped)."""
    names: list[str] = []
    stack = [("", os.fspath(folder))]
    while stack:
        prefix, path = stack.pop()
        try:
            entries = os.scandir(path)
        except OSError:
            continue
        with entries:
            for entry in entries:
                name = entry.name
                if name.startswith(".") or name in _JUNK:
                    continue
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    continue
                if is_dir:
                    if not entry.is_symlink():
                        stack.append((prefix + name + "/", entry.path))
                else:
                    names.append(prefix + name)
    names.sort()
    return names


def build_index(game_root: Path) -> GameIndex:
    index = GameIndex(root=game_root, exists=game_root.is_dir())
    if not index.exists:
        return index
    for folder in FOLDERS:
        path = game_root / folder
        names = _walk(path) if path.is_dir() else []
        index.files[folder] = names
        index._sets[folder] = set(names)
        lower: dict[str, list[str]] = {}
        for n in names:
            lower.setdefault(n.lower(), []).append(n)
        index._lower[folder] = lower
    table = game_root / "animation" / "animationTable.json"
    if table.is_file():
        try:
            data = json.loads(table.read_text(encoding="utf-8-sig"))
            if isinstance(data, list):
                index.animation_table = [str(x) for x in data]
            else:
                index.animation_table_error = "animationTable.json is not a JSON array"
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            index.animation_table_error = f"animationTable.json cannot be read: {exc}"
    return index


#: A scene is a WebGAL script; anything else in game/scene/ (notes, drafts) is not one.
SCENE_SUFFIX = ".txt"


def list_resources(index: GameIndex) -> dict[str, list[str]]:
    """The list_project_resources response: names relative to their folder,
    and under ``scenes`` only the scripts a ``changeScene`` can load."""
    listed = {key: list(index.names(folder)) for key, folder in LISTED.items()}
    listed["scenes"] = [n for n in listed["scenes"] if n.lower().endswith(SCENE_SUFFIX)]
    return listed
