"""Reading and writing workspace text files for tools: through the sandbox,
with the contract's errors, and atomically (temp file + fsync + rename)."""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import secrets
import stat
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from pneuma.core.errors import ToolError
from pneuma.core.sandbox import Sandbox

log = logging.getLogger(__name__)


class SandboxedFiles(Protocol):
    """What the file helpers need of a ``ToolContext``: its sandbox and its
    policies (``maxReadBytes``, ``maxWriteBytes``). Declared here rather than
    imported, so that this module stays below ``pneuma.tools.context``."""

    sandbox: Sandbox
    policies: Mapping[str, Any]


def content_hash(text: str) -> str:
    """The contract's contentHash: the first 8 hex digits of SHA-256 of the UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def max_read_bytes(ctx: SandboxedFiles) -> int:
    return int(ctx.policies.get("maxReadBytes") or 5 * 1024 * 1024)


def read_text(ctx: SandboxedFiles, rel: str, max_bytes: int | None = None) -> tuple[str, str]:
    """``(text, content_hash)`` of a UTF-8 file inside the workspace."""
    canonical = ctx.sandbox.normalize(rel)
    limit = max_read_bytes(ctx)
    if max_bytes is not None:
        limit = min(limit, max_bytes)
    try:
        # By fd, walked from the workspace root: a symlink swapped after a
        # check cannot lead this read outside (Sandbox.open_file).
        fd, info = ctx.sandbox.open_file(rel)
        with os.fdopen(fd, "rb") as handle:
            if info.st_size > limit:
                raise ToolError("E_TOO_LARGE", f"{canonical} is {info.st_size} bytes; the "
                                f"limit is {limit}", details={"path": canonical,
                                                              "bytes": info.st_size,
                                                              "limit": limit},
                                hint="Use search_files to find the lines you need.")
            data = handle.read(limit + 1)
    except IsADirectoryError:
        raise ToolError("E_NOT_FOUND", f"{canonical} is a directory, not a file",
                        details={"path": canonical, "isDirectory": True},
                        hint="Use list_files to see what it holds.") from None
    except (FileNotFoundError, NotADirectoryError):
        raise not_found(canonical) from None
    except ToolError:
        raise
    except OSError as exc:
        raise ToolError("E_IO", f"Cannot read {canonical}: {exc.strerror or type(exc).__name__}",
                        details={"path": canonical}) from None
    if len(data) > limit:  # grew since fstat
        raise ToolError("E_TOO_LARGE", f"{canonical} is more than {limit} bytes; the limit is "
                        f"{limit}", details={"path": canonical, "bytes": len(data),
                                             "limit": limit})
    text = decode(data, canonical)
    return text, content_hash(text)


def decode(data: bytes, canonical: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError("E_ENCODING", f"{canonical} is not UTF-8 text (bad byte at offset "
                        f"{exc.start})", details={"path": canonical, "offset": exc.start},
                        hint="Only UTF-8 text files can be read or edited with these tools.") \
            from None


def not_found(canonical: str) -> ToolError:
    parent = canonical.rsplit("/", 1)[0] if "/" in canonical else "."
    return ToolError("E_NOT_FOUND", f"File not found: {canonical}",
                     details={"path": canonical},
                     hint=f"Check the name, or run list_files on {parent}.")


def current_hash(ctx: SandboxedFiles, rel: str) -> str | None:
    """contentHash of the file now, or None when it does not exist."""
    try:
        return read_text(ctx, rel)[1]
    except ToolError as exc:
        if exc.code == "E_NOT_FOUND" and not exc.details.get("isDirectory"):
            return None
        raise


def check_text(ctx: SandboxedFiles, canonical: str, text: str) -> bytes:
    """The bytes to write, or E_ENCODING / E_TOO_LARGE."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError("E_ENCODING", f"content for {canonical} holds a character that is not "
                        f"valid Unicode text at {exc.start}", details={"path": canonical}) from None
    limit = int(ctx.policies.get("maxWriteBytes") or 5 * 1024 * 1024)
    if len(data) > limit:
        raise ToolError("E_TOO_LARGE", f"content for {canonical} is {len(data)} bytes; the "
                        f"limit is {limit}", details={"path": canonical, "bytes": len(data),
                                                      "limit": limit},
                        hint="Split the file, or raise maxWriteBytes in the policy file.")
    return data


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves the old or the new
    content: a temp file in the same directory, fsync, rename, fsync the directory.

    ``mode`` gives the file exactly these permission bits, from the temp
    file's creation on: a private file is never readable by others, not even
    for a moment. Without it an existing file keeps its own bits and a new
    one gets 0o644 (less the umask).

    The temp file is ``.pneuma.<8 hex>.tmp`` (``temp_name``): the file watcher ignores that
    pattern (pneuma.server.watcher.ALWAYS_IGNORED), and it is removed again
    when the write fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / temp_name(path.name)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)  # os.open's mode was narrowed by the umask
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(path.parent)


def temp_name(name: str) -> str:
    """The name of ``atomic_write_bytes``' temp file for a file ``name``:
    20 bytes whatever ``name`` is. A name derived from the file's own (it
    was ``.<name>.<8 hex>.tmp``) does not fit NAME_MAX for names of 242 bytes
    and more, which the sandbox accepts; O_EXCL settles the rare clash."""
    del name  # kept in the signature: callers name the file the temp is for
    return f".pneuma.{secrets.token_hex(4)}.tmp"


# What temp_name makes, and what it made before (``.<name>.<8 hex>.tmp``,
# still cleaned up after a crash); a user's ".notes.tmp" or
# "draft.1234abcd.tmp" does not match.
TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")
# A temp file untouched this long has no writer: a write takes seconds at
# most (its mtime moves while it goes on), so only a writer killed mid-way
# leaves one this old. The name holds no pid to ask instead.
STALE_TEMP_AGE = 600.0
# Folders no Pneuma write goes to, and too big to walk at every start.
_NOT_WALKED = frozenset({".git", "node_modules"})


def remove_stale_temp_files(root: Path, min_age: float = STALE_TEMP_AGE) -> list[Path]:
    """Remove the temp files of atomic writes killed mid-way (kill -9, a
    power cut) under ``root``: regular files named as ``temp_name`` makes
    and not modified for ``min_age`` seconds. Symlinks are neither removed
    nor followed. Returns what was removed."""
    removed: list[Path] = []
    cutoff = time.time() - min_age
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _NOT_WALKED]
        for name in files:
            if not TEMP_NAME.fullmatch(name):
                continue
            path = Path(folder, name)
            try:
                info = path.lstat()
                if not stat.S_ISREG(info.st_mode) or info.st_mtime > cutoff:
                    continue
                path.unlink()
            except OSError:
                continue  # gone already, or not ours to remove
            removed.append(path)
    if removed:
        log.info("removed %d temp file(s) left by interrupted writes", len(removed))
    return removed


def fsync_dir(directory: Path) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def write_in_workspace(sandbox: Sandbox, rel: str, data: bytes) -> None:
    """Replace the workspace file ``rel`` with ``data`` atomically, by fd:
    its parent directory is walked from the root (Sandbox.locate, missing
    folders made), the temp file is created in that directory's fd and
    renamed there, so a symlink swapped meanwhile cannot move the write
    outside. A symlink inside the workspace is written through to its
    target, as before. ``IsADirectoryError`` when ``rel`` is a directory."""
    for attempt in range(3):
        with sandbox.locate(rel, write=True, create_dirs=True) as located:
            try:
                atomic_write_at(located.dir_fd, located.name, data)
                return
            except OSError as exc:
                # ELOOP: the name became a symlink after the walk; walk again.
                if exc.errno != errno.ELOOP or attempt == 2:
                    raise


def atomic_write_at(dir_fd: int, name: str, data: bytes, mode: int | None = None) -> None:
    """``atomic_write_bytes`` for the name ``name`` in the open directory
    ``dir_fd``: temp file (``temp_name``), fsync, rename, fsync the
    directory — every step relative to ``dir_fd``, never following a
    symlink."""
    if mode is None:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory")
            if stat.S_ISLNK(info.st_mode):
                raise OSError(errno.ELOOP, "became a symlink")
            mode = info.st_mode & 0o7777
    tmp = temp_name(name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o644 if mode is None else mode, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)  # os.open's mode was narrowed by the umask
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # rename replaces the directory entry itself; a symlink put there
        # meanwhile is replaced, not followed.
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise
    try:
        os.fsync(dir_fd)
    except OSError:
        pass


def atomic_write_text(ctx: SandboxedFiles, rel: str, text: str) -> int:
    """Write a workspace file atomically; returns the number of bytes written."""
    canonical = ctx.sandbox.normalize(rel)
    ctx.sandbox.resolve_writable(rel)  # the refusals callers expect, before any encoding
    data = check_text(ctx, canonical, text)
    try:
        write_in_workspace(ctx.sandbox, canonical, data)
    except IsADirectoryError:
        raise ToolError("E_CONFLICT", f"{canonical} is a directory",
                        details={"path": canonical}) from None
    except ToolError:
        raise
    except OSError as exc:
        raise ToolError("E_IO", f"Cannot write {canonical}: {exc.strerror or type(exc).__name__}",
                        details={"path": canonical}) from None
    return len(data)
