"""Walking a workspace-relative path by file descriptor, so a symlink swapped
between a check and a use cannot lead outside the workspace.

Every component is opened with ``O_NOFOLLOW`` relative to the directory fd
opened for the one before it, starting at the workspace root's own fd. The
kernel never follows a symlink for us: when a component is a symlink, its
text is read (``readlink`` on the parent fd) and interpreted here, against
the components walked so far — ``..`` pops one, an absolute target counts
only when it names a place under the root — and the walk starts again from
the root fd. So whatever a symlink says at the instant it is read, the
result is a directory fd inside the workspace and a name in it; the
operations (open, rename, unlink) then act on that fd and name only.

Symlinks inside the workspace that point inside it keep working (read and
written through, as before); one pointing outside, or into a forbidden
directory, is refused with ``E_DENY_PATH``; more than ``MAX_SYMLINKS`` hops
(a loop) too.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

# As Linux's own limit on symlinks followed in one lookup.
MAX_SYMLINKS = 40
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Escape(Exception):
    """The walk would leave the workspace or enter a forbidden name; carries why."""

    def __init__(self, why: str, reason: str):
        super().__init__(why)
        self.why = why
        self.reason = reason


@dataclass
class Located:
    """Where a path lands: an open fd of its (real) parent directory inside
    the workspace, the final name in it, and the real workspace-relative
    components (parent's, then the name). The caller closes ``dir_fd``."""

    dir_fd: int
    name: str
    real_parts: list[str]

    def close(self) -> None:
        try:
            os.close(self.dir_fd)
        except OSError:
            pass

    def __enter__(self) -> "Located":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def real_rel(self) -> str:
        return "/".join(self.real_parts)


def _target_parts(target: str, walked: list[str], root: str) -> list[str]:
    """The components a symlink's text stands for, from the root, before
    any ``..`` in them is applied."""
    if target.startswith("/"):
        prefix = root.rstrip("/") + "/"
        if target != root and not target.startswith(prefix):
            raise Escape("leads outside the workspace through a symlink", "symlink_escape")
        return list(PurePosixPath(target[len(prefix):]).parts) if target != root else []
    return walked + list(PurePosixPath(target).parts)


def locate(root: str, root_fd: int, parts: list[str], *,
           forbidden: Callable[[str], str | None], follow_final: bool = True,
           create_dirs: bool = False) -> Located:
    """Walk ``parts`` (already normalized: no '', '.', '..') from ``root_fd``.

    Intermediate components must be directories (or symlinks to directories
    inside the root); with ``create_dirs`` missing ones are made. The final
    component is followed when it is a symlink and ``follow_final`` is set;
    it need not exist. Raises ``Escape`` for a way out, ``OSError`` (ENOENT,
    ENOTDIR) for what is missing."""
    pending = list(parts)
    hops = 0
    while True:
        # (Re)start from the root: after a symlink, ``pending`` is the whole
        # path from the root again.
        stack: list[str] = []
        fds: list[int] = [os.dup(root_fd)]
        try:
            restarted = False
            while pending:
                name = pending.pop(0)
                if name in ("", "."):
                    continue
                if name == "..":
                    if not stack:
                        raise Escape("leads outside the workspace through a symlink",
                                     "symlink_escape")
                    stack.pop()
                    os.close(fds.pop())
                    continue
                hit = forbidden(name)
                if hit is not None:
                    raise Escape(f"resolves into a forbidden directory ({hit})", "forbidden")
                is_final = not pending
                try:
                    info = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
                except FileNotFoundError:
                    if is_final:
                        return Located(fds.pop(), name, stack + [name])
                    if not create_dirs:
                        raise
                    os.mkdir(name, 0o755, dir_fd=fds[-1])
                    info = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode) and (follow_final or not is_final):
                    hops += 1
                    if hops > MAX_SYMLINKS:
                        raise Escape("has too many levels of symlinks", "symlink_loop")
                    target = os.readlink(name, dir_fd=fds[-1])
                    pending = _target_parts(target, stack, root) + pending
                    restarted = True
                    break
                if is_final:
                    return Located(fds.pop(), name, stack + [name])
                # O_NOFOLLOW: a symlink swapped in since the stat fails here
                # (ELOOP/ENOTDIR) instead of being followed.
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=fds[-1])
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISDIR(info.st_mode):
                        raise Escape("changed while it was being opened", "raced") from None
                    raise
                fds.append(fd)
                stack.append(name)
            if not restarted:
                # Only the root itself (no components): no name to hand back.
                raise IsADirectoryError(errno.EISDIR, "the workspace root")
        finally:
            for fd in fds:
                os.close(fd)
