"""Writing many workspace files at once with one pass of syncs, for a
rewind (docs/checkpoints.md, "Restoring": the order, and what a kill -9 at
each step leaves).

1. Each file's content goes to a temp file (``temp_name``) in its own
   folder, with its permission bits; then every temp file is fsynced.
2. Each temp file is renamed over its name: the name holds the old file or
   the new one, whole, never a mix.
3. Each folder written in is fsynced once, so that the renames last.

That is one fsync per file and one per folder, where a write at a time
(temp, fsync, rename, fsync the folder) costs two per file; and the writes,
fsyncs and renames of a step are issued together from ``SYNC_THREADS``
threads (one pool kept for the process), which the file system's journal
takes as a group. For 150 files of 80 KB on ext4 (a loaded machine): one
fsync after another 490-600 ms, ``os.sync()`` 600 ms (it flushes every
file system, others' writes too), ``syncfs`` 117 ms, fsyncs from 8 or 16
threads 25-34 ms; renames over existing files 270-430 ms one after
another, 119 ms side by side. Every folder is walked by fd from the
workspace's root (``Sandbox.locate``); a symlink at a file's name is
replaced, never written through. Files are taken ``CHUNK`` at a time so
that the open fds stay few.

A rewind writes with ``durable=False``: no sync at all while the person
waits; its journal (pneuma.checkpoints.restore_journal) syncs the files and
folders afterwards and completes the rewind after a crash.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.core.fdpath import Located
from pneuma.core.files import temp_name
from pneuma.core.sandbox import READ_ONLY_TOP, Sandbox

CHUNK = 256
SYNC_THREADS = 12


def _sync(fd: int) -> None:
    """One fsync (a seam the tests count through)."""
    os.fsync(fd)


def _reached(step: str) -> None:
    """Called after each step ("journaled", "written", "renamed", "synced"):
    a seam the crash tests stop the process at."""


@dataclass
class FileToWrite:
    path: str  # workspace-relative, canonical
    mode: int  # the permission bits it gets
    content: Callable[[], bytes]  # read when its turn comes (a blob of the store)


@dataclass
class _Pending:
    file: FileToWrite
    folder: Located
    tmp: str
    fd: int  # open until it is synced
    written: os.stat_result | None = None


def write_files(sandbox: Sandbox, files: list[FileToWrite], *, durable: bool = True,
                before_renames: Callable[[], None] | None = None) -> tuple[
        dict[str, os.stat_result], dict[str, BaseException]]:
    """Write ``files`` (module docstring). Returns the stat of each file
    written, and what stopped each file that was not (left as it was).
    ``durable=False`` leaves out every sync: a rewind's journal
    (pneuma.checkpoints.restore_journal) makes the files durable later.
    ``before_renames`` runs once, after the first temp files are written and
    before any name is replaced (a rewind's undo point is made durable
    meanwhile); it must tolerate being called again by its caller."""
    written: dict[str, os.stat_result] = {}
    failed: dict[str, BaseException] = {}
    for start in range(0, len(files), CHUNK):
        _write_chunk(sandbox, files[start:start + CHUNK], written, failed, durable,
                     before_renames)
    return written, failed


def sync_paths(paths: list[str]) -> None:
    """fsync each file or folder named (absolute paths), side by side; one
    that is gone or cannot be opened is skipped (nothing there to keep)."""
    def one(path: str) -> None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return
        try:
            _sync(fd)
        except OSError:
            pass  # a file system without directory fsync
        finally:
            os.close(fd)

    _in_threads(one, paths)


def submit(work: Callable[[], None]) -> Future[None]:
    """Run ``work`` in a thread of its own (a rewind's syncs after it
    answered): not in the kept pool, whose threads ``work`` itself uses;
    not a daemon, so a process that exits waits for it."""
    future: Future[None] = Future()

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # kept for whoever waits on it
            future.set_exception(exc)
        else:
            future.set_result(None)

    threading.Thread(target=run, name="pneuma-rewind-sync").start()
    return future


def _write_chunk(sandbox: Sandbox, files: list[FileToWrite], written: dict[str, os.stat_result],
                 failed: dict[str, BaseException], durable: bool = True,
                 before_renames: Callable[[], None] | None = None) -> None:
    with ExitStack() as open_folders:
        folders: dict[str, Located] = {}
        placed: list[tuple[FileToWrite, Located]] = []
        for file in files:
            try:
                placed.append((file, _folder_of(sandbox, file.path, folders, open_folders)))
            except (ToolError, OSError) as exc:
                failed[file.path] = exc
        pending: list[_Pending] = []
        try:
            for (file, _), made in zip(placed, _in_threads(_temp_file_or_error, placed),
                                       strict=True):
                if isinstance(made, _Pending):
                    pending.append(made)
                else:
                    failed[file.path] = made
            if durable:
                pending = _synced(pending, failed)
        finally:
            for item in pending:
                _close(item)
        _reached("written")
        if before_renames is not None:
            before_renames()
        # Each rename is atomic on its own: their order does not matter, and
        # issued together they wait for the journal together.
        for item, error in zip(pending, _in_threads(_rename_or_error, pending), strict=True):
            if error is not None:
                failed[item.file.path] = error
            else:
                assert item.written is not None
                written[item.file.path] = item.written
        renamed = {item.folder.dir_fd: item.folder for item in pending
                   if item.file.path in written}
        _reached("renamed")
        # A file system without directory fsync: the renames are done all the same.
        if durable:
            _all_at_once(_sync, list(renamed))
        _reached("synced")


def _temp_file_or_error(placed: tuple[FileToWrite, Located]) -> _Pending | ToolError | OSError:
    try:
        return _temp_file(*placed)
    except (ToolError, OSError) as exc:
        return exc


def _rename_or_error(item: _Pending) -> ToolError | OSError | None:
    try:
        _rename(item)
    except (ToolError, OSError) as exc:
        return exc
    return None


def _all_at_once(sync: Callable[[int], None], fds: list[int]) -> list[OSError | None]:
    """``sync`` each of ``fds`` from several threads at once; what each raised."""
    def one(fd: int) -> OSError | None:
        try:
            sync(fd)
        except OSError as exc:
            return exc
        return None

    return _in_threads(one, fds)


def _in_threads(work: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    if len(items) < 2:
        return [work(item) for item in items]
    return list(_pool().map(work, items))


_threads: ThreadPoolExecutor | None = None
_threads_made = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """One pool for every rewind of the process: starting threads anew
    each time cost more than the work on a loaded machine."""
    global _threads
    with _threads_made:
        if _threads is None:
            _threads = ThreadPoolExecutor(SYNC_THREADS, thread_name_prefix="pneuma-rewind")
        return _threads


def _synced(pending: list[_Pending], failed: dict[str, BaseException]) -> list[_Pending]:
    """The temp files whose content is on disk; one that could not be
    synced is removed and its file fails."""
    kept = []
    for item, error in zip(pending, _all_at_once(_sync, [i.fd for i in pending]),
                           strict=True):
        if error is None:
            kept.append(item)
        else:
            failed[item.file.path] = error
            _close(item)
            _remove_temp(item)
    return kept


def _close(item: _Pending) -> None:
    if item.fd >= 0:
        os.close(item.fd)
        item.fd = -1


def _folder_of(sandbox: Sandbox, path: str, folders: dict[str, Located],
               open_folders: ExitStack) -> Located:
    """The open folder ``path`` is written in: walked (and made) once per
    folder; refused where ``Sandbox.locate`` refuses a write."""
    parent, _, name = path.rpartition("/")
    folder = folders.get(parent)
    if folder is None:
        folder = open_folders.enter_context(
            sandbox.locate(path, write=True, follow_final=False, create_dirs=True))
        folders[parent] = folder
    else:
        sandbox.normalize(path)
        # What locate checks for a write, for the other names of a folder it walked.
        if not parent and name in READ_ONLY_TOP:
            raise ToolError("E_DENY_PATH", f"Path {path!r} is read-only here",
                            details={"path": path, "reason": "read_only"})
    return folder


def _temp_file(file: FileToWrite, folder: Located) -> _Pending:
    data = file.content()
    name = file.path.rpartition("/")[2]
    tmp = temp_name(name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 file.mode, dir_fd=folder.dir_fd)
    item = _Pending(file, folder, tmp, fd)
    try:
        os.fchmod(fd, file.mode)  # os.open's mode was narrowed by the umask
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        item.written = os.fstat(fd)
    except BaseException:
        _close(item)
        _remove_temp(item)
        raise
    return item


def _rename(item: _Pending) -> None:
    name = item.file.path.rpartition("/")[2]
    dir_fd = item.folder.dir_fd
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        _remove_temp(item)
        raise ToolError("E_CONFLICT", f"{item.file.path} is a folder now",
                        details={"path": item.file.path})
    try:
        # rename replaces the directory entry itself; a symlink put there
        # meanwhile is replaced, not followed.
        os.rename(item.tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError as exc:
        _remove_temp(item)
        if exc.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
            raise ToolError("E_CONFLICT", f"{item.file.path} is a folder now",
                            details={"path": item.file.path}) from None
        raise


def _remove_temp(item: _Pending) -> None:
    try:
        os.unlink(item.tmp, dir_fd=item.folder.dir_fd)
    except FileNotFoundError:
        pass

