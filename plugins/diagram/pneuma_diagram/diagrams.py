"""The diagrams of a workspace: every ``*.mmd`` file outside the folders
Pneuma and tools keep to themselves, in a stable order."""

from __future__ import annotations

from pathlib import Path

SUFFIX = ".mmd"
_SKIPPED_DIRS = {".git", ".pneuma", ".claude", "node_modules", "exports", ".venv"}


def diagram_files(workspace: Path) -> list[str]:
    """Workspace-relative POSIX paths of the diagrams, sorted."""
    found: list[str] = []
    root = workspace.resolve()
    for path in root.rglob(f"*{SUFFIX}"):
        rel = path.relative_to(root)
        if any(part in _SKIPPED_DIRS or part.startswith(".") for part in rel.parts[:-1]):
            continue
        if path.is_file() and not path.is_symlink():
            found.append(rel.as_posix())
    return sorted(found)
