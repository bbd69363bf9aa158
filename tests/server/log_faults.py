"""Helpers for the conversation log's fault tests (tests/server/
test_conversation_log_faults.py and the stress part): a log of known rows,
a damaged page with the rows it held, a process holding the log's lock, a
small full disk in a private mount namespace."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from pneuma.server.conversation_log import ConversationLog

PAGE_SIZE = 4096
_TABLE_LEAF = 0x0D


def body(n: int, size: int = 200) -> str:
    return json.dumps({"type": "user_message", "content": f"message {n} " + "x" * size})


def make_log(state_dir: Path, count: int, *, size: int = 200, session: str = "s1") -> None:
    """A closed log of ``count`` user messages, ids 1..count."""
    log = ConversationLog.open(state_dir)
    log.ensure_conversation(session)
    for n in range(1, count + 1):
        log.append(session, n, n, "user_message", None, body(n, size + (n * 37) % 400))
    log.close()


def rows(path: Path) -> dict[int, str]:
    """Every row of a healthy log: id → body."""
    # Not resolved: a path through /proc/<pid>/root must stay one.
    db = sqlite3.connect(f"{Path(os.path.abspath(path)).as_uri()}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT id, body FROM messages"))
    finally:
        db.close()


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = 0
    for i in range(9):
        byte = data[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    raise AssertionError("unreachable")


def leaf_pages(path: Path) -> dict[int, list[int]]:
    """Table-leaf pages of the ``messages`` table: page number → the row
    ids it holds (read from the file's own cell pointers)."""
    data = path.read_bytes()
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'messages'").fetchone()[0]
    finally:
        db.close()
    pages: dict[int, list[int]] = {}
    stack = [root]
    while stack:
        number = stack.pop()
        start = (number - 1) * PAGE_SIZE
        head = start + (100 if number == 1 else 0)
        kind = data[head]
        cells = int.from_bytes(data[head + 3:head + 5], "big")
        if kind == _TABLE_LEAF:
            ids = []
            for i in range(cells):
                pointer = int.from_bytes(data[head + 8 + 2 * i:head + 10 + 2 * i], "big")
                _size, at = _varint(data, start + pointer)
                row_id, _ = _varint(data, at)
                ids.append(row_id)
            pages[number] = ids
        else:  # an interior page: 4-byte children, then the right-most one
            for i in range(cells):
                pointer = int.from_bytes(data[head + 12 + 2 * i:head + 14 + 2 * i], "big")
                stack.append(int.from_bytes(data[start + pointer:start + pointer + 4], "big"))
            stack.append(int.from_bytes(data[head + 8:head + 12], "big"))
    return pages


def damage_page(path: Path, number: int, junk: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek((number - 1) * PAGE_SIZE)
        f.write(junk)


HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("CREATE TABLE IF NOT EXISTS held (x)")
print("held", flush=True)
sys.stdin.read()
db.execute("ROLLBACK")
"""


def hold_lock(path: Path) -> subprocess.Popen:
    """Another process holding a write transaction on the log (as a
    database browser or a second tool would), until its stdin closes."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def in_small_disk(script: str, mountpoint: Path, size: str, *args: str,
                  timeout: float = 60) -> subprocess.CompletedProcess:
    """``script`` (Python) run with a ``size`` tmpfs mounted on
    ``mountpoint`` in a private mount namespace (we are root; the host's
    mounts never see it)."""
    mountpoint.mkdir(parents=True, exist_ok=True)
    shell = 'mount -t tmpfs -o size="$1" tmpfs "$2" && shift 2 && exec "$@"'
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", shell, "_", size,
         str(mountpoint), sys.executable, "-c", script, str(mountpoint), *args],
        capture_output=True, text=True, timeout=timeout, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def fill(directory: Path) -> Path:
    """Fill the disk under ``directory`` to the last byte; the filler file."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as f:
        for chunk in (b"\0" * 65536, b"\0" * 512, b"\0"):
            try:
                while f.write(chunk):
                    pass
            except OSError:
                pass
    return filler
