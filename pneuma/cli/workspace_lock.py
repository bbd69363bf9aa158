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
from pathlib import Path

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
    if not create and not path.parent.is_dir():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
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


def record_url(workspace: Path, url: str) -> None:
    """Name the ready URL in the lock file (the URL carries the token: the
    file is the owner's alone, as the session files are)."""
    fd = _held.get(str(workspace.resolve()))
    if fd is not None:
        try:
            _write(fd, {"pid": os.getpid(), "url": url})
        except OSError:
            pass  # only a nicer message for a second start is lost


def _write(fd: int, info: dict[str, object]) -> None:
    data = json.dumps(info).encode("utf-8")
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
