"""Reverting one change of a turn, keeping the rest (docs/checkpoints.md,
"Reverting one change").

A change (pneuma.host.turn_changes.Change) names the files it lives in;
its revert writes each of them with the content the mode's describer
computes (``revert_contents``: a slide's move undone in ``manifest.json``
while the same turn's retitle stays), or, for a mode that cannot split a
file, the file as it was before the turn.

The rewind's rules hold (pneuma.checkpoints.restore): a file of the change
that differs now from what the turn left because it was edited by hand
since or changed by a later turn is a conflict and is written only when
the caller names it in ``overwrite``; with a conflict left, nothing is
written. (Another revert or a rewind since is not a conflict: those are the
person's own doing through Pneuma, and their undo points keep every state.) Before
writing, an undo point (``u<k>``) records the workspace as it is, and the
revert is listed in the chat with an Undo, as a rewind is, and told to the
agent with its next message.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pneuma.checkpoints import restore_journal
from pneuma.checkpoints.batch_write import FileToWrite, write_files
from pneuma.checkpoints.compare import differs
from pneuma.checkpoints.described_turns import DescribedTurns
from pneuma.checkpoints.model import FileEntry, FileMap
from pneuma.checkpoints.restore import _remove_empty_parents, restored_mode
from pneuma.checkpoints.store import Checkpoints, _now_ms
from pneuma.checkpoints.turn_files import StoreTurnFiles
from pneuma.core.errors import ToolError
from pneuma.host.turn_changes import Change, find_change, revert_contents

log = logging.getLogger(__name__)
# Why a file of the change is a conflict.
EDITED_BY_HAND = "edited_by_hand"
CHANGED_BY_A_LATER_TURN = "changed_by_a_later_turn"


@dataclass
class RevertResult:
    ref: str
    change: Change
    reverted: list[str] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)
    undo: str | None = None
    failed: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "change": self.change.to_json(), "reverted": self.reverted,
                "conflicts": self.conflicts, "undoRef": self.undo, "failed": self.failed}

    def chat_notice(self, origin: str) -> dict[str, Any]:
        """The chat's ``workspace_restored`` note, as a rewind's (its Undo
        restores ``undo``), with the change it reverted."""
        return {"target": self.ref, "undo": self.undo, "restored": self.reverted,
                "kept_conflicts": [], "failed": self.failed, "origin": origin,
                "timestamp": time.time(),
                "reverted_change": {"id": self.change.id, "where": _plain(self.change.where),
                                    "what": _plain(self.change.what)}}

    def agent_note(self) -> str:
        if not self.reverted:
            return ""
        return (f"The user reverted one change of turn {self.ref} "
                f"({_plain(self.change.where)}: {_plain(self.change.what)}); these files "
                "changed on disk and should be read again before editing: "
                + ", ".join(self.reverted) + ".")


def revert_change(store: Checkpoints, turns: DescribedTurns, ref: str | int, change_id: str,
                  *, overwrite: Iterable[str] = (), origin: str = "terminal") -> RevertResult:
    """Revert change ``change_id`` of turn ``ref`` (module docstring).
    ``E_NOT_FOUND`` for an unknown turn or change, ``E_CONFLICT`` for a
    change that cannot be reverted on its own or conflicts left (listed in
    the error's ``details.conflicts``), ``E_BAD_ARGS`` for an ``overwrite``
    path that is not a conflict."""
    canonical, turn = turns.describe(ref)
    change = find_change(turn, change_id)
    if change is None:
        raise ToolError("E_NOT_FOUND", f"turn {canonical} has no change {change_id!r}",
                        details={"ref": canonical, "change": change_id},
                        hint=f"`pneuma checkpoints show {canonical}` lists its changes.")
    if not change.revertible:
        raise ToolError("E_CONFLICT", f"{_plain(change.where)}: {_plain(change.what)} cannot be "
                        "reverted on its own", details={"reason": "not_revertible",
                                                       "change": change_id},
                        hint="Rewind the whole turn instead.")
    files = StoreTurnFiles(store, canonical)
    result = RevertResult(ref=canonical, change=change)
    allowed = set(overwrite)
    restore_journal.wait_until_durable()
    with store._locked():
        # The workspace now, its changed files read and stored: the
        # conflicts' "now" and the undo point's contents.
        now = store._scan_stored(store.newest_files())
        _refuse_what_cannot_be_kept(change, files.before_map, now)
        result.conflicts = _conflicts(store, canonical, change, files.after_map, now)
        unknown = allowed - {c["path"] for c in result.conflicts}
        if unknown:
            raise ToolError("E_BAD_ARGS", "not a conflict of this revert: "
                            + ", ".join(sorted(unknown)), details={"paths": sorted(unknown)})
        left = [c for c in result.conflicts if c["path"] not in allowed]
        if left:
            raise ToolError("E_CONFLICT", f"{len(left)} file(s) changed since the turn and "
                            "would be overwritten: " + ", ".join(c["path"] for c in left),
                            details={"reason": "conflicts", "conflicts": left},
                            hint="Name each one to overwrite it (--force on the command line).")
        current = {path: _stored(store, now, path) for path in change.files}
        try:
            wanted = revert_contents(turn, files, change, current)
        except ValueError as exc:
            raise ToolError("E_CONFLICT", str(exc), details={"reason": "not_revertible",
                                                             "change": change_id}) from None
        except Exception as exc:  # a mode's bug, or a file it can no longer read
            log.warning("the %s mode could not revert %s", turns.mode, change_id, exc_info=True)
            raise ToolError("E_CONFLICT", f"the {turns.mode} mode could not revert this change "
                            f"as the files are now: {exc}",
                            details={"reason": "mode_revert_failed", "change": change_id},
                            hint="Rewind the whole turn instead.") from None
        finally:
            files.forget_contents()
        writes = {p: c for p, c in wanted.items() if c != current.get(p)}
        if not writes:
            return result
        undo = _undo_point(store, canonical, change, now)
        result.undo = undo.ref
        written = _apply(store, writes, files.before_map, now, result)
        undo.after = _left(store, now, writes, written, set(result.reverted))
        undo.after_timestamp_ms = _now_ms()
        store._write(undo)
        store._leave_agent_note(result.agent_note())
        store._leave_chat_notice(result.chat_notice(origin))
    return result


def _refuse_what_cannot_be_kept(change: Change, before: FileMap, now: FileMap) -> None:
    """A file whose content before the turn was not kept cannot be put back
    (it would be deleted), and one the undo point cannot keep now would be
    lost: either refuses the revert."""
    for path in change.files:
        for entry, why in ((before.get(path), "its content before the turn was not kept"),
                           (now.get(path), "the undo point cannot keep it as it is now")):
            if entry is not None and entry.hash is None:
                raise ToolError("E_CONFLICT", f"{path} cannot be reverted: {why} "
                                f"({entry.skipped or 'not kept'})",
                                details={"reason": "not_kept", "path": path,
                                         "skipped": entry.skipped})


def _conflicts(store: Checkpoints, ref: str, change: Change, after: FileMap,
               now: FileMap) -> list[dict[str, str]]:
    """The files of the change that differ now from what the turn left
    because someone edited them by hand or a later turn changed them. What
    Pneuma's own reverts and rewinds did since is not a conflict: reverting
    a turn's changes one after another must not ask each time (their undo
    points keep every state)."""
    changed = [path for path in change.files if differs(after, now, path)]
    if not changed:
        return []
    by_hand = store.changed_between_turns(ref, now)
    names, index = store._find(ref)
    by_turns: set[str] = set()
    for name in names[index + 1:]:
        later = name.split("-", 1)[1].removesuffix(".json")
        if not later.startswith("u"):
            by_turns |= store.changes_of(later).paths()
    return [{"path": path,
             "reason": EDITED_BY_HAND if path in by_hand else CHANGED_BY_A_LATER_TURN}
            for path in changed if path in by_hand or path in by_turns]


def _stored(store: Checkpoints, now: FileMap, path: str) -> bytes | None:
    """A file's content as the scan just stored it (the undo point's)."""
    entry = now.get(path)
    if entry is None or entry.hash is None:
        return None
    return store.read_blob(entry.hash, path)


def _undo_point(store: Checkpoints, ref: str, change: Change, now: FileMap) -> Any:
    names = store._names()
    undos = [int(n.split("-", 1)[1][1:-5]) for n in names if "-u" in n]
    message = f"before reverting {_plain(change.where)}: {_plain(change.what)} of turn {ref}"
    return store._take("undo", max(undos, default=0) + 1, message, names, restored_to=ref,
                       files=now)


def _apply(store: Checkpoints, writes: Mapping[str, bytes | None], before: FileMap,
           now: FileMap, result: RevertResult) -> dict[str, os.stat_result]:
    """Write (atomically, synced) and delete what the revert changes; the
    stored contents of what it replaces are synced first."""
    replaced = [now[p].hash for p in writes if p in now and now[p].hash]
    restore_journal.sync_blobs(store, [h for h in replaced if h is not None])
    for path in sorted(p for p, c in writes.items() if c is None):
        try:
            store.sandbox.unlink(path)
        except FileNotFoundError:
            pass
        except (ToolError, OSError) as exc:
            result.failed.append({"path": path, "error": _why(exc)})
            continue
        else:
            _remove_empty_parents(store, path)
        result.reverted.append(path)
    to_write = []
    for path, content in sorted(writes.items()):
        if content is None:
            continue
        recorded = now.get(path) or before.get(path)
        mode = restored_mode(recorded.mode if recorded is not None else 0o644)
        to_write.append(FileToWrite(path, mode, _constant(content)))
    written, failed = write_files(store.sandbox, to_write, durable=True)
    for item in to_write:
        if item.path in written:
            result.reverted.append(item.path)
        else:
            result.failed.append({"path": item.path, "error": _why(failed[item.path])})
    result.reverted.sort()
    return written


def _left(store: Checkpoints, now: FileMap, writes: Mapping[str, bytes | None],
          written: dict[str, os.stat_result], reverted: set[str]) -> FileMap:
    """The files as the revert left them: where the next hand edit (or the
    undo's conflicts) is measured from. What it wrote is stored, so the
    undo point's end names kept contents."""
    left = dict(now)
    for path, content in writes.items():
        if content is None:
            if path in reverted:
                left.pop(path, None)
        elif path in written:
            info = written[path]
            digest = store.blobs.put(content)
            # No mtime: written just now, the next recording reads it again.
            left[path] = FileEntry(digest, info.st_size, info.st_mode & 0o7777, 0, info.st_ino)
    return left


def _constant(content: bytes) -> Any:
    return lambda: content


def _why(exc: BaseException) -> str:
    return exc.message if isinstance(exc, ToolError) else \
        (getattr(exc, "strerror", None) or str(exc))


def _plain(label: Any) -> str:
    """A label in English (what the agent and the terminal read)."""
    if isinstance(label, str):
        return label
    return str(label.get("en") or next(iter(label.values()), ""))
