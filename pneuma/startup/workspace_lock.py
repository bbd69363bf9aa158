"""One `pneuma run` per workspace.

Two servers on one workspace rewrite each other's CLAUDE.md and skill and
replace each other's session. ``pneuma run`` therefore holds an exclusive
``flock`` on ``W/.pneuma/server.lock`` for as long as it lives (the kernel
drops it when the process ends, however it ends; the descriptor is not
inherited by the agent, so an orphaned agent does not keep it). The file
names the holder — its pid and, once announced, its ready URL — so that a
second `pneuma run` can say where the workspace is already served.

The headless WebGAL preview (``pneuma.server.headless``) neither takes nor
checks this lock: it writes no session, CLAUDE.md or skill, only serves
files for preview, and so may run beside a `pneuma run` on the same game.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from pathlib import Path

from pneuma.core.state_files import STATE_DIR, open_state_file, read_state_bytes

LOCK_FILE = ".pneuma/server.lock"

_held: dict[str, int] = {}  # resolved workspace -> the locked descriptor, kept open till exit


class WorkspaceBusy(Exception):
    """Another process holds the workspace; ``str()`` says which."""


def _describe(holder: str) -> str:
    try:
        info = json.loads(holder)
    except ValueError:
        info = None
    if not isinstance(info, dict):
        return "another `pneuma run`"
    where = f"another `pneuma run` (pid {info.get('pid')})"
    url = info.get("url")
    return f"{where} at {url}" if isinstance(url, str) and url else where


def acquire(workspace: Path, *, create: bool = True) -> bool:
    """Lock ``workspace`` for this process; raises ``WorkspaceBusy``.
    With ``create=False`` a workspace without ``.pneuma/`` (never run,
    so served by no one yet) is left as it is and False returned."""
    key = str(workspace.resolve())
    if key in _held:
        return True
    path = Path(key) / LOCK_FILE
    if not create and not _is_real_dir(Path(key) / STATE_DIR):
        return False
    # Never through a link: the file gets the session URL with its token
    # (pneuma.core.state_files refuses one with the line to show).
    fd = open_state_file(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64 * 1024, 0).decode("utf-8", "replace")
        os.close(fd)
        raise WorkspaceBusy(f"{workspace} is already served by {_describe(holder)}") from None
    _held[key] = fd
    _write(fd, {"pid": os.getpid(), "url": None})
    return True


def holds(workspace: Path) -> bool:
    """Whether this process has locked ``workspace`` already."""
    return str(workspace.resolve()) in _held


def release(workspace: Path) -> None:
    """Give up this process's lock on ``workspace`` (the launcher closing
    one of the workspaces it serves); nothing happens when it holds none."""
    fd = _held.pop(str(workspace.resolve()), None)
    if fd is None:
        return
    try:
        os.ftruncate(fd, 0)  # names no holder any more
    except OSError:
        pass
    os.close(fd)  # closing the descriptor drops the flock


def holder(workspace: Path) -> dict[str, object] | None:
    """What the lock file of ``workspace`` says about its holder (pid, URL),
    without touching the lock; None when it names none. Whether the lock
    is held at all is ``is_locked``'s question."""
    try:
        data = read_state_bytes(workspace / LOCK_FILE, 64 * 1024)
        info = json.loads(data.decode("utf-8", "replace")) if data.strip() else None
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def held_flocks() -> set[tuple[int, int, int]] | None:
    """The (major, minor, inode) of every file some process holds a
    ``flock`` on now, from ``/proc/locks`` (waiters left out); None where
    there is no ``/proc/locks`` (not Linux). Read once to ask about many
    workspaces (the launcher's list)."""
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            lines = locks.read().splitlines()
    except OSError:
        return None
    held: set[tuple[int, int, int]] = set()
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF" ("->" marks a waiter)
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            held.add((int(major, 16), int(minor, 16), int(inode)))
        except ValueError:
            continue
    return held


def is_locked(workspace: Path, held: set[tuple[int, int, int]] | None = None) -> bool:
    """Whether some process holds the lock of ``workspace`` now (``held``:
    a ``held_flocks()`` already read, when asking about many).

    Answered from ``/proc/locks`` rather than by trying the lock: even a
    shared lock taken for a moment would make a `pneuma run` starting at
    that instant refuse the workspace as busy. Without ``/proc/locks`` (not
    Linux) the holder's pid is asked instead (``os.kill(pid, 0)``)."""
    try:
        st = (workspace / LOCK_FILE).lstat()
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False  # a link or a FIFO planted there is no lock of ours
    if str(workspace.resolve()) in _held:
        return True
    if held is None:
        held = held_flocks()
    if held is not None:
        # The inode alone may repeat on another device.
        return (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) in held
    info = holder(workspace)
    pid = info.get("pid") if info else None
    return isinstance(pid, int) and pid > 0 and pid_exists(pid)


def pid_exists(pid: int) -> bool:
    """Whether a process ``pid`` exists, another user's too (signal 0 asks
    without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def record_url(workspace: Path, url: str) -> None:
    """Name the ready URL in the lock file (the URL carries the token: the
    file is the owner's alone, as the session files are)."""
    fd = _held.get(str(workspace.resolve()))
    if fd is not None:
        try:
            _write(fd, {"pid": os.getpid(), "url": url})
        except OSError:
            pass  # only a nicer message for a second start is lost


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _write(fd: int, info: dict[str, object]) -> None:
    data = json.dumps(info).encode("utf-8")
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
