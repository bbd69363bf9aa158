"""Workspace file watcher: changes become ``content_update`` broadcasts.

Only files the mode's viewer cares about (its watch globs minus its ignore
globs) are reported, and never Pneuma's own bookkeeping (.git, .pneuma,
.claude, CLAUDE.md, node_modules). A change made through the server's own
API within the last few seconds is reported with ``origin: "self"`` so a
viewer does not reload what it just wrote.

Each real folder of the workspace is watched on its own, one level deep: a
link is never followed (one to ``/`` once made the watcher walk the whole
machine on the event loop and die under ``/proc``), and a file link whose
target lies outside is not reported. The walk, the waits and the reads run
in worker threads. A failure is said in the terminal and the page, and the
watcher starts again (docs/security.md, "The file watcher").
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pneuma.core.file_filter import (  # noqa: F401  (re-exported for the watcher's users)
    ALWAYS_IGNORED,
    GLOB_FLAGS,
    TEXT_SUFFIXES,
    FileFilter,
    is_text_path,
)

log = logging.getLogger(__name__)

SELF_WRITE_WINDOW = 5.0
MAX_INLINE_BYTES = 2 * 1024 * 1024


def read_for_update(root: Path, rel: str, text_suffixes: frozenset[str] = frozenset()) -> str | None:
    """The text content of a file for a content_update, or None for binary
    or oversized files (the viewer fetches those from /content/)."""
    if not (is_text_path(rel) or Path(rel).suffix.lower() in text_suffixes):
        return None
    path = root / rel
    try:
        info = path.stat()
        # A hard link's other name may be .env or lie outside: not sent
        # (and /content/ refuses it too, pneuma.core.sandbox.check_readable).
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
# After a failure the watcher starts again after 0.5 s, then 1, 2, ... up to this.
MAX_RESTART_DELAY = 30.0
# How long one wait for changes lasts before the stop event is looked at again.
WAIT_MS = 500


def is_real_dir(path: str) -> bool:
    """A folder itself, not a link to one (``os.path.isdir`` follows links)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def workspace_folders(root: Path) -> list[str]:
    """Every folder of the workspace that may hold watched files: the walk
    never follows a link (``os.walk`` descends only into real folders) and
    skips Pneuma's own state, version control and dependencies."""
    folders = [str(root)]
    for dirpath, dirnames, _ in os.walk(root, onerror=None):
        dirnames[:] = [d for d in dirnames if d not in _NEVER_SCANNED
                       and not os.path.islink(os.path.join(dirpath, d))]
        folders.extend(os.path.join(dirpath, d) for d in dirnames)
    return folders


def _files_under(root: Path, rel_dir: str, file_filter: FileFilter) -> list[str]:
    """The watched files inside a directory that has just appeared."""
    if any(part in _NEVER_SCANNED for part in Path(rel_dir).parts):
        return []
    top = root / rel_dir
    if not is_real_dir(str(top)):
        return []  # a link to a folder: never walked (it may lead to /)
    found = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d not in _NEVER_SCANNED]
        for name in filenames:
            rel = Path(dirpath, name).relative_to(root).as_posix()
            if file_filter(rel):
                found.append(rel)
    return found


def leads_outside(root: Path, path: str) -> bool:
    """Whether a link at ``path`` resolves outside the workspace: its
    target's content is not the workspace's to send."""
    if not os.path.islink(path):
        return False
    target = os.path.realpath(path)
    return not (target + os.sep).startswith(str(root) + os.sep)


class FolderWatch:
    """inotify watches on the given folders, one level each (watchfiles'
    ``RustNotify`` with ``recursive=False``). A recursive watch would follow
    every link it meets, a link to ``/`` included: it walked the whole
    machine and died under ``/proc`` (issue 23)."""

    def __init__(self, folders: list[str]) -> None:
        from watchfiles._rust_notify import RustNotify

        self._notify = RustNotify(folders, False, False, 300, False, True)

    def watch(self, debounce_ms: int, step_ms: int, timeout_ms: int,
              stop_event: asyncio.Event) -> set[tuple[int, str]] | str:
        return self._notify.watch(debounce_ms, step_ms, timeout_ms, stop_event)

    def close(self) -> None:
        self._notify.close()


def open_folder_watch(folders: list[str]) -> FolderWatch:
    return FolderWatch(folders)


def _open_workspace_watch(root: Path) -> Any:
    """Walk and watch; a folder removed between the two is walked again."""
    for attempt in range(5):
        try:
            return open_folder_watch(workspace_folders(root))
        except FileNotFoundError:
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def _describe(root: Path, changes: set[tuple[int, str]], file_filter: FileFilter,
              self_writes: SelfWrites) -> list[dict[str, Any]]:
    """The ``content_update`` entries of one batch (run in a worker thread:
    a new folder is walked, files are read)."""
    from watchfiles import Change

    latest: dict[str, Change] = {}
    for raw_change, path in changes:
        change = Change(raw_change)
        try:
            rel = Path(path).relative_to(root).as_posix()
        except ValueError:
            continue
        if change == Change.added and is_real_dir(path):
            # inotify watches a new folder only from the moment it is seen,
            # so files written into it right after ``mkdir -p`` (what an
            # agent does) produce no event at all: it is scanned.
            for found in _files_under(root, rel, file_filter):
                latest.setdefault(found, Change.added)
            continue
        if file_filter(rel):
            latest[rel] = change
    files = []
    for rel, change in sorted(latest.items()):
        target = root / rel
        if leads_outside(root, str(target)):
            continue
        exists = target.is_file()
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
                try:
                    entry["mtime"] = target.stat().st_mtime
                except OSError:
                    continue  # gone since
        files.append(entry)
    return files


def _has_new_folder(changes: set[tuple[int, str]]) -> bool:
    return any(change == 1 and is_real_dir(path) for change, path in changes)


async def _watch_until_stopped(
    root: Path, file_filter: FileFilter, self_writes: SelfWrites,
    publish: Callable[[list[dict[str, Any]]], None], stop_event: asyncio.Event,
    debounce_ms: int, on_started: Callable[[], None],
) -> None:
    """Watch and publish until ``stop_event``; raises whatever breaks it.
    The walk, the waits and the reads run in worker threads, so a large or
    odd workspace never stalls the event loop."""
    watch = await asyncio.to_thread(_open_workspace_watch, root)
    on_started()
    try:
        while not stop_event.is_set():
            changes = await asyncio.to_thread(watch.watch, debounce_ms, 10, WAIT_MS, stop_event)
            if not isinstance(changes, set):
                continue  # "timeout"; "stop" and "signal" end at the loop's test
            if _has_new_folder(changes):
                # Watch the new folders before they are scanned, so a file
                # written between the scan and the watch is not missed; the
                # old watch's last events are read before it is closed.
                renewed = await asyncio.to_thread(_open_workspace_watch, root)
                leftover = await asyncio.to_thread(watch.watch, 1, 1, 1, None)
                watch.close()
                watch = renewed
                if isinstance(leftover, set):
                    changes |= leftover
            files = await asyncio.to_thread(_describe, root, changes, file_filter, self_writes)
            if files:
                publish(files)
    finally:
        watch.close()


async def watch_workspace(
    root: Path,
    file_filter: FileFilter,
    self_writes: SelfWrites,
    publish: Callable[[list[dict[str, Any]]], None],
    stop_event: asyncio.Event,
    *,
    debounce_ms: int = 20,
    notify: Callable[[dict[str, Any]], None] | None = None,
    started: asyncio.Event | None = None,
) -> None:
    """Run until ``stop_event`` is set, publishing each batch of changes.

    ``started`` is set once the first watches are in place. A failure is
    said once in the terminal and, through ``notify``, in the page; the
    watcher starts again after a growing pause (at most
    ``MAX_RESTART_DELAY``) and the page is told when live updates are back."""
    root = root.resolve()
    started = started or asyncio.Event()
    delay = 0.5
    failed = False
    ran = False

    def on_started() -> None:
        nonlocal ran
        ran = True
        started.set()
        if failed:
            log.info("the file watcher runs again")
            if notify is not None:
                notify({"type": "system_note", "text": "Live updates of the files are back."})

    while not stop_event.is_set():
        ran = False
        try:
            await _watch_until_stopped(root, file_filter, self_writes, publish, stop_event,
                                       debounce_ms, on_started)
            return
        except Exception as exc:  # noqa: BLE001 - whatever it was, live updates must come back
            if ran:
                delay = 0.5  # it ran: not the same failure in a loop
            failed = True
            log.warning("the file watcher failed (%s); starting it again in %.1f s",
                        exc, delay)
            if notify is not None:
                notify({"type": "error", "code": "watcher_failed",
                        "message": f"Live updates of the files stopped ({exc}); "
                                   f"starting again in {delay:g} s."})
        finally:
            started.set()  # the server's start never waits on a broken watcher
        try:
            await asyncio.wait_for(stop_event.wait(), delay)
        except TimeoutError:
            pass
        delay = min(delay * 2, MAX_RESTART_DELAY)
