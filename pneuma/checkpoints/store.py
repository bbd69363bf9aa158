"""The checkpoint store of one workspace, under ``W/.pneuma/checkpoints/``:

    blobs/<2 hex>/<62 hex>     file contents by SHA-256 (pneuma.checkpoints.blobs)
    manifests/<seq>-<ref>.json one per checkpoint (pneuma.checkpoints.model)
    lock                       flock held while the store changes

Manifests are JSON files rather than rows of an SQLite database: there are
at most a few hundred, each written once (and once more at the turn's end)
and atomically, read whole, and easy to look at when something went wrong;
the file name alone gives the order and the ref, so listing or pruning needs
no parsing. ``pneuma run`` and a ``pneuma checkpoints`` command may touch
the store at once; the ``flock`` keeps them in turn.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pneuma.checkpoints.blobs import BlobStore
from pneuma.checkpoints.compare import Changes, changes, unified_diff
from pneuma.checkpoints.model import Checkpoint, FileMap, Kind
from pneuma.checkpoints.policy import StorePolicy
from pneuma.checkpoints.scan import scan
from pneuma.core.errors import ToolError
from pneuma.core.file_filter import FileFilter
from pneuma.core.sandbox import Sandbox
from pneuma.core.state_files import (
    ensure_dir,
    open_state_file,
    read_state_bytes,
    write_state_bytes,
)

STORE_DIR = ".pneuma/checkpoints"
# In STORE_DIR: what the next message to the agent must say about restores.
AGENT_NOTE = "agent-note.txt"
# In STORE_DIR: restores the chat has not listed yet, a JSON object a line.
# A restore from the terminal leaves one for `pneuma run` to list (now, if
# it runs, or when it next starts); the chat's own restores go the same way.
CHAT_NOTICES = "chat-notices.jsonl"
MESSAGE_CHARS = 80
_MANIFEST_NAME = re.compile(r"^(\d{8})-(\d+|u\d+)\.json$")
_REF = re.compile(r"^(?:\d+|u\d+)$")


def first_words(message: str, limit: int = MESSAGE_CHARS) -> str:
    text = " ".join(message.split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


class Checkpoints:
    """Record, list, compare and restore a workspace's checkpoints.

    ``watch``/``ignore`` are the mode's ``viewer.watch_patterns`` and
    ``ignore_patterns`` (what the viewer shows is what a rewind brings back);
    ``open_existing`` takes them from the newest checkpoint instead, for the
    command line, which has no mode loaded."""

    def __init__(self, workspace: Path, watch: Iterable[str] = ("**/*",),
                 ignore: Iterable[str] = (), policy: StorePolicy | None = None):
        self.workspace = Path(workspace).resolve()
        self.watch = list(watch)
        self.ignore = list(ignore)
        self.policy = policy or StorePolicy()
        self.sandbox = Sandbox(self.workspace)
        self.watched = FileFilter(self.watch, self.ignore)
        self.directory = self.workspace / STORE_DIR
        self.manifests = self.directory / "manifests"
        self.blobs = BlobStore(self.directory / "blobs")

    @classmethod
    def open_existing(cls, workspace: Path, policy: StorePolicy | None = None) -> "Checkpoints":
        if not Path(workspace).is_dir():
            raise ToolError("E_NOT_FOUND", f"{workspace} is not a folder",
                            details={"workspace": str(workspace)})
        store = cls(workspace, policy=policy)
        newest = store._names()[-1:]
        if newest:
            latest = store._load(newest[0])
            store.watch, store.ignore = latest.watch or ["**/*"], latest.ignore
            store.watched = FileFilter(store.watch, store.ignore)
        return store

    # --- recording ---

    def record(self, message: str, turn: int | None = None,
               conversation: str | None = None, *, files: FileMap | None = None,
               prune: bool = True) -> Checkpoint:
        """Record the watched files before a user turn reaches the agent.
        ``turn`` defaults to one more than the newest turn recorded (so the
        numbers stay unique across conversations of one workspace; the
        ``conversation`` id is kept beside them). Only files whose size,
        mtime or inode changed since the newest checkpoint are read.
        ``files``: the map already scanned and stored (the turn listener's,
        pneuma.checkpoints.baseline); ``prune=False`` leaves the size policy
        to a later ``prune()`` (once the message is on its way)."""
        with self._locked():
            names = self._names()
            if turn is None:
                turns = [int(m.group(2)) for m in map(_MANIFEST_NAME.match, names)
                         if m and not m.group(2).startswith("u")]
                turn = max(turns, default=0) + 1
            elif turn < 1:
                raise ToolError("E_BAD_ARGS", "a turn number is 1 or more",
                                details={"turn": turn})
            checkpoint = self._take("turn", turn, first_words(message), names,
                                    conversation=conversation, files=files)
            if prune:
                self._prune()
            return checkpoint

    def turn_ended(self, *, files: FileMap | None = None,
                   prune: bool = True) -> Checkpoint | None:
        """Record, in the newest checkpoint, the watched files as the turn
        left them: what changes after this is no longer the agent's turn
        (a hand edit), and a restore reports it as a conflict. Nothing when
        the newest checkpoint is not a turn's (a restore came after it: its
        undo point already holds what the restore left). ``files`` and
        ``prune`` as for ``record``."""
        with self._locked():
            names = self._names()
            if not names:
                return None
            latest = self._load(names[-1])
            if latest.kind != "turn":
                return None
            latest.after = self._scan_stored(latest.after or latest.files) \
                if files is None else files
            latest.after_timestamp_ms = _now_ms()
            self._write(latest)
            if prune:
                self._prune()
            return latest

    def _take(self, kind: Kind, number: int, message: str, names: list[str],
              restored_to: str | None = None, conversation: str | None = None,
              files: FileMap | None = None) -> Checkpoint:
        seq = 1
        previous: FileMap | None = None
        if names:
            newest = self._load(names[-1])
            seq = newest.seq + 1
            previous = newest.after or newest.files
        checkpoint = Checkpoint(seq=seq, kind=kind, number=number, timestamp_ms=_now_ms(),
                                message=message, watch=self.watch, ignore=self.ignore,
                                files=self._scan_stored(previous) if files is None else files,
                                restored_to=restored_to,
                                conversation=conversation)
        self._write(checkpoint)
        return checkpoint

    def _scan_stored(self, previous: FileMap | None) -> FileMap:
        try:
            return scan(self.sandbox, self.watched, self.blobs, previous,
                        self.policy.max_file_bytes)
        except OSError as exc:
            raise ToolError("E_IO", f"cannot record the workspace's files: "
                            f"{exc.strerror or exc}") from None

    def current(self) -> FileMap:
        """The watched files as they are now (hashed, not stored)."""
        names = self._names()
        previous = None
        if names:
            newest = self._load(names[-1])
            previous = newest.after or newest.files
        return scan(self.sandbox, self.watched, None, previous, self.policy.max_file_bytes)

    # --- reading ---

    def checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint kept, oldest first."""
        return [self._load(name) for name in self._names()]

    def get(self, ref: str | int) -> Checkpoint:
        ref = str(ref).strip()
        if not _REF.match(ref):
            raise ToolError("E_BAD_ARGS", f"{ref!r} is not a checkpoint: give a turn number "
                            "(3) or an undo point (u1)", details={"ref": ref})
        for name in reversed(self._names()):
            if _MANIFEST_NAME.match(name).group(2) == ref:  # type: ignore[union-attr]
                return self._load(name)
        raise ToolError("E_NOT_FOUND", f"no checkpoint {ref} in {self.workspace}",
                        details={"ref": ref},
                        hint="`pneuma checkpoints list` shows the ones kept.")

    def state_after(self, checkpoint: Checkpoint, following: list[Checkpoint],
                    now: FileMap | None = None) -> FileMap:
        """The files as the checkpoint's turn left them: recorded at its end,
        else at the next checkpoint, else as they are now."""
        if checkpoint.after is not None:
            return checkpoint.after
        if following:
            return following[0].files
        return now if now is not None else self.current()

    def changes_of(self, ref: str | int) -> Changes:
        """What the turn (or the restore) changed."""
        all_ = self.checkpoints()
        checkpoint = self.get(ref)
        following = [c for c in all_ if c.seq > checkpoint.seq]
        return changes(checkpoint.files, self.state_after(checkpoint, following))

    def diff(self, from_ref: str | int, to_ref: str | int | None = None) -> Changes:
        """Files added, modified, removed from one checkpoint to another (or
        to the workspace now)."""
        old = self.get(from_ref).files
        new = self.current() if to_ref is None else self.get(to_ref).files
        return changes(old, new)

    def file_diff(self, path: str, from_ref: str | int, to_ref: str | int | None = None) -> str:
        """A unified diff of one text file between two checkpoints (or a
        checkpoint and the workspace now); "" when it is the same."""
        canonical = self.sandbox.normalize(path)
        old = self._text_in(self.get(from_ref).files, canonical, str(from_ref))
        if to_ref is None:
            new = self._text_now(canonical)
        else:
            new = self._text_in(self.get(to_ref).files, canonical, str(to_ref))
        return unified_diff(canonical, old, new)

    def turn_file_diff(self, ref: str | int, path: str, to: str = "after") -> str:
        """A unified diff of one text file from before turn ``ref`` to what
        the turn left (``to="after"``) or to the workspace now (``"now"``);
        "" when it is the same. A turn still running (nothing recorded after
        it) compares with the workspace now."""
        if to not in ("after", "now"):
            raise ToolError("E_BAD_ARGS", "'to' is 'after' (what the turn left) or 'now'",
                            details={"to": to})
        canonical = self.sandbox.normalize(path)
        all_ = self.checkpoints()
        checkpoint = self.get(ref)
        old = self._text_in(checkpoint.files, canonical, checkpoint.ref)
        following = [c for c in all_ if c.seq > checkpoint.seq]
        if to == "now" or (checkpoint.after is None and not following):
            return unified_diff(canonical, old, self._text_now(canonical))
        after = self.state_after(checkpoint, following)
        return unified_diff(canonical, old,
                            self._text_in(after, canonical, f"{checkpoint.ref} (after)"))

    def _text_in(self, files: FileMap, path: str, ref: str) -> str | None:
        entry = files.get(path)
        if entry is None:
            return None
        if entry.hash is None:
            raise ToolError("E_TOO_LARGE" if entry.skipped == "too_big" else "E_UNSUPPORTED",
                            f"{path} was not kept in checkpoint {ref} ({_why(entry.skipped)})",
                            details={"path": path, "reason": entry.skipped})
        return _decode(self.read_blob(entry.hash, path), path)

    def _text_now(self, path: str) -> str | None:
        try:
            fd, _ = self.sandbox.open_file(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(self.policy.max_file_bytes + 1)
        if len(data) > self.policy.max_file_bytes:
            raise ToolError("E_TOO_LARGE", f"{path} is too big to compare",
                            details={"path": path})
        return _decode(data, path)

    def read_blob(self, digest: str, path: str) -> bytes:
        try:
            return self.blobs.get(digest)
        except (OSError, ValueError) as exc:
            raise ToolError("E_IO", f"the stored content of {path} is missing or damaged: "
                            f"{getattr(exc, 'strerror', None) or exc}",
                            details={"path": path, "hash": digest}) from None

    # --- for the turn listener and the restore (engineer B; keep these) ---

    def newest_files(self) -> FileMap | None:
        """The newest checkpoint's files as its turn left them (else as it
        began); None without checkpoints. What a new scan compares with."""
        names = self._names()
        if not names:
            return None
        newest = self._load(names[-1])
        return newest.after or newest.files

    def prune(self) -> None:
        """Apply the size policy (``record(..., prune=False)`` left it)."""
        with self._locked():
            self._prune()

    # --- size policy ---

    def _prune(self) -> None:
        """Drop the oldest checkpoints past ``max_checkpoints``, then while
        blobs and manifests together pass ``max_blob_bytes`` (never the
        newest), and the blobs no one names."""
        names = self._names()
        excess = len(names) - self.policy.max_checkpoints
        dropped = False
        for name in names[:max(excess, 0)]:
            (self.manifests / name).unlink(missing_ok=True)
            dropped = True
        names = self._names()
        sizes = self.blobs.sizes()
        if not dropped and self._stored_bytes(sizes, names) <= self.policy.max_blob_bytes:
            return
        kept = {name: self._load(name).hashes() for name in names}
        self._collect(sizes, set().union(*kept.values()) if kept else set())
        sizes = self.blobs.sizes()
        while len(kept) > 1 and self._stored_bytes(sizes, list(kept)) > \
                self.policy.max_blob_bytes:
            oldest = next(iter(kept))
            (self.manifests / oldest).unlink(missing_ok=True)
            del kept[oldest]
            self._collect(sizes, set().union(*kept.values()))
            sizes = self.blobs.sizes()

    def _stored_bytes(self, sizes: dict[str, int], names: list[str]) -> int:
        manifests = 0
        for name in names:
            try:
                manifests += (self.manifests / name).stat().st_size
            except FileNotFoundError:
                pass
        return sum(sizes.values()) + manifests

    def _collect(self, sizes: dict[str, int], referenced: set[str]) -> None:
        for digest in sizes.keys() - referenced:
            self.blobs.remove(digest)

    # --- files of the store ---

    def _names(self) -> list[str]:
        try:
            names = [n for n in os.listdir(self.manifests) if _MANIFEST_NAME.match(n)]
        except FileNotFoundError:
            return []
        return sorted(names)

    def _load(self, name: str) -> Checkpoint:
        try:
            return Checkpoint.from_json(json.loads(read_state_bytes(self.manifests / name)))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ToolError("E_IO", f"checkpoint file {name} cannot be read: {exc}",
                            details={"file": name}) from None

    def _write(self, checkpoint: Checkpoint) -> None:
        name = f"{checkpoint.seq:08d}-{checkpoint.ref}.json"
        data = json.dumps(checkpoint.to_json(), ensure_ascii=False, separators=(",", ":"))
        write_state_bytes(self.manifests / name, data.encode("utf-8"), 0o600)

    # --- telling the agent ---

    @property
    def _note_path(self) -> Path:
        return self.directory / AGENT_NOTE

    def _leave_agent_note(self, note: str) -> None:
        """Keep ``note`` for the agent's next message (under the lock; a
        second restore before that message adds its own line)."""
        if not note:
            return
        try:
            earlier = read_state_bytes(self._note_path).decode("utf-8", "replace")
        except FileNotFoundError:
            earlier = ""
        write_state_bytes(self._note_path, (earlier + note + "\n").encode("utf-8"), 0o600)

    def take_agent_note(self) -> str:
        """What restores since the agent's last message left for it to know
        (which files changed on disk), once: the note is gone afterwards."""
        with self._locked():
            try:
                note = read_state_bytes(self._note_path).decode("utf-8", "replace")
            except FileNotFoundError:
                return ""
            self._note_path.unlink(missing_ok=True)
        return note.strip()

    # --- telling the chat ---

    def _leave_chat_notice(self, notice: dict[str, Any]) -> None:
        """Keep ``notice`` (a restore's summary) for the chat (under the lock)."""
        path = self.directory / CHAT_NOTICES
        try:
            earlier = read_state_bytes(path)
        except FileNotFoundError:
            earlier = b""
        line = json.dumps(notice, ensure_ascii=False).encode("utf-8") + b"\n"
        write_state_bytes(path, earlier + line, 0o600)

    def take_chat_notices(self) -> list[dict[str, Any]]:
        """The restores the chat has not listed yet, oldest first, once. Under
        the store's lock, which a restore holds from its first write to its
        notice: a caller woken by the restored files waits for the notice
        rather than missing it. A damaged line is skipped: the files were
        restored all the same."""
        path = self.directory / CHAT_NOTICES
        if not self.directory.is_dir():
            return []
        with self._locked():
            try:
                text = read_state_bytes(path).decode("utf-8", "replace")
            except FileNotFoundError:
                return []
            path.unlink(missing_ok=True)
        notices = []
        for line in text.splitlines():
            try:
                notice = json.loads(line)
            except ValueError:
                continue
            if isinstance(notice, dict):
                notices.append(notice)
        return notices

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # Every folder of the store walked without following a link: one
        # planted there would put blobs and manifests outside the workspace.
        fd = open_state_file(self.directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            ensure_dir(self.manifests)
            ensure_dir(self.blobs.directory)
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _why(skipped: str | None) -> str:
    return {"too_big": "too big to keep", "hard_link": "a hard-linked file is not read",
            "unreadable": "it could not be read"}.get(skipped or "", "not kept")


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError("E_ENCODING", f"{path} is not UTF-8 text; no text diff for it",
                        details={"path": path}) from None
