"""The workspace's watched files now, read through the host's sandbox.

Folders are listed by fd (``os.fwalk`` from the sandbox's root fd, which
never follows a symlink), file contents read with ``Sandbox.open_file``
(walked by fd, ``O_NOFOLLOW``, a hard-linked file refused). Symlinks are
not recorded at all: what one points at is recorded under its own name, if
it is watched. A file whose size, mtime and inode match the previous
checkpoint's entry keeps that entry's hash without being read, so a
recording where little changed costs one ``stat`` per file.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable

from pneuma.checkpoints.blobs import BlobStore, sha256
from pneuma.checkpoints.model import FileEntry, FileMap
from pneuma.core.errors import ToolError
from pneuma.core.sandbox import READ_ONLY_TOP, Sandbox, _segment_forbidden

# Never descended into, whatever the mode's patterns say: Pneuma's own
# state, the agent's settings, version control and dependencies.
NEVER_WALKED = frozenset({".pneuma", ".git", "node_modules", ".claude", "__pycache__"})
# Coarser than any file system's mtime granularity in use (ext4, APFS: 1 ns;
# FAT: 2 s).
RACY_NS = 2_000_000_000
# Finer than a second: the kernel's clock tick (1-10 ms), with room to spare.
FINE_RACY_NS = 100_000_000


class RememberedFilter:
    """A watch filter that remembers its answer for each path (matching the
    patterns costs more than the ``stat`` of the file), up to ``limit``."""

    def __init__(self, test: Callable[[str], bool], limit: int = 1 << 16) -> None:
        self.test = test
        self._answers: dict[str, bool] = {}
        self._limit = limit

    def __call__(self, rel: str) -> bool:
        answer = self._answers.get(rel)
        if answer is None:
            if len(self._answers) >= self._limit:
                self._answers.clear()
            answer = self._answers[rel] = self.test(rel)
        return answer


def scan(sandbox: Sandbox, watched: Callable[[str], bool], blobs: BlobStore | None,
         previous: FileMap | None, max_file_bytes: int) -> FileMap:
    """``{path: FileEntry}`` for every watched regular file. With ``blobs``
    the content of each new or changed file is stored there; without, it is
    only hashed (for a comparison with the workspace as it is now)."""
    previous = previous or {}
    found: FileMap = {}
    root_fd = sandbox.open_dir("")
    try:
        for folder, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=root_fd,
                                                            follow_symlinks=False):
            dirnames[:] = [d for d in dirnames if d not in NEVER_WALKED
                           and _segment_forbidden(d, sandbox.forbidden) is None]
            prefix = "" if folder == "." else folder[2:] + "/"
            for name in filenames:
                rel = prefix + name
                if _segment_forbidden(name, sandbox.forbidden) is not None or not watched(rel):
                    continue
                if not prefix and name in READ_ONLY_TOP:
                    continue  # .mcp.json: only the skill installer writes it
                try:
                    info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue  # gone since the folder was listed
                if not stat.S_ISREG(info.st_mode):
                    continue  # symlinks, FIFOs, sockets: not recorded
                entry = _entry(sandbox, rel, info, blobs, previous.get(rel), max_file_bytes)
                if entry is not None:
                    found[rel] = entry
    finally:
        os.close(root_fd)
    return found


def read_entry(sandbox: Sandbox, rel: str, info: os.stat_result,
               max_file_bytes: int) -> FileEntry | None:
    """The entry of one file read and hashed now (not stored), ``info``
    being its stat; None when it is no longer a file of ours. Its mtime is
    0 when it was read within its timestamp tick (``racy``)."""
    return _entry(sandbox, rel, info, None, None, max_file_bytes)


def _entry(sandbox: Sandbox, rel: str, info: os.stat_result, blobs: BlobStore | None,
           before: FileEntry | None, max_file_bytes: int) -> FileEntry | None:
    mode = info.st_mode & 0o7777
    if before is None:  # a name recorded before passed this already
        try:
            sandbox.normalize(rel)
        except ToolError:
            return None  # see below: a name the sandbox refuses is not recorded
    if info.st_nlink > 1:
        return FileEntry(None, info.st_size, mode, info.st_mtime_ns, info.st_ino, "hard_link")
    if info.st_size > max_file_bytes:
        return FileEntry(None, info.st_size, mode, info.st_mtime_ns, info.st_ino, "too_big")
    if (before is not None and before.hash is not None and before.size == info.st_size
            and before.mtime_ns == info.st_mtime_ns and before.ino == info.st_ino
            and (blobs is None or blobs.known(before.hash))):
        return FileEntry(before.hash, before.size, mode, info.st_mtime_ns, info.st_ino)
    try:
        fd, opened = sandbox.open_file(rel)
    except ToolError as exc:
        if exc.details.get("reason") == "hard_link":
            return FileEntry(None, info.st_size, mode, info.st_mtime_ns, info.st_ino,
                             "hard_link")
        # A name the sandbox refuses (control characters, bytes that are not
        # UTF-8, a symlink swapped in that leads out): no file of ours, and
        # a restore could not write it back either.
        return None
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None  # gone or replaced since the stat
    except OSError:
        return FileEntry(None, info.st_size, mode, info.st_mtime_ns, info.st_ino, "unreadable")
    with os.fdopen(fd, "rb") as handle:
        # As much as the stat said, then whatever it grew by: a read of the
        # whole limit would allocate 20 MiB for every small file.
        data = handle.read(min(opened.st_size, max_file_bytes) + 1)
        if len(data) > opened.st_size:
            data += handle.read(max_file_bytes + 1 - len(data))
        settled = os.fstat(handle.fileno())
    if len(data) > max_file_bytes:  # grew since the stat
        return FileEntry(None, len(data), mode, opened.st_mtime_ns, opened.st_ino, "too_big")
    digest = sha256(data)
    if blobs is not None:
        blobs.put(data, digest)
    # The fd's own stat: the file that was read, not whatever the name was
    # at the earlier stat. A file written while it was read, or so recently
    # that another write in the same mtime tick would leave size and mtime
    # as they are, gets no mtime: the next recording reads it again.
    mtime_ns = opened.st_mtime_ns
    if settled.st_mtime_ns != mtime_ns or settled.st_size != len(data) or \
            racy(mtime_ns, time.time_ns()):
        mtime_ns = 0
    return FileEntry(digest, len(data), opened.st_mode & 0o7777, mtime_ns, opened.st_ino)


def racy(mtime_ns: int, read_ns: int) -> bool:
    """Whether a later write could leave a file read at ``read_ns`` with
    the same size and ``mtime_ns``: only within the file system's timestamp
    tick after its last write. Timestamps finer than a second (ext4, btrfs,
    XFS, APFS: moved by the kernel's clock tick, 1-10 ms) leave a tenth of a
    second of doubt; whole-second ones (FAT, some network file systems) two
    seconds (``RACY_NS``). A freshly made workspace is then trusted as soon
    as its files are a tenth of a second old, not two seconds: a first turn
    an agent answers at once would otherwise find them all to read again,
    and those it changed first not kept."""
    window = RACY_NS if mtime_ns % 1_000_000_000 == 0 else FINE_RACY_NS
    return mtime_ns > read_ns - window
