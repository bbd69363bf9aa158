"""What the launcher shows about a recent workspace, read from the
workspace itself each time the list is asked for (cheaply: one small
read-only SQLite query, a bounded walk, a few ``stat``\\ s).
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.server.conversations import read_conversations
from pneuma.startup.workspace_lock import holder, is_locked
from pneuma.workspace.mode_switch import workspace_mode

STATE_DIR = ".pneuma"
CONVERSATION_DB = "conversation.db"
# Folders whose size says nothing about the work (and may be huge).
NOT_COUNTED = {".pneuma", ".git", "node_modules", "__pycache__", ".venv"}
MAX_WALKED = 20_000  # entries; past that the size is shown as "at least"


@dataclass(frozen=True)
class FolderSize:
    bytes: int
    files: int
    complete: bool  # False: the walk stopped at MAX_WALKED entries


def folder_size(root: Path, max_entries: int = MAX_WALKED) -> FolderSize:
    """The bytes of the files under ``root``, skipping ``NOT_COUNTED``
    folders and symlinks, stopping after ``max_entries`` entries."""
    total = files = seen = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    if seen > max_entries:
                        return FolderSize(total, files, False)
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name not in NOT_COUNTED:
                                stack.append(Path(entry.path))
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                            files += 1
                    except OSError:
                        continue
        except OSError:
            continue
    return FolderSize(total, files, True)


# The page asks for the list every few seconds; a folder's size changes
# slowly and is the costly part: kept for SIZE_TTL seconds per folder.
SIZE_TTL = 30.0
_sizes: dict[str, tuple[float, FolderSize]] = {}


def cached_folder_size(root: Path) -> FolderSize:
    now = time.monotonic()
    key = str(root)
    cached = _sizes.get(key)
    if cached is not None and now - cached[0] < SIZE_TTL:
        return cached[1]
    size = folder_size(root)
    if len(_sizes) > 1000:
        _sizes.clear()
    _sizes[key] = (now, size)
    return size


def conversations_summary(workspace: Path) -> tuple[int, dict[str, str] | None]:
    """How many conversations the workspace has, and the newest message
    (``{"role": "user"|"agent", "text": …}``) of the one most recently
    updated. Read through the conversation log's own read-only reader
    (``pneuma.server.conversations``); any surprise (no log, a schema it
    does not know, a locked database) is simply none."""
    try:
        found = read_conversations(workspace)
    except (sqlite3.Error, OSError, ValueError):
        return 0, None
    for conversation in found:  # most recently updated first
        message = conversation.last_message
        if message:
            role = "user" if message["role"] == "user" else "agent"
            return len(found), {"role": role, "text": message["text"]}
    return len(found), None


def served_elsewhere(workspace: Path, held: set[tuple[int, int, int]] | None = None
                     ) -> dict[str, Any] | None:
    """``{"pid", "url"}`` of the other process serving ``workspace`` now
    (its lock is held), or None. ``held``: ``held_flocks()`` read once for
    a whole list."""
    if not is_locked(workspace, held):
        return None
    info = holder(workspace) or {}
    url = info.get("url")
    pid = info.get("pid")
    return {"pid": pid if isinstance(pid, int) else None,
            "url": url if isinstance(url, str) and url else None}


# What a workspace's state files say (its mode, its conversations and last
# message) changes only when they do: kept per folder with the files'
# (mtime, size), and read again when those change. The page asks for the
# whole list every few seconds; reopening every log each time made a list
# of 200 cost a tenth of a second.
STATE_FILES = (CONVERSATION_DB, CONVERSATION_DB + "-wal", "session.json")
_state_reads: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}


def _state_signature(workspace: Path) -> tuple[Any, ...]:
    state = workspace / STATE_DIR
    signature: list[Any] = []
    for name in STATE_FILES:
        try:
            st = (state / name).stat()
        except OSError:
            signature.append(None)
            continue
        signature.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(signature)


def last_activity(signature: tuple[Any, ...]) -> float | None:
    """The last time a run wrote the workspace's state, from the files'
    ``_state_signature``. Only files a run writes count: the log itself
    (written at a checkpoint), its WAL while it holds pages, and
    ``session.json``. The launcher's own read-only open of the log
    creates an empty WAL (and touches ``-shm``), so an empty WAL is not
    activity: counting it made "last active" the time of the last look."""
    times = []
    for name, entry in zip(STATE_FILES, signature):
        if entry is None:
            continue
        mtime_ns, size, _inode = entry
        if name.endswith("-wal") and size == 0:
            continue
        times.append(mtime_ns / 1e9)
    return max(times) if times else None


def _state_details(workspace: Path, recorded_mode: str) -> dict[str, Any]:
    key = str(workspace)
    signature = _state_signature(workspace)
    cached = _state_reads.get(key)
    if cached is not None and cached[0] == signature:
        return cached[1]
    conversations, message = conversations_summary(workspace)
    details = {
        "mode": workspace_mode(workspace) or recorded_mode,
        "lastMessage": message,
        "conversations": conversations,
        "lastActivity": last_activity(signature),
    }
    if len(_state_reads) > 1000:
        _state_reads.clear()
    _state_reads[key] = (signature, details)
    return details


def workspace_details(path: str, recorded_mode: str) -> dict[str, Any]:
    """Everything the list shows about one workspace, besides the stored entry."""
    workspace = Path(path)
    if not workspace.is_dir():
        return {"missing": True, "mode": recorded_mode, "lastMessage": None, "conversations": 0,
                "lastActivity": None, "size": None}
    size = cached_folder_size(workspace)
    return {
        "missing": False,
        **_state_details(workspace, recorded_mode),
        "size": {"bytes": size.bytes, "files": size.files, "complete": size.complete},
    }
