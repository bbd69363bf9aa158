"""A small JSON file of the person's own, under their home, shared by every
Pneuma process they run.

The list of recent workspaces (pneuma.startup.recent) and the person's
preferences (pneuma.server.preferences) are such files: several processes
(a `pneuma run` per terminal, the launcher, every workspace server) read
and change them. ``UserFile`` is what they share; each keeps its own
domain (what the document holds, its checks, its messages' wording).

- **Never through a link, never stuck on a FIFO.** The file and its lock
  are opened with ``O_NOFOLLOW | O_NONBLOCK`` in the folder's descriptor
  and checked with ``fstat``: a link, a FIFO, a folder, a socket or a
  device at the name is refused with the domain's ``UnusableUserFile``,
  naming the file. The folder itself is the person's own (it may be
  reached through links, like ``~/.config``); only the file's name is
  guarded.
- **Changed under a lock, replaced whole.** A change is a
  read-modify-write inside ``locked()`` (an exclusive ``flock`` on
  ``<name>.lock``), written to a temporary file and renamed
  (core.files.atomic_write_at), so a reader, who takes no lock, sees the
  old file or the new one, never half.
- **Moved aside when damaged, never overwritten.** ``move_aside`` first
  claims the copy's name with ``O_EXCL`` (``-2``, ``-3``… when it is
  taken), then renames the file over it: two damages, or two processes,
  never pick the same name.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pneuma.core.files import atomic_write_at


def config_home(environ: Mapping[str, str] | None = None) -> Path:
    """Where Pneuma keeps the person's settings: ``$XDG_CONFIG_HOME/pneuma``,
    else ``~/.config/pneuma``. A relative ``XDG_CONFIG_HOME`` is ignored, as
    the XDG Base Directory rules say."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    if base and os.path.isabs(base):
        return Path(base) / "pneuma"
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".config" / "pneuma"

FOLDER_MODE = 0o700
# What the person keeps here (the folders they work in, their drafts) is
# theirs to know: 0o600 from the start.
FILE_MODE = 0o600
MAX_ASIDE_COPIES = 10_000


class UnusableUserFile(OSError):
    """The file (or its lock) cannot be used as it is. ``str()`` is the one
    line to show: a domain's subclass words it and names the file."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(errno.EINVAL, message)
        self.path = str(path)
        self.message = message

    def __str__(self) -> str:
        return self.message


# Builds the domain's refusal from the file and why it is refused ("is a FIFO, not a file").
Refusal = Callable[[Path, str], UnusableUserFile]

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


def _why_not_regular(mode: int) -> str:
    kind = next((name for test, name in _KINDS if test(mode)), None)
    return f"is {kind}, not a file" if kind else "is not a regular file"


@contextmanager
def _open_folder(folder: Path) -> Iterator[int]:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield fd
    finally:
        os.close(fd)


class UserFile:
    """The file ``name`` in ``folder``; ``refuse`` words a refusal.
    ``max_bytes``, when given, bounds a read (``read`` then gives at most
    one byte more, so the caller can tell the file is over it)."""

    def __init__(self, folder: Path, name: str, refuse: Refusal,
                 max_bytes: int | None = None) -> None:
        self.folder = folder
        self.name = name
        self.path = folder / name
        self._refuse = refuse
        self._max_bytes = max_bytes

    def read(self) -> bytes | None:
        """The file's bytes, or None when it (or its folder) does not
        exist. Takes no lock: the file is only ever replaced whole."""
        try:
            with _open_folder(self.folder) as dir_fd:
                fd = self._open_regular(dir_fd, self.name, os.O_RDONLY)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as file:
            return file.read(-1 if self._max_bytes is None else self._max_bytes + 1)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the file's lock (making its folder when there is none)."""
        self.folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        with _open_folder(self.folder) as dir_fd:
            fd = self._open_regular(dir_fd, self.name + ".lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def write(self, data: bytes) -> None:
        """Replace the file with ``data`` (inside ``locked()``, after a
        ``read`` that refused whatever else was at the name)."""
        with _open_folder(self.folder) as dir_fd:
            atomic_write_at(dir_fd, self.name, data, mode=FILE_MODE)

    def move_aside(self, copy_name: str) -> Path:
        """Rename the file (inside ``locked()``) to ``copy_name``, or to
        ``copy_name-2``, ``-3``… when an earlier copy has it; the new path."""
        with _open_folder(self.folder) as dir_fd:
            for n in range(1, MAX_ASIDE_COPIES):
                aside = copy_name + (f"-{n}" if n > 1 else "")
                try:
                    os.close(os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                                     | os.O_CLOEXEC, FILE_MODE, dir_fd=dir_fd))
                except FileExistsError:
                    continue
                try:
                    os.rename(self.name, aside, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                except OSError:
                    os.unlink(aside, dir_fd=dir_fd)
                    raise
                return self.folder / aside
        raise OSError(errno.EEXIST, "every name for the copy is taken")

    def _open_regular(self, dir_fd: int, name: str, flags: int) -> int:
        """An fd on ``name`` that is a regular file: never through a link,
        never waiting for a FIFO's writer (``O_NONBLOCK``), refused otherwise."""
        shown = self.folder / name
        try:
            fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, FILE_MODE,
                         dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._refuse(shown, "is a symbolic link") from None
            if exc.errno in (errno.ENXIO, errno.EISDIR, errno.ENODEV):
                raise self._refuse(shown, "is not a regular file") from None
            raise
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise self._refuse(shown, _why_not_regular(mode))
        return fd
