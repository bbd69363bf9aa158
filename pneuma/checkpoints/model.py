"""What one checkpoint records, and its JSON form on disk.

A checkpoint is one small JSON file (``manifests/<seq>.json``): when and why
it was taken, the watch patterns it was taken with, and the workspace's
watched files as ``{path: FileEntry}``. ``after`` is the same map taken when
the turn ended (``Checkpoints.turn_ended``; for an undo point, right after
the restore it precedes): it separates what a turn changed from what
changed between turns, by hand or otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

FORMAT_VERSION = 1
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


@dataclass
class Checkpoint:
    """One checkpoint. ``seq`` orders all checkpoints and is never reused;
    ``ref`` is what a person types: the turn number, or ``u<k>`` for the
    undo point a restore leaves."""

    seq: int
    kind: Kind
    number: int  # the turn number, or k of u<k>
    timestamp_ms: int
    message: str
    watch: list[str]
    ignore: list[str]
    files: FileMap
    after: FileMap | None = None
    after_timestamp_ms: int | None = None
    restored_to: str | None = None  # for an undo point: the ref the restore went to
    conversation: str | None = None  # the conversation the turn belongs to, when given

    @property
    def ref(self) -> str:
        return str(self.number) if self.kind == "turn" else f"u{self.number}"

    def hashes(self) -> set[str]:
        found = {e.hash for e in self.files.values() if e.hash}
        if self.after:
            found.update(e.hash for e in self.after.values() if e.hash)
        return found

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "version": FORMAT_VERSION, "seq": self.seq, "kind": self.kind,
            "number": self.number, "ref": self.ref, "timestamp": self.timestamp_ms,
            "message": self.message, "watch": self.watch, "ignore": self.ignore,
            "files": {p: e.to_json() for p, e in sorted(self.files.items())},
        }
        if self.after is not None:
            data["after"] = {p: e.to_json() for p, e in sorted(self.after.items())}
            data["afterTimestamp"] = self.after_timestamp_ms
        if self.restored_to is not None:
            data["restoredTo"] = self.restored_to
        if self.conversation is not None:
            data["conversation"] = self.conversation
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Checkpoint":
        after = data.get("after")
        return cls(
            seq=int(data["seq"]), kind=data["kind"], number=int(data["number"]),
            timestamp_ms=int(data["timestamp"]), message=str(data.get("message", "")),
            watch=list(data.get("watch") or []), ignore=list(data.get("ignore") or []),
            files={p: FileEntry.from_json(e) for p, e in data["files"].items()},
            after=None if after is None else {p: FileEntry.from_json(e)
                                              for p, e in after.items()},
            after_timestamp_ms=data.get("afterTimestamp"),
            restored_to=data.get("restoredTo"), conversation=data.get("conversation"),
        )
