"""One checkpoint's file on disk, ``manifests/<seq>-<ref>.json``, and the
deltas that keep it small (docs/checkpoints.md, "The format").

Version 2 stores a checkpoint's files as a delta against the state the
previous checkpoint left (``"changed"``: ``{path: [before, after]}``, either
side ``null`` for a file that is not there, and ``"base"``: that
checkpoint's ``seq``), and every ``DELTAS_PER_WHOLE`` checkpoints, and for
the oldest one kept, whole as well (``"files"``: the map ``{path: entry}``,
as version 1 always did; the oldest has no delta, nothing is before it). The turn's end (``"afterChanged"``) is always a delta
against the checkpoint's own files. Both sides of a change are kept, so what
a turn changed is read from its own file alone, and a map is rebuilt from
the nearest whole one by at most ``DELTAS_PER_WHOLE`` deltas. A version 1
file is a whole map with an optional whole ``"after"``: it is read as is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pneuma.checkpoints.compare import Changes, differs
from pneuma.checkpoints.model import FORMAT_VERSION, Checkpoint, FileEntry, FileMap

# A whole map after this many deltas in a row: rebuilding any checkpoint's
# files reads at most this many small files and one whole one.
DELTAS_PER_WHOLE = 32
Delta = dict[str, tuple[FileEntry | None, FileEntry | None]]


@dataclass
class Stored:
    """A manifest as read: the checkpoint's header and its files, whole or
    as a delta, and its end as a delta (or, version 1, whole)."""

    header: dict[str, Any]
    whole: FileMap | None = None
    changed: Delta | None = None
    base: int | None = None
    after_whole: FileMap | None = None
    after_changed: Delta | None = None
    count: int = 0
    after_count: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def seq(self) -> int:
        return int(self.header["seq"])

    @property
    def ended(self) -> bool:
        return self.after_whole is not None or self.after_changed is not None

    def end_state(self, files: FileMap) -> FileMap:
        """The map the turn left, given this checkpoint's ``files``."""
        if self.after_whole is not None:
            return self.after_whole
        if self.after_changed is not None:
            return apply(files, self.after_changed)
        return files

    def end_changes(self, files: FileMap | None) -> Changes:
        """What the turn changed, from its end's delta (``files`` is needed
        only for a version 1 manifest)."""
        if self.after_changed is not None:
            return changes_in(self.after_changed)
        assert self.after_whole is not None and files is not None
        return changes_in(delta(files, self.after_whole))

    def hashes(self) -> set[str]:
        """Every content this manifest brings in: its whole maps and the
        new side of its deltas."""
        found: set[str] = set()
        for files in (self.whole, self.after_whole):
            if files:
                found.update(e.hash for e in files.values() if e.hash)
        for change in (self.changed, self.after_changed):
            if change:
                found.update(new.hash for _, new in change.values() if new and new.hash)
        return found


def delta(old: FileMap, new: FileMap) -> Delta:
    """Every path whose entry is not the same in ``new`` as in ``old``."""
    found: Delta = {}
    for path, entry in new.items():
        before = old.get(path)
        if before != entry:
            found[path] = (before, entry)
    for path in old.keys() - new.keys():
        found[path] = (old[path], None)
    return found


def apply(files: FileMap, change: Delta) -> FileMap:
    result = dict(files)
    for path, (_, new) in change.items():
        if new is None:
            result.pop(path, None)
        else:
            result[path] = new
    return result


def changes_in(change: Delta) -> Changes:
    """``compare.changes`` of the two maps a delta separates, from the delta
    alone (a path outside it is the same on both sides)."""
    result = Changes()
    for path in sorted(change):
        old, new = change[path]
        if old is None and new is not None:
            result.added.append(path)
        elif new is None and old is not None:
            result.removed.append(path)
        elif old is not None and new is not None and differs({path: old}, {path: new}, path):
            result.modified.append(path)
    return result


def header_of(checkpoint: Checkpoint) -> dict[str, Any]:
    data: dict[str, Any] = {
        "version": FORMAT_VERSION, "seq": checkpoint.seq, "kind": checkpoint.kind,
        "number": checkpoint.number, "ref": checkpoint.ref, "timestamp": checkpoint.timestamp_ms,
        "message": checkpoint.message, "watch": checkpoint.watch, "ignore": checkpoint.ignore,
    }
    if checkpoint.restored_to is not None:
        data["restoredTo"] = checkpoint.restored_to
    if checkpoint.conversation is not None:
        data["conversation"] = checkpoint.conversation
    return data


def encode(stored: Stored) -> bytes:
    data = dict(stored.header)
    data["version"] = FORMAT_VERSION
    data["count"] = stored.count
    if stored.whole is not None:
        data["files"] = {p: e.to_json() for p, e in sorted(stored.whole.items())}
    if stored.changed is not None:
        data["base"] = stored.base
        data["changed"] = _delta_json(stored.changed)
    if stored.after_changed is not None:
        data["afterChanged"] = _delta_json(stored.after_changed)
        data["afterCount"] = stored.after_count
    elif stored.after_whole is not None:
        data["after"] = {p: e.to_json() for p, e in sorted(stored.after_whole.items())}
    data.update(stored.extra)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def decode(raw: bytes) -> Stored:
    data = json.loads(raw)
    header = {k: data[k] for k in ("version", "seq", "kind", "number", "ref", "timestamp",
                                   "message", "watch", "ignore", "restoredTo", "conversation",
                                   "afterTimestamp") if k in data}
    int(header["seq"]), int(header["number"]), int(header["timestamp"])  # noqa: B018 (checked)
    if header["kind"] not in ("turn", "undo"):
        raise ValueError(f"unknown kind {header['kind']!r}")
    stored = Stored(header=header)
    if data.get("changed") is not None:
        stored.changed = _delta_from_json(data["changed"])
        stored.base = int(data["base"])
        stored.count = int(data.get("count", 0))
    if "files" in data or stored.changed is None:
        stored.whole = _map_json(data["files"])
        stored.count = len(stored.whole)
    if data.get("afterChanged") is not None:
        stored.after_changed = _delta_from_json(data["afterChanged"])
        stored.after_count = data.get("afterCount")
    elif data.get("after") is not None:
        stored.after_whole = _map_json(data["after"])
        stored.after_count = len(stored.after_whole)
    return stored


def checkpoint_of(stored: Stored) -> Checkpoint:
    """The header as a ``Checkpoint`` whose maps are not loaded yet (the
    store gives it a loader)."""
    h = stored.header
    return Checkpoint(seq=int(h["seq"]), kind=h["kind"], number=int(h["number"]),
                      timestamp_ms=int(h["timestamp"]), message=str(h.get("message", "")),
                      watch=list(h.get("watch") or []), ignore=list(h.get("ignore") or []),
                      files=stored.whole, after=stored.after_whole,
                      after_timestamp_ms=h.get("afterTimestamp"),
                      restored_to=h.get("restoredTo"), conversation=h.get("conversation"),
                      file_count=stored.count, ended=stored.ended)


def _map_json(data: dict[str, Any]) -> FileMap:
    return {p: FileEntry.from_json(e) for p, e in data.items()}


def _delta_json(change: Delta) -> dict[str, list[Any]]:
    return {p: [None if old is None else old.to_json(), None if new is None else new.to_json()]
            for p, (old, new) in sorted(change.items())}


def _delta_from_json(data: dict[str, Any]) -> Delta:
    return {p: (None if old is None else FileEntry.from_json(old),
                None if new is None else FileEntry.from_json(new))
            for p, (old, new) in data.items()}
