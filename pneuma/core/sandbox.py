"""The one sandbox every file access goes through: HTTP routes, tools, MCP.

Paths are relative to the workspace root. Refused with ``E_DENY_PATH``:
absolute paths (POSIX, Windows drive or UNC), ``..`` segments, backslashes,
NUL and control characters, forbidden directories (``.git``,
``node_modules``, ``.env*``, ``.pneuma`` unless allowed), and anything whose
real location (symlinks resolved) lies outside the root. Refused with
``E_BAD_ARGS``: text that is no file name at all (a lone surrogate, a name
over the file system's limits), so the OS never gets to fail on it.

Some files are read-only here (``resolve_writable``): ``.claude/`` (the
agent's settings, hooks and skills) and ``.mcp.json`` change what the agent
may do, so only the skill installer, which does not come through here,
writes them. A regular file with more than one hard link is not read
(``check_readable``): its other name may be ``.env`` or lie outside the
workspace, and nothing here can tell which.

``resolve`` hands back a path for display and early refusals only: between
that check and a use by path, a symlink inside the workspace can be swapped
to point outside. Reads, writes and deletes go through ``locate``,
``open_file`` and ``unlink`` instead, which walk the path by file
descriptor from the root (pneuma.core.fdpath) and act on the fds they
opened.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from pneuma.core.errors import ToolError
from pneuma.core.fdpath import Escape, Located, locate

# Opening a file to read: never through a symlink in the last component
# (the walk resolved those already), never blocking on a FIFO.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# How often a final component swapped to a symlink mid-open is walked again.
_RETRIES = 3

DEFAULT_FORBIDDEN: tuple[str, ...] = (".git", "node_modules", ".env*", ".pneuma")

_WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Linux's limits (NAME_MAX, PATH_MAX), in bytes of the UTF-8 form.
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 4095
# Written only by the skill installer: they decide what the agent may do.
READ_ONLY_TOP: tuple[str, ...] = (".claude", ".mcp.json")


def _segment_forbidden(segment: str, patterns: Iterable[str]) -> str | None:
    for pattern in patterns:
        if pattern.endswith("*"):
            if segment.startswith(pattern[:-1]):
                return pattern
        elif segment == pattern:
            return pattern
    return None


class Sandbox:
    """Maps workspace-relative paths to real paths inside ``root``, or refuses."""

    def __init__(self, root: Path, forbidden: Iterable[str] = DEFAULT_FORBIDDEN):
        self.root = Path(root).resolve()
        self.forbidden = tuple(forbidden)

    def normalize(self, rel: object, *, allow_root: bool = False) -> str:
        """Check a relative path's text and return it in canonical POSIX form."""
        if not isinstance(rel, str):
            raise ToolError("E_BAD_ARGS", "path must be a string", details={"path": rel})
        if rel == "" or rel in {".", "./"}:
            if allow_root:
                return ""
            raise ToolError("E_BAD_ARGS", "path must not be empty", details={"path": rel})
        if _CONTROL.search(rel):
            raise self._deny(rel, "contains control characters")
        try:
            encoded = rel.encode("utf-8")
        except UnicodeEncodeError:
            raise ToolError("E_BAD_ARGS", "path is not valid Unicode text (a lone surrogate)",
                            details={"path": rel.encode("utf-8", "backslashreplace")
                                     .decode("utf-8"), "reason": "not_unicode"}) from None
        if len(encoded) > MAX_PATH_BYTES:
            raise ToolError("E_BAD_ARGS", f"path is {len(encoded)} bytes long; the limit is "
                            f"{MAX_PATH_BYTES}", details={"reason": "path_too_long",
                                                          "bytes": len(encoded)})
        if "\\" in rel:
            raise self._deny(rel, "contains a backslash; use '/'")
        if rel.startswith("/") or _WINDOWS_ABSOLUTE.match(rel):
            raise self._deny(rel, "is absolute; paths are relative to the workspace")
        # Compatibility forms (full-width dots and slashes) are not path
        # syntax for the OS, but a name that normalises to '..' is refused
        # anyway so no later normalisation can turn it into one.
        segments = [s for s in rel.split("/") if s not in ("", ".")]
        for segment in segments:
            if len(segment.encode("utf-8")) > MAX_NAME_BYTES:
                raise ToolError("E_BAD_ARGS", f"a name in the path is over {MAX_NAME_BYTES} "
                                "bytes long", details={"path": rel[:200],
                                                       "reason": "name_too_long"})
            if segment == ".." or unicodedata.normalize("NFKC", segment) in {"..", "."}:
                raise self._deny(rel, "contains '..'")
            hit = _segment_forbidden(segment, self.forbidden)
            if hit is not None:
                raise self._deny(rel, f"is inside a forbidden directory ({hit})")
        if not segments:
            if allow_root:
                return ""
            raise ToolError("E_BAD_ARGS", "path must not be empty", details={"path": rel})
        return "/".join(segments)

    def resolve(self, rel: object, *, allow_root: bool = False) -> Path:
        """The real path for ``rel``; it need not exist, but whatever part of
        it exists must not lead outside the root through a symlink."""
        canonical = self.normalize(rel, allow_root=allow_root)
        candidate = self.root / PurePosixPath(canonical) if canonical else self.root
        self._real_rel(candidate, rel)
        return candidate

    def _real_rel(self, candidate: Path, rel: object) -> str:
        """Where ``candidate`` really lands, relative to the root ('' for the
        root), or E_DENY_PATH. One realpath per check: a symlink swapped
        between two of them would let the second land outside unchecked
        (a race is a refusal, never a crash)."""
        real = Path(os.path.realpath(candidate))
        if real != self.root and self.root not in real.parents:
            raise self._deny(str(rel), "leads outside the workspace through a symlink")
        real_rel = real.relative_to(self.root).as_posix() if real != self.root else ""
        # A symlink inside the workspace that points at a forbidden directory
        # is refused as if the path named it.
        for segment in real_rel.split("/") if real_rel else ():
            hit = _segment_forbidden(segment, self.forbidden)
            if hit is not None:
                raise self._deny(str(rel), f"resolves into a forbidden directory ({hit})")
        return real_rel

    def resolve_writable(self, rel: object) -> Path:
        """``resolve``, and refused for the files only the skill installer
        writes (``.claude/``, ``.mcp.json``), named directly or through a
        symlink."""
        canonical = self.normalize(rel)
        path = self.root / PurePosixPath(canonical)
        real_rel = self._real_rel(path, rel)
        for name in (canonical, real_rel):
            if name and name.split("/", 1)[0] in READ_ONLY_TOP:
                raise self._read_only(canonical)
        return path

    @staticmethod
    def _read_only(canonical: str) -> ToolError:
        return ToolError(
            "E_DENY_PATH", f"Path {canonical!r} is read-only here: .claude/ and "
            ".mcp.json decide what the agent may do",
            details={"path": canonical, "reason": "read_only"},
            hint="Pneuma's skill installer writes these files when `pneuma run` "
                 "starts; edit them outside Pneuma if you mean to.")

    def locate(self, rel: object, *, write: bool = False, follow_final: bool = True,
               create_dirs: bool = False) -> Located:
        """The open parent directory fd and final name ``rel`` lands on,
        walked by fd so no symlink swapped meanwhile leads out. With
        ``write``, refused for the read-only files as ``resolve_writable``.
        Raises ``OSError`` (ENOENT, ENOTDIR) for what is missing; the
        caller closes the result."""
        canonical = self.normalize(rel)
        root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            located = locate(str(self.root), root_fd, canonical.split("/"),
                             forbidden=lambda name: _segment_forbidden(name, self.forbidden),
                             follow_final=follow_final, create_dirs=create_dirs)
        except Escape as exc:
            raise self._deny(str(rel), exc.why) from None
        finally:
            os.close(root_fd)
        if write:
            for name in (canonical, located.real_rel):
                if name.split("/", 1)[0] in READ_ONLY_TOP:
                    located.close()
                    raise self._read_only(canonical)
        return located

    def open_file(self, rel: object) -> tuple[int, os.stat_result]:
        """An fd open for reading on the regular file ``rel`` and its fstat.
        Raises ``FileNotFoundError``/``NotADirectoryError`` for a missing
        file, ``IsADirectoryError`` for a directory, ``E_DENY_PATH`` for an
        escape or a hard-linked file (checked on the fd itself)."""
        fd, info, _real = self.open_file_real(rel)
        return fd, info

    def open_file_real(self, rel: object) -> tuple[int, os.stat_result, str]:
        """``open_file``, and where the file really is: its workspace-relative
        path with every symlink on the way resolved (the fd walk's own
        record, so it names the very file the fd is open on)."""
        canonical = self.normalize(rel)
        for _attempt in range(_RETRIES):
            with self.locate(rel) as located:
                try:
                    fd = os.open(located.name, _READ_FLAGS, dir_fd=located.dir_fd)
                    real_rel = located.real_rel
                    break
                except OSError as exc:
                    if exc.errno != errno.ELOOP:
                        raise
                    # Swapped to a symlink after the walk looked: walk again.
        else:
            raise self._deny(str(rel), "changed while it was being opened")
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory")
            if not stat.S_ISREG(info.st_mode):
                raise FileNotFoundError(errno.ENOENT, "not a regular file")
            self._check_links(info, canonical)
        except BaseException:
            os.close(fd)
            raise
        return fd, info, real_rel

    def open_dir(self, rel: object) -> int:
        """An fd on the directory ``rel`` (the root for '' or '.'), walked
        by fd like ``open_file``, for listing by ``os.scandir(fd)`` /
        ``os.fwalk(dir_fd=fd)``. Raises ``FileNotFoundError``, or
        ``NotADirectoryError`` for a file."""
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        if self.normalize(rel, allow_root=True) == "":
            return os.open(self.root, flags)
        for _ in range(_RETRIES):
            with self.locate(rel) as located:
                try:
                    return os.open(located.name, flags, dir_fd=located.dir_fd)
                except OSError as exc:
                    if exc.errno == errno.ENOTDIR:
                        kind = os.stat(located.name, dir_fd=located.dir_fd,
                                       follow_symlinks=False).st_mode
                        if not stat.S_ISLNK(kind):
                            raise
                    elif exc.errno != errno.ELOOP:
                        raise
        raise self._deny(str(rel), "changed while it was being opened")

    def read_bytes(self, rel: object, limit: int) -> tuple[bytes, os.stat_result]:
        """The bytes of the regular file ``rel`` (``open_file``), at most
        ``limit`` + 1 of them so the caller can tell it grew past the limit."""
        fd, info = self.open_file(rel)
        with os.fdopen(fd, "rb") as handle:
            return handle.read(limit + 1), info

    def unlink(self, rel: object) -> None:
        """Remove the file (or symlink) ``rel`` names, by its parent's fd.
        A symlink is removed itself, but only when its target would be
        writable here too. ``FileNotFoundError`` when there is none,
        ``IsADirectoryError`` for a directory."""
        with self.locate(rel, write=True, follow_final=False) as located:
            info = os.stat(located.name, dir_fd=located.dir_fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory")
            if stat.S_ISLNK(info.st_mode):
                try:
                    self.locate(rel, write=True).close()
                except (FileNotFoundError, NotADirectoryError):
                    pass  # a dangling link inside the workspace may go
            # unlinkat acts on the name in this directory fd, never on what a
            # symlink there points at.
            os.unlink(located.name, dir_fd=located.dir_fd)

    def check_readable(self, path: Path, canonical: str) -> None:
        """Refuse a regular file with more than one hard link: its other name
        may be ``.env`` or a file outside the workspace. (By path, for
        display callers; ``open_file`` checks the fd it opened.)"""
        try:
            info = os.stat(path)
        except OSError:
            return  # the caller reports a missing file its own way
        self._check_links(info, canonical)

    def _check_links(self, info: os.stat_result, canonical: str) -> None:
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            raise ToolError(
                "E_DENY_PATH", f"{canonical} has {info.st_nlink} hard links; a file with "
                "another name may be a secret or lie outside the workspace, so it is not read",
                details={"path": canonical, "reason": "hard_link", "links": info.st_nlink},
                hint="Copy the file (cp) instead of hard-linking it, then read the copy.")

    def relative(self, path: Path) -> str:
        """The workspace-relative POSIX form of a path inside the root."""
        return Path(path).resolve().relative_to(self.root).as_posix()

    def is_allowed(self, rel: str) -> bool:
        try:
            self.resolve(rel)
        except ToolError:
            return False
        return True

    def _deny(self, rel: str, why: str) -> ToolError:
        return ToolError(
            "E_DENY_PATH",
            f"Path {rel!r} {why}",
            details={"path": rel},
            hint="Use a path relative to the workspace root, without '..', outside "
            + ", ".join(self.forbidden),
        )
