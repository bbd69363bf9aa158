"""What one checkpoint records, and its JSON form on disk.

A checkpoint is one small JSON file (``manifests/<seq>-<ref>.json``, its
form in pneuma.checkpoints.manifest): when and why it was taken, the watch
patterns it was taken with, and the workspace's watched files as
``{path: FileEntry}``. ``after`` is the same map taken when
the turn ended (``Checkpoints.turn_ended``; for an undo point, right after
the restore it precedes): it separates what a turn changed from what
changed between turns, by hand or otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

FORMAT_VERSION = 2
Kind = Literal["turn", "undo"]
# Why a file's content is not kept.
SkipReason = Literal["too_big", "hard_link", "unreadable"]


@dataclass(frozen=True)
class FileEntry:
    """One file as recorded: its content's SHA-256 (None when not kept,
    then ``skipped`` says why), size, permission bits, and the stat fields
    that let the next recording reuse the hash without reading the file."""

    hash: str | None
    size: int
    mode: int
    mtime_ns: int = 0
    ino: int = 0
    skipped: SkipReason | None = None

    def same_content(self, other: "FileEntry") -> bool:
        """Whether the two entries stand for the same file content and mode;
        a file not kept is never known to be the same as anything."""
        if self.hash is None or other.hash is None:
            return False
        return self.hash == other.hash and self.mode == other.mode

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"hash": self.hash, "size": self.size, "mode": self.mode,
                                "mtimeNs": self.mtime_ns, "ino": self.ino}
        if self.skipped is not None:
            data["skipped"] = self.skipped
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "FileEntry":
        return cls(hash=data.get("hash"), size=int(data["size"]), mode=int(data["mode"]),
                   mtime_ns=int(data.get("mtimeNs", 0)), ino=int(data.get("ino", 0)),
                   skipped=data.get("skipped"))


FileMap = dict[str, FileEntry]


class Checkpoint:
    """One checkpoint. ``seq`` orders all checkpoints and is never reused;
    ``ref`` is what a person types: the turn number, or ``u<k>`` for the
    undo point a restore leaves.

    ``files`` and ``after`` are whole maps, built on first use: a checkpoint
    read from the store is usually stored as a delta (pneuma.checkpoints.
    manifest), and most readers need only its header or what it changed."""

    def __init__(self, seq: int, kind: Kind, number: int, timestamp_ms: int, message: str,
                 watch: list[str], ignore: list[str], files: FileMap | None = None,
                 after: FileMap | None = None, after_timestamp_ms: int | None = None,
                 restored_to: str | None = None, conversation: str | None = None, *,
                 file_count: int | None = None, ended: bool | None = None,
                 loader: Callable[["Checkpoint"], tuple[FileMap, FileMap | None]] | None = None,
                 ) -> None:
        self.seq = seq
        self.kind = kind
        self.number = number  # the turn number, or k of u<k>
        self.timestamp_ms = timestamp_ms
        self.message = message
        self.watch = watch
        self.ignore = ignore
        self.after_timestamp_ms = after_timestamp_ms
        self.restored_to = restored_to  # for an undo point: the ref the restore went to
        self.conversation = conversation  # the conversation the turn belongs to, when given
        self._files = files
        self._after = after
        self._ended = after is not None if ended is None else ended
        self._count = file_count
        self._loader = loader

    def _load(self) -> None:
        if self._loader is None:
            raise ValueError(f"checkpoint {self.ref}: its files were never given")
        files, after = self._loader(self)
        self._files = files
        if self._ended and self._after is None:
            self._after = after
        self._loader = None

    @property
    def files(self) -> FileMap:
        if self._files is None:
            self._load()
        assert self._files is not None
        return self._files

    @files.setter
    def files(self, value: FileMap) -> None:
        self._files = value

    @property
    def after(self) -> FileMap | None:
        """The files as the turn left them; None while it has not ended."""
        if self._ended and self._after is None:
            self._load()
        return self._after

    @after.setter
    def after(self, value: FileMap | None) -> None:
        self._after = value
        self._ended = value is not None

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def file_count(self) -> int:
        """How many files it holds, without building its map."""
        if self._files is not None or self._count is None:
            return len(self.files)
        return self._count

    @property
    def ref(self) -> str:
        return str(self.number) if self.kind == "turn" else f"u{self.number}"

    def hashes(self) -> set[str]:
        found = {e.hash for e in self.files.values() if e.hash}
        if self.after:
            found.update(e.hash for e in self.after.values() if e.hash)
        return found
