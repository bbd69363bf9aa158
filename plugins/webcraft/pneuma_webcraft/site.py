"""The site in a workspace: which files belong to it, read through Pneuma's
sandbox, and a private copy of them to render from.

Exports and screenshots never point Chromium at the workspace itself: a
symlink there could lead anywhere on disk, and the sandbox is what decides
which files the agent's site may use. So every file is read through
``Sandbox.read_bytes`` and written into a temporary folder first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pneuma.api import AGENT_INSTRUCTION_FILES, Sandbox, ToolError

# The same extensions the viewer watches (manifest.json viewer.watchPatterns).
SITE_SUFFIXES = frozenset({
    ".html", ".htm", ".css", ".js", ".mjs", ".json", ".svg", ".png", ".jpg", ".jpeg", ".gif",
    ".webp", ".avif", ".ico", ".woff", ".woff2", ".ttf", ".otf", ".txt", ".xml", ".webmanifest",
})
# Folders that are Pneuma's, the agent's or a tool's, never the site's.
SKIPPED_DIRS = frozenset({".pneuma", ".claude", ".git", "node_modules", ".venv", "exports", "__pycache__"})
SKIPPED_FILES = frozenset(AGENT_INSTRUCTION_FILES)
MAX_FILE_BYTES = 25 * 1024 * 1024

VIEWPORTS: dict[str, tuple[int, int]] = {
    "phone": (390, 844),
    "tablet": (820, 1180),
    "desktop": (1280, 800),
}


@dataclass(frozen=True)
class SiteFile:
    path: str  # relative, with forward slashes
    data: bytes


def site_paths(workspace: Path) -> list[str]:
    """Every file of the site, relative and sorted (index.html first)."""
    sandbox = Sandbox(workspace)
    found: list[str] = []
    for folder, dirs, files in os.walk(workspace):
        rel_folder = Path(folder).relative_to(workspace)
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in files:
            rel = (rel_folder / name).as_posix()
            if name in SKIPPED_FILES or Path(name).suffix.lower() not in SITE_SUFFIXES:
                continue
            if sandbox.is_allowed(rel):
                found.append(rel)
    return sorted(found, key=lambda p: (p != "index.html", p.count("/"), p))


def page_paths(workspace: Path) -> list[str]:
    return [p for p in site_paths(workspace) if p.lower().endswith((".html", ".htm"))]


def read_site(workspace: Path) -> list[SiteFile]:
    """The site's files, each read through the sandbox (a symlink out of the
    workspace or a forbidden name is an error, not a silent copy)."""
    sandbox = Sandbox(workspace)
    return [SiteFile(rel, sandbox.read_bytes(rel, MAX_FILE_BYTES)[0]) for rel in site_paths(workspace)]


def copy_site(workspace: Path, target: Path) -> list[str]:
    """Write the site into ``target`` (a fresh folder); returns its pages."""
    pages: list[str] = []
    for item in read_site(workspace):
        out = target / item.path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(item.data)
        if item.path.lower().endswith((".html", ".htm")):
            pages.append(item.path)
    return pages


def viewport_size(name: str) -> tuple[int, int]:
    try:
        return VIEWPORTS[name]
    except KeyError:
        raise ToolError("E_BAD_ARGS", f"unknown viewport {name!r}",
                        hint="use phone, tablet or desktop") from None
