"""A rewind's journal: its writes made durable after the person's wait,
and completed at the next store operation after a crash.

docs/checkpoints.md, "How a restore writes, and what a kill -9 leaves",
gives the order. In short: the undo point and the stored contents of every
file the rewind replaces or deletes are synced first (the person's text
survives a power cut), then this journal (what each file must become, and
what it was) is written and synced once; then the files are written and
renamed into place without a sync each; the syncs of those files and
folders run after the rewind has answered, in a thread of their own, and
only then is the journal removed.

A journal still there at the next locked store operation of a process that
is not itself finishing it (``in_flight``) is re-applied first: a file
still as it was before the rewind is rewritten from its stored content, a
file already as the rewind wants it is left, and a file that is neither
(someone changed it since) is left too: the undo point holds what it was.
So a power cut or a ``kill -9`` at any step ends before the rewind or
after it, never with a mix, and nothing the person had is lost.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from pneuma.checkpoints import batch_write
from pneuma.checkpoints.batch_write import FileToWrite, write_files
from pneuma.checkpoints.blobs import BlobStore, sha256
from pneuma.core.errors import ToolError
from pneuma.core.sandbox import Sandbox
from pneuma.core.state_files import read_state_bytes, write_state_bytes


class Checkpoints(Protocol):
    """What the journal uses of the store (pneuma.checkpoints.store, which
    calls ``replay`` under its lock: named here, not imported)."""

    workspace: Path
    directory: Path
    blobs: BlobStore
    sandbox: Sandbox

    def read_blob(self, digest: str, path: str) -> bytes: ...

    def _locked(self, replay: bool = True) -> AbstractContextManager[None]: ...

    def _leave_agent_note(self, note: str) -> None: ...

JOURNAL = "restore-journal.json"
_EMPTY = sha256(b"")
_in_flight: set[str] = set()  # journals this process is making durable itself
_pending: list[Future[None]] = []
_pending_lock = threading.Lock()


@dataclass
class Entry:
    path: str
    want: str | None  # the content's hash it must hold; None: deleted
    had: str | None  # the content it held before the rewind; None: none
    mode: int  # the permission bits it is written with

    def to_json(self) -> list[Any]:
        return [self.path, self.want, self.had, self.mode]


def write_journal(store: Checkpoints, ident: str, entries: list[Entry]) -> None:
    """Write and sync the journal, once the stored contents of what the
    rewind replaces are durable (``sync_blobs``), before any workspace
    file's name changes."""
    data = json.dumps({"id": ident, "files": [e.to_json() for e in entries]}).encode()
    with _pending_lock:
        _in_flight.add(_key(store, ident))
    write_state_bytes(store.directory / JOURNAL, data, 0o600)
    batch_write._reached("journaled")


def sync_blobs(store: Checkpoints, digests: Iterable[str]) -> None:
    """fsync each blob and each of their folders, from the kept pool, but
    those this process has synced already (``sync_stored`` after each
    turn): most were stored turns ago and are on disk."""
    unknown = store.blobs.not_known_durable(set(digests))
    paths = sorted({store.blobs.path(d) for d in unknown})
    folders = sorted({p.parent for p in paths})
    batch_write.sync_paths([*map(str, paths), *map(str, folders)])
    store.blobs.mark_durable(unknown)


def sync_stored(store: Checkpoints) -> None:
    """fsync the blobs the store wrote since the last call, with their
    folders: after a turn's recordings, off the turn's path, so that a
    rewind later finds its undo point's contents on disk already."""
    sync_blobs(store, store.blobs.take_unsynced())


def finish_later(store: Checkpoints, ident: str, written: Iterable[str],
                 folders: Iterable[str], then: Callable[[], None] | None = None) -> None:
    """Sync the files the rewind wrote and the folders it changed, then
    remove its journal: after the person's wait, in a thread of its own.
    ``then`` runs after that in a thread of its own, outside what
    ``wait_until_durable`` waits for (pneuma.checkpoints.settle)."""
    future = batch_write.submit(partial(_finish, store, ident, sorted(set(written)),
                                        sorted(set(folders)), then))
    with _pending_lock:
        _pending[:] = [f for f in _pending if not f.done()]
        _pending.append(future)


def _finish(store: Checkpoints, ident: str, written: list[str], folders: list[str],
            then: Callable[[], None] | None) -> None:
    try:
        root = str(store.workspace)
        batch_write.sync_paths([os.path.join(root, p) for p in written]
                               + [os.path.join(root, f) for f in folders])
        batch_write._reached("synced")
        with store._locked(replay=False):
            if _journal_id(store) == ident:
                (store.directory / JOURNAL).unlink(missing_ok=True)
    finally:
        with _pending_lock:
            _in_flight.discard(_key(store, ident))
    if then is not None:
        # Not part of the durability the next rewind waits for.
        batch_write.submit(then)


def _key(store: Checkpoints, ident: str) -> str:
    """A journal's name in this process: its store's folder and undo ref."""
    return f"{store.directory}\0{ident}"


def wait_until_durable() -> None:
    """Wait for every rewind of this process to be on disk (tests, exit)."""
    while True:
        with _pending_lock:
            if not _pending:
                return
            future = _pending.pop()
        # One that failed left its journal: the next store operation
        # applies it again (replay), which is all that can be done.
        future.exception()


def _journal_id(store: Checkpoints) -> str | None:
    try:
        return str(json.loads(read_state_bytes(store.directory / JOURNAL))["id"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def replay(store: Checkpoints) -> list[str]:
    """Complete a rewind a crash interrupted (module docstring), under the
    store's lock; the paths it changed."""
    path = store.directory / JOURNAL
    try:
        raw = json.loads(read_state_bytes(path))
        ident, rows = str(raw["id"]), raw["files"]
        entries = [Entry(str(r[0]), r[1], r[2], int(r[3])) for r in rows]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        path.unlink(missing_ok=True)  # not ours to act on: the undo point holds the files
        return []
    with _pending_lock:
        if _key(store, ident) in _in_flight:
            return []
    changed = _apply(store, entries)
    root = str(store.workspace)
    batch_write.sync_paths([os.path.join(root, p) for p in changed]
                           + [os.path.join(root, os.path.dirname(p) or ".") for p in changed])
    path.unlink(missing_ok=True)
    if changed:
        store._leave_agent_note(
            "A rewind interrupted earlier was completed; these files changed on disk and "
            "should be read again before editing: " + ", ".join(changed) + ".")
    return changed


def _apply(store: Checkpoints, entries: list[Entry]) -> list[str]:
    to_write: list[FileToWrite] = []
    changed: list[str] = []
    for entry in entries:
        now = _hash_now(store, entry.path)
        # Empty where it held something: a write a power cut caught before
        # its data reached the disk, not a change of anyone's.
        torn = now == _EMPTY and entry.had != _EMPTY
        if now == entry.want or (now != entry.had and not torn):
            continue  # done already, or changed since by someone: left as it is
        if entry.want is None:
            try:
                store.sandbox.unlink(entry.path)
            except (FileNotFoundError, ToolError, OSError):
                continue
            changed.append(entry.path)
        else:
            to_write.append(FileToWrite(entry.path, entry.mode,
                                        partial(store.read_blob, entry.want, entry.path)))
    written, _failed = write_files(store.sandbox, to_write)
    return sorted([*changed, *written])


def _hash_now(store: Checkpoints, rel: str) -> str | None:
    try:
        fd, _ = store.sandbox.open_file(rel)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (ToolError, OSError):
        return "?"  # not a file the rewind can judge: left as it is
    with os.fdopen(fd, "rb") as handle:
        return sha256(handle.read())
