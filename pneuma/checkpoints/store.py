"""The checkpoint store of one workspace, under ``W/.pneuma/checkpoints/``:

    blobs/<2 hex>/<62 hex>     file contents by SHA-256 (pneuma.checkpoints.blobs)
    manifests/<seq>-<ref>.json one per checkpoint (pneuma.checkpoints.manifest)
    lock                       flock held while the store changes

Manifests are JSON files rather than rows of an SQLite database: there are
at most a few hundred, each written once (and once more at the turn's end)
and atomically, easy to look at when something went wrong; most hold only
what changed since the previous one (pneuma.checkpoints.manifest), so a
turn reads and writes what it changed, and the newest checkpoint's whole map
stays in memory between turns (pneuma.checkpoints.chain). The file name
alone gives the order and the ref. ``pneuma run`` and a ``pneuma
checkpoints`` command may touch the store at once; the ``flock`` keeps them
in turn.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pneuma.checkpoints import prune as pruning
from pneuma.checkpoints import restore_journal
from pneuma.checkpoints.blobs import BlobStore
from pneuma.checkpoints.chain import MANIFEST_NAME, ManifestChain
from pneuma.checkpoints.compare import Changes, changes, unified_diff
from pneuma.checkpoints.manifest import (
    DELTAS_PER_WHOLE,
    Stored,
    changes_in,
    checkpoint_of,
    delta,
    header_of,
)
from pneuma.checkpoints.model import Checkpoint, FileMap, Kind
from pneuma.checkpoints.policy import StorePolicy
from pneuma.checkpoints.scan import RememberedFilter, scan
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
_MANIFEST_NAME = MANIFEST_NAME
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
        self.blobs = BlobStore(self.directory / "blobs", self.policy.max_file_bytes)
        self._chain = ManifestChain(self.manifests)
        self._remembered_filter: RememberedFilter | None = None

    @property
    def manifests_read(self) -> int:
        """How many manifest files this store object has parsed so far."""
        return self._chain.parsed

    @classmethod
    def open_existing(cls, workspace: Path, policy: StorePolicy | None = None) -> "Checkpoints":
        if not Path(workspace).is_dir():
            raise ToolError("E_NOT_FOUND", f"{workspace} is not a folder",
                            details={"workspace": str(workspace)})
        store = cls(workspace, policy=policy)
        newest = store._names()[-1:]
        if newest:
            latest = store._chain.read(newest[0]).header
            store.watch = list(latest.get("watch") or []) or ["**/*"]
            store.ignore = list(latest.get("ignore") or [])
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
            newest = self._chain.newest_of(names)
            if newest is None or newest.stored.header["kind"] != "turn":
                return None
            checkpoint = self._checkpoint(newest.stored, newest.files)
            checkpoint.after = self._scan_stored(newest.state) if files is None else files
            checkpoint.after_timestamp_ms = _now_ms()
            self._write(checkpoint)
            if prune:
                self._prune()
            return checkpoint

    def _take(self, kind: Kind, number: int, message: str, names: list[str],
              restored_to: str | None = None, conversation: str | None = None,
              files: FileMap | None = None) -> Checkpoint:
        newest = self._chain.newest_of(names)
        seq = 1 if newest is None else newest.stored.seq + 1
        if files is None:
            files = self._scan_stored(None if newest is None else newest.state)
        checkpoint = Checkpoint(seq=seq, kind=kind, number=number, timestamp_ms=_now_ms(),
                                message=message, watch=self.watch, ignore=self.ignore,
                                files=files, restored_to=restored_to,
                                conversation=conversation)
        self._write(checkpoint)
        checkpoint._loader = self._materialize
        return checkpoint

    def _watch_test(self) -> RememberedFilter:
        if self._remembered_filter is None or self._remembered_filter.test is not self.watched:
            self._remembered_filter = RememberedFilter(self.watched)
        return self._remembered_filter

    def _scan_stored(self, previous: FileMap | None) -> FileMap:
        try:
            return scan(self.sandbox, self._watch_test(), self.blobs, previous,
                        self.policy.max_file_bytes)
        except OSError as exc:
            raise ToolError("E_IO", f"cannot record the workspace's files: "
                            f"{exc.strerror or exc}") from None

    def current(self) -> FileMap:
        """The watched files as they are now (hashed, not stored)."""
        newest = self._chain.newest_of(self._names())
        previous = None if newest is None else newest.state
        return scan(self.sandbox, self._watch_test(), None, previous,
                    self.policy.max_file_bytes)

    # --- reading ---

    def checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint kept, oldest first (their maps built when used)."""
        return [self._checkpoint(self._chain.read(name)) for name in self._names()]

    def get(self, ref: str | int) -> Checkpoint:
        names, index = self._find(ref)
        return self._checkpoint(self._chain.read(names[index]))

    def _find(self, ref: str | int) -> tuple[list[str], int]:
        ref = str(ref).strip()
        if not _REF.match(ref):
            raise ToolError("E_BAD_ARGS", f"{ref!r} is not a checkpoint: give a turn number "
                            "(3) or an undo point (u1)", details={"ref": ref})
        names = self._names()
        for index in range(len(names) - 1, -1, -1):
            if _MANIFEST_NAME.match(names[index]).group(2) == ref:  # type: ignore[union-attr]
                return names, index
        raise ToolError("E_NOT_FOUND", f"no checkpoint {ref} in {self.workspace}",
                        details={"ref": ref},
                        hint="`pneuma checkpoints list` shows the ones kept.")

    def _checkpoint(self, stored: Stored, files: FileMap | None = None) -> Checkpoint:
        checkpoint = checkpoint_of(stored)
        if files is not None:
            checkpoint.files = files
        checkpoint._loader = self._materialize
        return checkpoint

    def _materialize(self, checkpoint: Checkpoint) -> tuple[FileMap, FileMap | None]:
        """A checkpoint's whole maps, rebuilt from the nearest whole manifest."""
        names, index = self._find(checkpoint.ref)
        files, _ = self._chain.files_of(names, index)
        stored = self._chain.read(names[index])
        return files, stored.end_state(files) if stored.ended else None

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
        """What the turn (or the restore) changed: read from its own manifest
        (or the next one's), whatever the number of checkpoints kept."""
        names, index = self._find(ref)
        return self._changes_at(names, index, [])

    def changed_between_turns(self, ref: str | int, now: FileMap) -> set[str]:
        """Paths changed after a turn ended and before the next checkpoint
        (or ``now``), from checkpoint ``ref`` on: not by the agent's turns
        (a restore's conflicts). Read from the deltas of the checkpoints
        since ``ref``, never from their whole maps."""
        names, index = self._find(ref)
        found: set[str] = set()
        stored = self._chain.read(names[index])
        for at in range(index, len(names)):
            if at + 1 == len(names):
                newest = self._chain.newest_of(names)
                if stored.ended and newest is not None:
                    found |= changes(newest.state, now).paths()
                break
            following = self._chain.read(names[at + 1])
            if not stored.ended:
                pass
            elif following.changed is not None and following.base == stored.seq:
                found |= changes_in(following.changed).paths()
            else:
                files = self._chain.files_of(names, at)[0]
                found |= changes(stored.end_state(files),
                                 self._chain.files_of(names, at + 1)[0]).paths()
            stored = following
        return found

    def history(self) -> list[tuple[Checkpoint, Changes]]:
        """Every checkpoint kept, oldest first, with what its turn changed."""
        names = self._names()
        now: list[FileMap] = []
        return [(self._checkpoint(self._chain.read(name)), self._changes_at(names, index, now))
                for index, name in enumerate(names)]

    def _changes_at(self, names: list[str], index: int, now: list[FileMap]) -> Changes:
        """``now`` holds the workspace as it is once it was scanned (for the
        newest checkpoint of a turn still running)."""
        stored = self._chain.read(names[index])
        if stored.ended:
            return stored.end_changes(stored.whole if stored.after_changed is None else None)
        if index + 1 < len(names):
            following = self._chain.read(names[index + 1])
            if following.changed is not None and following.base == stored.seq:
                return changes_in(following.changed)
            return changes(self._chain.files_of(names, index)[0],
                           self._chain.files_of(names, index + 1)[0])
        if not now:
            now.append(self.current())
        return changes(self._chain.files_of(names, index)[0], now[0])

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
        names, index = self._find(ref)
        checkpoint = self._checkpoint(self._chain.read(names[index]))
        old = self._text_in(checkpoint.files, canonical, checkpoint.ref)
        last = index + 1 == len(names)
        if to == "now" or (not checkpoint.ended and last):
            return unified_diff(canonical, old, self._text_now(canonical))
        after = checkpoint.after if checkpoint.ended else \
            self._chain.files_of(names, index + 1)[0]
        assert after is not None
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
        return _blob_or_error(self.blobs.get, digest, path)

    @contextmanager
    def blob_reader(self) -> Iterator[Callable[[str, str], bytes]]:
        """``read_blob`` for many contents in a row (a rewind's), over one
        walk of the store's folders."""
        try:
            reader = self.blobs.reader()
        except (OSError, ValueError):
            yield self.read_blob  # no store folder: each read says so itself
            return
        with reader:
            yield lambda digest, path: _blob_or_error(reader.get, digest, path)

    # --- for the turn listener and the restore (engineer B; keep these) ---

    def newest_files(self) -> FileMap | None:
        """The newest checkpoint's files as its turn left them (else as it
        began); None without checkpoints. What a new scan compares with."""
        newest = self._chain.newest_of(self._names())
        return None if newest is None else newest.state

    def prune(self) -> None:
        """Apply the size policy (``record(..., prune=False)`` left it)."""
        with self._locked():
            self._prune()

    # --- size policy ---

    def _prune(self) -> None:
        """Drop the oldest checkpoints past ``max_checkpoints``, then while
        blobs and manifests together pass ``max_blob_bytes`` (never the
        newest), and the blobs no one names (pneuma.checkpoints.prune)."""
        pruning.prune(self._chain, self.blobs, self.policy)

    # --- files of the store ---

    def _names(self) -> list[str]:
        return self._chain.names()

    def _write(self, checkpoint: Checkpoint) -> None:
        """Write ``checkpoint``: a new one (as a delta against the newest, or
        whole every ``DELTAS_PER_WHOLE``), or the newest again with its end."""
        name = f"{checkpoint.seq:08d}-{checkpoint.ref}.json"
        newest = self._chain.newest_of(self._names())
        key_before = None if newest is None else newest.key
        header = header_of(checkpoint)
        if newest is not None and newest.name == name:
            old = newest.stored
            stored = Stored(header=header, whole=old.whole, changed=old.changed,
                            base=old.base, count=old.count)
            deltas = newest.deltas_in_a_row
        elif newest is None:
            stored = Stored(header=header, whole=checkpoint.files,
                            count=len(checkpoint.files))
            deltas = 0
        else:
            # A whole map now and then too, so that no map is rebuilt from
            # more than DELTAS_PER_WHOLE deltas.
            deltas = (newest.deltas_in_a_row + 1) % DELTAS_PER_WHOLE
            stored = Stored(header=header, changed=delta(newest.state, checkpoint.files),
                            base=newest.stored.seq, count=len(checkpoint.files),
                            whole=None if deltas else checkpoint.files)
        if checkpoint.after is not None:
            stored.after_changed = delta(checkpoint.files, checkpoint.after)
            stored.after_count = len(checkpoint.after)
            stored.header["afterTimestamp"] = checkpoint.after_timestamp_ms
        added = self._chain.write(name, stored)
        self._chain.became_newest(name, stored, checkpoint.files, deltas, key_before)
        pruning.note_written(self._chain, added + self.blobs.take_written(),
                             checkpoint.seq, stored.hashes())

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
    def _locked(self, replay: bool = True) -> Iterator[None]:
        # Every folder of the store walked without following a link: one
        # planted there would put blobs and manifests outside the workspace.
        fd = open_state_file(self.directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            ensure_dir(self.manifests)
            ensure_dir(self.blobs.directory)
            fcntl.flock(fd, fcntl.LOCK_EX)
            if replay:
                # A rewind a crash interrupted is completed before anything
                # else (engineer G; pneuma.checkpoints.restore_journal).
                restore_journal.replay(self)
            yield
        finally:
            os.close(fd)


def _blob_or_error(get: Callable[[str], bytes], digest: str, path: str) -> bytes:
    try:
        return get(digest)
    except (OSError, ValueError) as exc:
        raise ToolError("E_IO", f"the stored content of {path} is missing or damaged: "
                        f"{getattr(exc, 'strerror', None) or exc}",
                        details={"path": path, "hash": digest}) from None


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
