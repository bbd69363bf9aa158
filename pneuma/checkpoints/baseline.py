"""A turn's checkpoint in two halves, so that recording never holds the
agent up (docs/checkpoints.md, "Turns are never held up").

Before a message reaches the agent only ``stat_walk`` runs: one ``stat``
per watched file, through the host's sandbox, no file read. What those
stats say is the workspace before the turn. ``keep`` then reads and stores
what changed since the last checkpoint (or since the standing baseline
taken when the session started) while the agent already works. Each file
is read from an fd whose ``fstat`` must still match the stat of the turn's
start: then what was read is exactly the file as the turn found it. A file
the agent changed first no longer matches; it is listed as not kept
(``CHANGED_FIRST``), and a rewind says so for that file instead of
writing back a content that is not the one it had.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import cast

from pneuma.checkpoints.blobs import BlobStore, sha256
from pneuma.checkpoints.model import FileEntry, FileMap, SkipReason
from pneuma.checkpoints.scan import NEVER_WALKED, racy
from pneuma.core.errors import ToolError
from pneuma.core.sandbox import READ_ONLY_TOP, Sandbox, _segment_forbidden

# Why a file is not kept: the agent changed it after the turn began and
# before its content could be read (see the module's docstring).
CHANGED_FIRST = cast(SkipReason, "changed_first")
WHY_CHANGED_FIRST = "it changed before Pneuma could keep it (the agent was already at work)"


class Stopped(Exception):
    """``keep`` was asked to stop (the server is closing)."""


@dataclass(frozen=True, slots=True)
class Seen:
    """One file's stat at the turn's start."""

    size: int
    mtime_ns: int
    ino: int
    mode: int
    nlink: int

    def matches(self, info: os.stat_result) -> bool:
        return (info.st_size, info.st_mtime_ns, info.st_ino) == \
            (self.size, self.mtime_ns, self.ino)


Stats = dict[str, Seen]


class StatWalker:
    """Walks the watched files' stats (``walk``), remembering which names
    it takes: the names of a workspace change little from one turn to the
    next, and matching them against the patterns costs more than their
    ``stat`` (``CACHE_NAMES`` at most)."""

    CACHE_NAMES = 200_000

    def __init__(self, sandbox: Sandbox, watched: Callable[[str], bool]) -> None:
        self.sandbox = sandbox
        self.watched = watched
        self._taken: dict[str, bool] = {}

    def walk(self) -> Stats:
        """Every watched regular file's stat, walked as ``scan`` walks (by fd
        from the sandbox's root, never through a symlink, the same folders
        and names left out), reading nothing."""
        if len(self._taken) > self.CACHE_NAMES:
            self._taken.clear()
        found: Stats = {}
        root_fd = self.sandbox.open_dir("")
        try:
            for folder, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=root_fd,
                                                                follow_symlinks=False):
                prefix = "" if folder == "." else folder[2:] + "/"
                dirnames[:] = [d for d in dirnames if self._takes(prefix + d + "/")]
                for name in filenames:
                    rel = prefix + name
                    if not self._takes(rel):
                        continue
                    try:
                        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    if stat.S_ISREG(info.st_mode):
                        found[rel] = Seen(info.st_size, info.st_mtime_ns, info.st_ino,
                                          info.st_mode & 0o7777, info.st_nlink)
        finally:
            os.close(root_fd)
        return found

    def _takes(self, rel: str) -> bool:
        taken = self._taken.get(rel)
        if taken is None:
            taken = self._taken[rel] = self._decide(rel)
        return taken

    def _decide(self, rel: str) -> bool:
        name = rel.rstrip("/").rpartition("/")[2]
        if _segment_forbidden(name, self.sandbox.forbidden) is not None:
            return False
        if rel.endswith("/"):
            return name not in NEVER_WALKED
        if "/" not in rel and name in READ_ONLY_TOP:
            return False
        if not self.watched(rel):
            return False
        try:
            self.sandbox.normalize(rel)
        except ToolError:
            return False  # a name the sandbox refuses: no file a restore could write
        return True


def stat_walk(sandbox: Sandbox, watched: Callable[[str], bool]) -> Stats:
    """``StatWalker(sandbox, watched).walk()``, once."""
    return StatWalker(sandbox, watched).walk()


def keep(sandbox: Sandbox, blobs: BlobStore, seen: Stats, known: Iterable[FileMap],
         max_file_bytes: int, stop: Callable[[], bool] = lambda: False,
         read_early: FileMap | None = None) -> FileMap:
    """The files of ``seen`` as a checkpoint's map, their contents stored in
    ``blobs``. A file whose stat is that of its entry in one of the
    ``known`` maps (the newest checkpoint, the baseline) keeps that entry's
    hash unread; one in ``read_early`` (``read_first``, of the same
    ``seen``) keeps that entry; any other is read and checked (module
    docstring)."""
    maps = [m for m in known if m]
    early = read_early or {}
    files: FileMap = {}
    for rel, info in seen.items():
        if stop():
            raise Stopped
        files[rel] = early.get(rel) or _known(rel, info, maps, blobs) or \
            _read(sandbox, blobs, rel, info, max_file_bytes)
    return files


# What ``read_first`` may read while a message waits: a handful of files.
EARLY_FILES = 64
EARLY_BYTES = 4 * 1024 * 1024


def read_first(sandbox: Sandbox, blobs: BlobStore, seen: Stats, known: Iterable[FileMap],
               max_file_bytes: int, changed: bool = False) -> FileMap:
    """The few files ``keep`` would have to read that were written just
    before the last recording (an agent's last writes of its turn: their
    entries carry no mtime, see ``racy``), read and stored now, before the
    message goes: an agent quick to write them again would otherwise leave
    them not kept. With ``changed`` (a turn's end), every file whose stat
    is no known entry's too. Others are left to ``keep``; at most
    ``EARLY_FILES`` files and ``EARLY_BYTES`` bytes."""
    maps = [m for m in known if m]
    early: FileMap = {}
    budget = EARLY_BYTES
    for rel, info in seen.items():
        if len(early) >= EARLY_FILES:
            break
        if info.size > budget:
            continue
        if not (_written_just_before(rel, info, maps)
                or (changed and not any(_same(files.get(rel), info) for files in maps))):
            continue
        entry = _read(sandbox, blobs, rel, info, max_file_bytes)
        if entry.hash is not None:
            early[rel] = entry
            budget -= info.size
    return early


def _same(entry: FileEntry | None, info: Seen) -> bool:
    return (entry is not None and entry.hash is not None and bool(entry.mtime_ns)
            and (entry.size, entry.mtime_ns, entry.ino) == (info.size, info.mtime_ns, info.ino))


def _written_just_before(rel: str, info: Seen, maps: list[FileMap]) -> bool:
    for files in maps:
        entry = files.get(rel)
        if (entry is not None and entry.hash is not None and not entry.mtime_ns
                and (entry.size, entry.ino) == (info.size, info.ino)):
            return True
    return False


def _known(rel: str, info: Seen, maps: list[FileMap], blobs: BlobStore) -> FileEntry | None:
    for files in maps:
        entry = files.get(rel)
        if (entry is not None and entry.hash is not None and entry.mtime_ns
                and (entry.size, entry.mtime_ns, entry.ino) == (info.size, info.mtime_ns,
                                                                info.ino)
                and blobs.has(entry.hash)):
            return FileEntry(entry.hash, info.size, info.mode, info.mtime_ns, info.ino)
    return None


def _not_kept(info: Seen, reason: SkipReason) -> FileEntry:
    return FileEntry(None, info.size, info.mode, info.mtime_ns, info.ino, reason)


def _read(sandbox: Sandbox, blobs: BlobStore, rel: str, info: Seen,
          max_file_bytes: int) -> FileEntry:
    if info.nlink > 1:
        return _not_kept(info, "hard_link")
    if info.size > max_file_bytes:
        return _not_kept(info, "too_big")
    try:
        fd, opened = sandbox.open_file(rel)
    except ToolError as exc:
        reason: SkipReason = "hard_link" if exc.details.get("reason") == "hard_link" \
            else CHANGED_FIRST
        return _not_kept(info, reason)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return _not_kept(info, CHANGED_FIRST)  # deleted or replaced since the stat
    except OSError:
        return _not_kept(info, "unreadable")
    with os.fdopen(fd, "rb") as handle:
        if not info.matches(opened):
            return _not_kept(info, CHANGED_FIRST)
        data = handle.read(max_file_bytes + 1)
        if not info.matches(os.fstat(handle.fileno())) or len(data) != info.size:
            return _not_kept(info, CHANGED_FIRST)
    digest = sha256(data)
    blobs.put(data, digest)
    # As in scan: a file written so recently that another write in the same
    # mtime tick could keep its size and mtime gets no mtime, so the next
    # recording reads it again rather than trusting its stat.
    mtime_ns = 0 if racy(info.mtime_ns, time.time_ns()) else info.mtime_ns
    return FileEntry(digest, info.size, info.mode, mtime_ns, info.ino)
