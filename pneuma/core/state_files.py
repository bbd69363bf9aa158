"""Pneuma's own state under ``W/.pneuma/``, opened without following links.

Workspace content is untrusted: a shared zip, a cloned repository or the
agent's shell can leave ``.pneuma/server.lock`` as a symlink to
``~/.bashrc``, or ``.pneuma/checkpoints`` as one to another folder. Opening
such a path the ordinary way would truncate the target, write the session
URL and its token into it, or keep blobs outside the workspace. So every
component from ``.pneuma`` on is opened here by file descriptor with
``O_NOFOLLOW``, starting at the workspace's own directory fd; a symlink,
or anything that is not a regular file or a directory, is refused with
``UnsafeStatePath``, whose text is the one line the person reads.

The workspace folder itself is the person's choice and may be reached
through links; only what lies under ``.pneuma/`` is Pneuma's to guard.

SQLite opens its files by path (and its side files ``-wal``, ``-shm``,
``-journal`` beside them), so for a database ``check_sqlite_files`` refuses
links there just before the connection is made; ``audit_state_dir`` at
start-up refuses a ``.pneuma/`` holding a link anywhere, before anything
else is opened.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from pneuma.core.files import atomic_write_at

STATE_DIR = ".pneuma"
# New folders under .pneuma/ are the owner's alone: several files hold the
# session token.
STATE_DIR_MODE = 0o700
STATE_FILE_MODE = 0o600
SQLITE_SIDE_SUFFIXES = ("-wal", "-shm", "-journal")

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# How many entries ``audit_state_dir`` looks at before it trusts the rest
# to the per-open checks (the checkpoint store can hold many blobs).
AUDIT_LIMIT = 200_000


class UnsafeStatePath(OSError):
    """A path under ``.pneuma/`` that is a link or not a regular file or
    folder; ``str()`` is the one line to show."""

    def __init__(self, path: Path | str, what: str) -> None:
        message = (f"{path} {what}; Pneuma's own state under .pneuma/ never follows a "
                   f"link. Remove it (rm {_quote(str(path))}) and start again")
        super().__init__(errno.ELOOP, message)
        self.path = str(path)
        self.message = message

    def __str__(self) -> str:
        return self.message


def _quote(text: str) -> str:
    return text if all(c.isalnum() or c in "/._-+" for c in text) else "'" + text.replace(
        "'", "'\\''") + "'"


def _describe(dir_fd: int, name: str, info: os.stat_result) -> str:
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(name, dir_fd=dir_fd)
        except OSError:
            return "is a symlink"
        return f"is a symlink (to {target})"
    if stat.S_ISFIFO(info.st_mode):
        return "is a FIFO, not a regular file"
    if stat.S_ISSOCK(info.st_mode):
        return "is a socket, not a regular file"
    if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
        return "is a device, not a regular file"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder, not a file"
    return "is not a regular file"


def split_state_path(path: Path) -> tuple[Path, list[str]]:
    """The workspace and the components from ``.pneuma`` on of ``path``
    (the last ``.pneuma`` in it). A path with no ``.pneuma`` in it (a
    store a test or a tool keeps elsewhere) is guarded from its folder on."""
    parts = Path(path).parts
    for index in range(len(parts) - 1, -1, -1):
        if parts[index] == STATE_DIR:
            return Path(*parts[:index]) if index else Path("."), list(parts[index:])
    return Path(path).parent, [Path(path).name]


def _open_dir_chain(workspace: Path, names: list[str], *, create: bool,
                    mode: int = STATE_DIR_MODE) -> int:
    """An fd on the folder ``workspace/names…``, each of ``names`` opened
    with ``O_NOFOLLOW`` in the one before (made with ``mode`` when
    ``create``)."""
    try:
        fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        if not create:
            raise
        # The workspace (or a store's own folder) is the person's choice:
        # made as asked, links and all.
        workspace.mkdir(parents=True, exist_ok=True)
        fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    walked = workspace
    try:
        for name in names:
            walked = walked / name
            try:
                next_fd = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(name, mode, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile (or a link planted meanwhile: opened below)
                next_fd = _open_existing_dir(fd, name, walked)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                next_fd = _open_existing_dir(fd, name, walked)
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_existing_dir(parent_fd: int, name: str, shown: Path) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        info = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        raise UnsafeStatePath(shown, _describe(parent_fd, name, info)) from None


def open_parent(path: Path, *, create: bool = True) -> tuple[int, str]:
    """The open folder fd holding ``path`` (a path under ``.pneuma/``) and
    the final name in it; the caller closes the fd."""
    workspace, parts = split_state_path(path)
    return _open_dir_chain(workspace, parts[:-1], create=create), parts[-1]


def state_dir(workspace: Path, *, create: bool = True) -> Path:
    """``workspace/.pneuma``, made (0700) when missing; refused when it is
    a link or a file."""
    os.close(_open_dir_chain(Path(workspace), [STATE_DIR], create=create))
    return Path(workspace) / STATE_DIR


def ensure_dir(path: Path) -> Path:
    """The folder ``path`` under ``.pneuma/``, made with its parents (0700),
    none of them a link."""
    workspace, parts = split_state_path(path)
    os.close(_open_dir_chain(workspace, parts, create=True))
    return Path(path)


def open_state_file(path: Path, flags: int, mode: int = STATE_FILE_MODE, *,
                    create_dirs: bool = True) -> int:
    """``os.open`` of the regular file ``path`` under ``.pneuma/``, never
    through a link, never blocking on a FIFO. ``FileNotFoundError`` as
    ``os.open`` when it is missing and ``flags`` lack ``O_CREAT``."""
    dir_fd, name = open_parent(path, create=create_dirs and bool(flags & os.O_CREAT))
    try:
        return _open_regular(dir_fd, name, flags, mode, lambda: path)
    finally:
        os.close(dir_fd)


def _open_regular(dir_fd: int, name: str, flags: int, mode: int,
                  shown: Callable[[], Path]) -> int:
    """``name`` in ``dir_fd`` opened as ``open_state_file`` promises;
    ``shown`` names it in an error (built only then)."""
    try:
        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode,
                     dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.EWOULDBLOCK):
            raise
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        raise UnsafeStatePath(shown(), _describe(dir_fd, name, info)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafeStatePath(shown(), _describe(dir_fd, name, info))
    if info.st_nlink > 1:
        # Another name for the same file may lie outside the workspace:
        # writing here would write there.
        os.close(fd)
        raise UnsafeStatePath(shown(), f"has {info.st_nlink} hard links")
    # Back to blocking I/O for the caller (it is a regular file anyway).
    os.set_blocking(fd, True)
    return fd


class StateFolderReader:
    """Many files read from one folder under ``.pneuma/`` and its
    subfolders, each as ``read_state_bytes`` reads it, without walking
    from the workspace's root for each: the folder is walked once (no
    link followed), each subfolder opened once (``O_NOFOLLOW``) and kept
    open until ``close``. For a rewind, which reads a stored content per
    file it writes back. Safe to use from several threads."""

    def __init__(self, folder: Path) -> None:
        workspace, parts = split_state_path(Path(folder) / "_")
        self.folder = Path(folder)
        self._fd = _open_dir_chain(workspace, parts[:-1], create=False)
        self._subfolders: dict[str, int] = {}
        self._lock = threading.Lock()

    def read_bytes(self, rel: str) -> bytes:
        """The bytes of ``folder/rel`` (``rel`` is ``name`` or ``sub/name``)."""
        sub, _, name = rel.rpartition("/")
        dir_fd = self._subfolder(sub) if sub else self._fd
        fd = _open_regular(dir_fd, name, os.O_RDONLY, STATE_FILE_MODE,
                           lambda: self.folder / rel)
        with os.fdopen(fd, "rb") as handle:
            return handle.read()

    def _subfolder(self, sub: str) -> int:
        if "/" in sub or sub in ("", ".", ".."):
            raise ValueError(f"{sub!r} is not one folder's name")
        with self._lock:
            fd = self._subfolders.get(sub)
            if fd is None:
                fd = self._subfolders[sub] = _open_existing_dir(self._fd, sub, self.folder / sub)
            return fd

    def close(self) -> None:
        with self._lock:
            for fd in self._subfolders.values():
                os.close(fd)
            self._subfolders.clear()
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> "StateFolderReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_state_bytes(path: Path, limit: int | None = None) -> bytes:
    """The bytes of ``path`` under ``.pneuma/`` (at most ``limit``);
    ``FileNotFoundError`` when there is none."""
    fd = open_state_file(path, os.O_RDONLY, create_dirs=False)
    with os.fdopen(fd, "rb") as handle:
        return handle.read() if limit is None else handle.read(limit)


def write_state_bytes(path: Path, data: bytes, mode: int | None = STATE_FILE_MODE) -> None:
    """Replace ``path`` under ``.pneuma/`` with ``data`` atomically: a
    temporary file made beside it (exclusively, never through a link),
    synced, then renamed over the old name in the same folder fd. A link
    at the old name is replaced, never followed. ``mode`` None: the
    umask's default for a new file."""
    dir_fd, name = open_parent(path, create=True)
    _replace_in(dir_fd, name, path, data, mode)


def write_beneath(root: Path, rel: str, data: bytes, mode: int | None = None) -> None:
    """``write_state_bytes`` for any file ``rel`` (a relative POSIX path
    Pneuma itself chose: CLAUDE.md, .claude/commands/x.md) inside
    ``root``: no folder on the way, nor the file, is followed if it is a
    link, so a ``.claude`` linked to ``~/.claude`` is refused, not written."""
    parts = [part for part in rel.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        raise ValueError(f"not a relative path inside the workspace: {rel!r}")
    dir_fd = _open_dir_chain(Path(root), parts[:-1], create=True, mode=0o755)
    _replace_in(dir_fd, parts[-1], Path(root) / rel, data, mode)


def _replace_in(dir_fd: int, name: str, path: Path, data: bytes, mode: int | None) -> None:
    """``core.files.atomic_write_at`` in ``dir_fd`` (which this closes), with
    the state files' rules for what stands at ``name`` now: a folder is
    refused, a link (or FIFO) is replaced, never followed, and a regular
    file rewritten with ``mode`` None keeps its rwx bits."""
    try:
        existing = _lstat(dir_fd, name)
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            raise UnsafeStatePath(path, "is a folder, not a file")
        if existing is not None and mode is None:
            if stat.S_ISREG(existing.st_mode):
                mode = existing.st_mode & 0o777
            else:
                os.unlink(name, dir_fd=dir_fd)  # the entry itself, never what it names
        atomic_write_at(dir_fd, name, data, mode)
    finally:
        os.close(dir_fd)


def _lstat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def check_sqlite_files(path: Path, *, create_dirs: bool = True) -> None:
    """Refuse a SQLite database under ``.pneuma/`` whose file or side
    files are links or not regular files (SQLite opens them by path and
    would follow); its folders are walked as ``open_parent`` does."""
    dir_fd, name = open_parent(path, create=create_dirs)
    try:
        for candidate in (name, *(name + suffix for suffix in SQLITE_SIDE_SUFFIXES)):
            info = _lstat(dir_fd, candidate)
            if info is None:
                continue
            if not stat.S_ISREG(info.st_mode):
                raise UnsafeStatePath(Path(path).parent / candidate,
                                      _describe(dir_fd, candidate, info))
            if info.st_nlink > 1:
                raise UnsafeStatePath(Path(path).parent / candidate,
                                      f"has {info.st_nlink} hard links")
    finally:
        os.close(dir_fd)


def audit_state_dir(workspace: Path) -> None:
    """Refuse a ``.pneuma/`` that is a link or holds one (or a FIFO, a
    socket, a device) anywhere, before Pneuma opens any of it. A missing
    ``.pneuma/`` is fine (a new workspace)."""
    workspace = Path(workspace)
    try:
        top = _open_dir_chain(workspace, [STATE_DIR], create=False)
    except FileNotFoundError:
        return
    seen = 0
    try:
        for folder, _dirs, files, folder_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            # fwalk lists links to folders among ``_dirs`` and never enters them.
            for name in (*_dirs, *files):
                seen += 1
                info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode) or (stat.S_ISREG(info.st_mode)
                                                  and info.st_nlink == 1):
                    continue
                shown = workspace / STATE_DIR / os.path.normpath(os.path.join(folder, name))
                if stat.S_ISREG(info.st_mode):
                    # Its other name may lie outside: a write here lands there.
                    raise UnsafeStatePath(shown, f"has {info.st_nlink} hard links")
                raise UnsafeStatePath(shown, _describe(folder_fd, name, info))
            if seen > AUDIT_LIMIT:
                return
    finally:
        os.close(top)
