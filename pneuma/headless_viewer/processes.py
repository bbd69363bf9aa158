"""The headless viewer's Chromium as processes: found by a marker switch on
its command line, measured (resident memory of the whole tree), and killed
when it would not close (Linux /proc; elsewhere these find nothing)."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

PROC = Path("/proc")


def _parent(pid: int) -> int | None:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    return int(stat.rpartition(")")[2].split()[1])


def _pids() -> list[int]:
    try:
        return [int(entry.name) for entry in PROC.iterdir() if entry.name.isdigit()]
    except OSError:
        return []


def browser_pid(marker: str) -> int | None:
    """The Chromium browser process whose command line carries ``marker``
    (its helpers carry ``--type=``)."""
    for pid in _pids():
        try:
            argv = (PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in argv and not any(a.startswith(b"--type=") for a in argv):
            return pid
    return None


def process_tree(root: int) -> list[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for pid in _pids():
        parent = _parent(pid)
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, ()))
    return tree


def resident_bytes(pids: list[int]) -> int:
    """The memory ``pids`` hold: their proportional set size (a page shared
    by N of them counts 1/N in each, so the sum is what the tree costs), or
    their resident size where the kernel does not report it."""
    total = 0
    for pid in pids:
        total += _memory_of(pid, "smaps_rollup", "Pss:") or _memory_of(pid, "status", "VmRSS:")
    return total


def _memory_of(pid: int, name: str, key: str) -> int:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in (PROC / str(pid) / name).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


def alive(pid: int) -> bool:
    try:
        state = (PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
