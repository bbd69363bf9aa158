"""Workspace file watcher: changes become ``content_update`` broadcasts.

Only files the mode's viewer cares about (its watch globs minus its ignore
globs) are reported, and never Pneuma's own bookkeeping (.git, .pneuma,
.claude, CLAUDE.md, node_modules). A change made through the server's own
API within the last few seconds is reported with ``origin: "self"`` so a
viewer does not reload what it just wrote.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from wcmatch import glob as wcglob

log = logging.getLogger(__name__)

# ".<name>.<8 hex>.tmp": the temp files of Pneuma's own atomic writes
# (pneuma.tools.files.atomic_write_bytes: the file API, the tools, the skill
# installer, the session state); "*.pneuma-tmp": the native runtime's. They
# exist for an instant and would otherwise reach the viewer as files of their
# own, or as deletions.
ALWAYS_IGNORED = (".git/**", ".pneuma/**", ".claude/**", "CLAUDE.md", "node_modules/**",
                  "**/node_modules/**", "**/.git/**", "**/__pycache__/**", "**/.DS_Store",
                  "**/.*.????????.tmp", "**/*.pneuma-tmp")
GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE
SELF_WRITE_WINDOW = 5.0
MAX_INLINE_BYTES = 2 * 1024 * 1024

TEXT_SUFFIXES = {
    ".md", ".markdown", ".txt", ".html", ".htm", ".css", ".js", ".mjs", ".json", ".excalidraw",
    ".svg", ".tex", ".bib", ".csv", ".tsv", ".xml", ".yaml", ".yml", ".toml", ".py", ".ts",
    ".sty", ".cls",
}


class FileFilter:
    """Which workspace paths the viewer watches: ``watch`` minus ``ignore``
    and the host's own ignores. The globs are compiled once: a checkpoint
    asks this of thousands of files, and compiling them per call cost more
    than the stat."""

    def __init__(self, watch: Iterable[str], ignore: Iterable[str], text_suffixes: Iterable[str] = ()):
        self.watch = list(watch) or ["**/*"]
        self.ignore = list(ALWAYS_IGNORED) + list(ignore)
        # the mode's own text formats (manifest viewer.textSuffixes), sent as text too
        self.text_suffixes = frozenset(s.lower() for s in text_suffixes)
        self._watch = wcglob.compile(self.watch, flags=GLOB_FLAGS)
        self._ignore = wcglob.compile(self.ignore, flags=GLOB_FLAGS)

    def __call__(self, rel: str) -> bool:
        return not self._ignore.match(rel) and bool(self._watch.match(rel))

    def is_text(self, rel: str) -> bool:
        return is_text_path(rel) or Path(rel).suffix.lower() in self.text_suffixes


def is_text_path(path: str) -> bool:
    return Path(path).suffix.lower() in TEXT_SUFFIXES


def read_for_update(root: Path, rel: str, text_suffixes: frozenset[str] = frozenset()) -> str | None:
    """The text content of a file for a content_update, or None for binary
    or oversized files (the viewer fetches those from /content/)."""
    if not (is_text_path(rel) or Path(rel).suffix.lower() in text_suffixes):
        return None
    path = root / rel
    try:
        info = path.stat()
        # A hard link's other name may be .env or lie outside: not sent
        # (and /content/ refuses it too, pneuma.tools.sandbox.check_readable).
        if info.st_size > MAX_INLINE_BYTES or info.st_nlink > 1:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


class SelfWrites:
    """Paths recently written through the server's API."""

    def __init__(self) -> None:
        self._written: dict[str, float] = {}

    def mark(self, rel: str) -> None:
        self._written[rel] = time.monotonic()

    def is_self(self, rel: str) -> bool:
        when = self._written.get(rel)
        if when is None:
            return False
        if time.monotonic() - when > SELF_WRITE_WINDOW:
            del self._written[rel]
            return False
        return True


def list_watched_files(root: Path, file_filter: FileFilter) -> list[str]:
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and file_filter(rel):
            found.append(rel)
    return sorted(found)


_NEVER_SCANNED = {".git", ".pneuma", ".claude", "node_modules", "__pycache__"}


def _files_under(root: Path, rel_dir: str, file_filter: FileFilter) -> list[str]:
    """The watched files inside a directory that has just appeared."""
    if any(part in _NEVER_SCANNED for part in Path(rel_dir).parts):
        return []
    found = []
    for dirpath, dirnames, filenames in os.walk(root / rel_dir):
        dirnames[:] = [d for d in dirnames if d not in _NEVER_SCANNED]
        for name in filenames:
            rel = Path(dirpath, name).relative_to(root).as_posix()
            if file_filter(rel):
                found.append(rel)
    return found


async def watch_workspace(
    root: Path,
    file_filter: FileFilter,
    self_writes: SelfWrites,
    publish: Callable[[list[dict[str, Any]]], None],
    stop_event: asyncio.Event,
    *,
    debounce_ms: int = 20,
) -> None:
    """Run until ``stop_event`` is set, publishing each batch of changes."""
    from watchfiles import Change, awatch

    root = root.resolve()

    def accept(change: Change, path: str) -> bool:
        try:
            rel = Path(path).relative_to(root).as_posix()
        except ValueError:
            return False
        if file_filter(rel):
            return True
        # A new directory is let through to be scanned: inotify watches it
        # only from the moment it is seen, so files written into it right
        # after ``mkdir -p`` (what an agent does) produce no event at all.
        return change == Change.added and os.path.isdir(path)

    async for changes in awatch(
        root,
        watch_filter=accept,
        debounce=debounce_ms,
        step=10,
        stop_event=stop_event,
        rust_timeout=500,
        yield_on_timeout=False,
        recursive=True,
    ):
        latest: dict[str, Change] = {}
        for change, path in changes:
            rel = Path(path).relative_to(root).as_posix()
            if change == Change.added and os.path.isdir(path):
                for found in _files_under(root, rel, file_filter):
                    latest.setdefault(found, Change.added)
                continue
            latest[rel] = change
        files = []
        for rel, change in sorted(latest.items()):
            exists = (root / rel).is_file()
            entry: dict[str, Any] = {
                "path": rel,
                "origin": "self" if self_writes.is_self(rel) else "external",
            }
            if change == Change.deleted and not exists:
                entry["deleted"] = True
                entry["content"] = None
            elif not exists:
                continue  # a directory, or a file already gone again
            else:
                entry["content"] = read_for_update(root, rel, file_filter.text_suffixes)
                if entry["content"] is None:
                    entry["binary"] = True
                    entry["mtime"] = (root / rel).stat().st_mtime
            files.append(entry)
        if files:
            publish(files)
