"""Putting the watched files back as they were at a checkpoint.

The plan compares the checkpoint with the workspace now: files to write
(changed since), to create (deleted since) and to delete (added since).
A planned file is a *conflict* when it changed outside the agent's turns
after the checkpoint: between a turn's end (``Checkpoints.turn_ended``) and
the next checkpoint, or since the newest turn ended. Such a change is
someone's hand edit (or another program's), so it is never overwritten
unless the caller names the file in ``overwrite_conflicts``; with
``keep_conflicts`` the rest is restored and those files stay as they are.
Changes within a turn whose end was not recorded count as the turn's.

Before writing anything the restore records an undo point (``u<k>``) of the
workspace as it is, so the restore itself can be restored away.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from pneuma.checkpoints import restore_journal
from pneuma.checkpoints.baseline import CHANGED_FIRST, WHY_CHANGED_FIRST
from pneuma.checkpoints.batch_write import FileToWrite, write_files
from pneuma.checkpoints.compare import differs
from pneuma.checkpoints.model import Checkpoint, FileEntry, FileMap
from pneuma.checkpoints.settle import settle_written
from pneuma.checkpoints.store import Checkpoints, _now_ms, _why
from pneuma.core.errors import ToolError
from pneuma.core.file_filter import FileFilter

Action = Literal["create", "write", "delete"]
# Why a file as it is now stays through a rewind (the undo could not bring it back).
_UNDO_CANNOT_KEEP = {
    "too_big": "too big for the undo point to keep, so the rewind leaves it",
    "hard_link": "a hard-linked file is not replaced",
    "unreadable": "it could not be read for the undo point, so the rewind leaves it",
    "": "the undo point could not keep it, so the rewind leaves it",
}
# Only read, write and execute bits are restored: a checkpoint's manifest is a
# file in the workspace, and a crafted one must not make a restore (perhaps run
# as root) create a setuid, setgid or sticky file.
ORDINARY_BITS = 0o777
log = logging.getLogger(__name__)


@dataclass
class Step:
    path: str
    action: Action
    conflict: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "action": self.action, "conflict": self.conflict}


@dataclass
class RestorePlan:
    target: str  # the ref restored to
    steps: list[Step] = field(default_factory=list)
    # Files the restore cannot bring back, and why (too big to keep, ...).
    left_as_is: list[dict[str, str]] = field(default_factory=list)

    def paths(self, action: Action) -> list[str]:
        return [s.path for s in self.steps if s.action == action]

    @property
    def conflicts(self) -> list[str]:
        return [s.path for s in self.steps if s.conflict]

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "create": self.paths("create"),
                "write": self.paths("write"), "delete": self.paths("delete"),
                "conflicts": self.conflicts, "leftAsIs": self.left_as_is}


@dataclass
class RestoreResult:
    plan: RestorePlan
    dry_run: bool
    undo: str | None = None  # the undo point recorded before writing
    restored: list[str] = field(default_factory=list)
    kept_conflicts: list[str] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {**self.plan.to_json(), "dryRun": self.dry_run, "undo": self.undo,
                "restored": self.restored, "keptConflicts": self.kept_conflicts,
                "failed": self.failed}

    def chat_notice(self, origin: str) -> dict[str, Any]:
        """The chat's ``workspace_restored`` note of this restore; ``origin``
        is "chat" or "terminal"."""
        return {"target": self.plan.target, "undo": self.undo, "restored": self.restored,
                "kept_conflicts": self.kept_conflicts, "failed": self.failed,
                "origin": origin, "timestamp": time.time()}

    def agent_note(self) -> str:
        """What to tell the agent in its next message, so the conversation
        matches the files again."""
        if not self.restored:
            return ""
        return (f"The user restored the workspace to before turn {self.plan.target}; these "
                f"files changed on disk and should be read again before editing: "
                + ", ".join(self.restored) + ".")


def plan_restore(store: Checkpoints, ref: str | int) -> RestorePlan:
    return _plan_against(store, ref, store.current())


def _plan_against(store: Checkpoints, ref: str | int, current: FileMap) -> RestorePlan:
    """The plan from the checkpoints' maps and ``current``, the workspace
    now: no file is read for it."""
    target = store.get(ref)
    # Only what the checkpoint itself watched: a file the mode watches only
    # since (a switch of mode, a new pattern) was not "added after" it and
    # must not be deleted.
    now = current
    if (target.watch or ["**/*"], target.ignore) != (store.watch, store.ignore):
        watched_then = FileFilter(target.watch or ["**/*"], target.ignore)
        now = {path: entry for path, entry in current.items() if watched_then(path)}
    # Changed between turns: read from the deltas of the checkpoints since.
    return _plan(target, store.changed_between_turns(target.ref, now), now)


def _plan(target: Checkpoint, by_hand: set[str], now: FileMap) -> RestorePlan:
    plan = RestorePlan(target=target.ref)
    wanted = target.files
    for path in sorted(wanted.keys() | now.keys()):
        want, have = wanted.get(path), now.get(path)
        if not differs(wanted, now, path):
            continue
        if want is not None and want.hash is None:
            plan.left_as_is.append({"path": path, "reason": want.skipped or "not_kept",
                                    "why": _not_kept_why(want.skipped)})
            continue
        if have is not None and have.hash is None:
            # The undo point cannot keep this file as it is now (too big, a
            # hard link, unreadable): replacing or deleting it would lose it
            # for good, so the rewind leaves it and the preview says so.
            reason = have.skipped or "not_kept"
            plan.left_as_is.append({"path": path, "reason": reason,
                                    "why": _UNDO_CANNOT_KEEP.get(reason, _UNDO_CANNOT_KEEP[""])})
            continue
        action: Action = "delete" if want is None else "create" if have is None else "write"
        plan.steps.append(Step(path, action, conflict=path in by_hand))
    return plan


def _not_kept_why(skipped: str | None) -> str:
    return WHY_CHANGED_FIRST if skipped == CHANGED_FIRST else _why(skipped)


def restore(store: Checkpoints, ref: str | int, *, dry_run: bool = False,
            overwrite_conflicts: Iterable[str] = (), keep_conflicts: bool = False,
            origin: str = "terminal") -> RestoreResult:
    """Restore the watched files to checkpoint ``ref`` (see the module's
    docstring). ``E_CONFLICT`` when a conflict is neither in
    ``overwrite_conflicts`` nor ``keep_conflicts`` allows leaving it.
    ``origin`` ("chat" or "terminal") is for the note the chat lists."""
    overwrite = set(overwrite_conflicts)
    if not dry_run:
        # The rewind before this one is on disk first: a journal at a time.
        restore_journal.wait_until_durable()
    with store._locked():
        # The workspace now, its changed files read once and stored: the
        # plan's "now" and, unless the restore is refused, its undo point.
        now = store.current() if dry_run else store._scan_stored(store.newest_files())
        plan = _plan_against(store, ref, now)
        result = RestoreResult(plan=plan, dry_run=dry_run)
        unknown = overwrite - set(plan.conflicts)
        if unknown:
            raise ToolError("E_BAD_ARGS", "not a conflict of this restore: "
                            + ", ".join(sorted(unknown)), details={"paths": sorted(unknown)})
        unresolved = [p for p in plan.conflicts if p not in overwrite]
        if dry_run:
            return result
        if unresolved and not keep_conflicts:
            raise ToolError(
                "E_CONFLICT", f"{len(unresolved)} file(s) changed by hand after the turn and "
                "would be overwritten: " + ", ".join(unresolved),
                details={"conflicts": unresolved, "plan": plan.to_json()},
                hint="Name each one to overwrite it (--overwrite PATH), or keep them as they "
                     "are and restore the rest (--keep-conflicts).")
        names = store._names()
        undos = [int(n.split("-", 1)[1][1:-5]) for n in names if "-u" in n]
        message = f"before restoring to {_label(plan.target)}"
        undo = store._take("undo", max(undos, default=0) + 1, message, names,
                           restored_to=plan.target, files=now)
        result.undo = undo.ref
        target = store.get(plan.target)
        chosen = []
        for step in plan.steps:
            if step.conflict and step.path not in overwrite:
                result.kept_conflicts.append(step.path)
            else:
                chosen.append(step)
        # The person's text as stored (the undo point's contents of what is
        # replaced) is synced while the temp files are written; the journal
        # follows, then the deletions and the renames (restore_journal).
        replaced = [now[s.path].hash for s in chosen if s.path in now]
        syncing = threading.Thread(target=restore_journal.sync_blobs,
                                   args=(store, [h for h in replaced if h is not None]))
        syncing.start()
        umask = current_umask()
        entries = [restore_journal.Entry(
            s.path, None if s.action == "delete" else target.files[s.path].hash,
            now[s.path].hash if s.path in now else None,
            0 if s.action == "delete" else restored_mode(target.files[s.path].mode, umask))
            for s in chosen]
        done: list[list[str]] = []  # the files deleted, once the journal is there

        def before_replacing() -> None:
            if not done:
                syncing.join()
                restore_journal.write_journal(store, undo.ref, entries)
                done.append(_delete(store, [s for s in chosen if s.action == "delete"],
                                    result))

        writes = [s for s in chosen if s.action != "delete"]
        written = _write(store, writes, target.files, result, before_replacing)
        before_replacing()  # nothing to write: the deletions still wait for the syncs
        deleted = done[0]
        # A file whose folder was a file the rewind deleted: written now.
        again = [s for s in writes if s.path not in written
                 and any(s.path.startswith(d + "/") for d in deleted)]
        if again:
            result.failed[:] = [f for f in result.failed
                                if f["path"] not in {s.path for s in again}]
            written.update(_write(store, again, target.files, result, None))
        # What the restore left is where the next hand edit is measured
        # from: known without reading anything again.
        undo.after = _left(now, target.files, deleted, written)
        undo.after_timestamp_ms = _now_ms()
        store._write(undo)
        if len(store._names()) > store.policy.max_checkpoints:
            # Past the count, at once; the bytes' bound (which sizes every
            # stored content) waits for the next turn's pruning rather than
            # keep the person waiting for the rewind.
            store._prune()
        # The agent still believes the files are as it left them: its next
        # message says which changed (Session takes the note).
        store._leave_agent_note(result.agent_note())
        # And the chat lists it, whoever made it (Session takes the notices).
        store._leave_chat_notice(result.chat_notice(origin))
        # The syncs of what it wrote run after the answer; the journal goes
        # once they are done (restore_journal).
        # Once a timestamp tick has passed, what it wrote is read once more
        # so that the next walk can trust its stat (pneuma.checkpoints.settle).
        restore_journal.finish_later(store, undo.ref, written, _folders_of(result.restored),
                                     then=partial(_settle, store, undo.ref, list(written)))
        return result


def _settle(store: Checkpoints, undo_ref: str, written: list[str]) -> None:
    try:
        settle_written(store, undo_ref, written)
    except (OSError, ToolError) as exc:
        # Nothing lost: the next walk reads those files itself.
        log.info("the files a rewind wrote are left to the next walk: %s", exc)


def _folders_of(paths: Iterable[str]) -> set[str]:
    """Every folder a change of ``paths`` touched, up to the workspace's root."""
    folders = {""}
    for path in paths:
        parts = path.split("/")[:-1]
        while parts:
            folders.add("/".join(parts))
            parts.pop()
    return folders


def _label(ref: str) -> str:
    return f"undo point {ref}" if ref.startswith("u") else f"turn {ref}"


def _failed(result: RestoreResult, path: str, exc: BaseException) -> None:
    why = exc.message if isinstance(exc, ToolError) else \
        (getattr(exc, "strerror", None) or str(exc))
    result.failed.append({"path": path, "error": why})


def _delete(store: Checkpoints, steps: list[Step], result: RestoreResult) -> list[str]:
    """Deletions come first, deepest first: a file that becomes a folder's
    name (or the reverse) needs the other out of the way."""
    deleted = []
    for step in sorted(steps, key=lambda s: s.path.count("/"), reverse=True):
        try:
            store.sandbox.unlink(step.path)
        except FileNotFoundError:
            pass
        except (ToolError, OSError) as exc:
            _failed(result, step.path, exc)
            continue
        else:
            _remove_empty_parents(store, step.path)
        deleted.append(step.path)
        result.restored.append(step.path)
    return deleted


def _write(store: Checkpoints, steps: list[Step], wanted: FileMap, result: RestoreResult,
           before_renames: Callable[[], None] | None) -> dict[str, os.stat_result]:
    """The files to write back, in one pass of syncs (batch_write)."""
    files = []
    umask = current_umask()
    with store.blob_reader() as read_blob:
        for step in steps:
            entry = wanted[step.path]
            assert entry.hash is not None  # a file not kept is left as is (_plan)
            files.append(FileToWrite(step.path, restored_mode(entry.mode, umask),
                                     partial(read_blob, entry.hash, step.path)))
        written, failed = write_files(store.sandbox, files, durable=False,
                                      before_renames=before_renames)
    for step in steps:
        if step.path in written:
            result.restored.append(step.path)
        else:
            _failed(result, step.path, failed[step.path])
    return written


def _left(now: FileMap, wanted: FileMap, deleted: list[str],
          written: dict[str, os.stat_result]) -> FileMap:
    """The watched files as the restore left them, from what it did."""
    left = dict(now)
    for path in deleted:
        left.pop(path, None)
    for path, info in written.items():
        # No mtime: written just now, the next recording reads it again
        # rather than trust a stat another write could share (scan.RACY_NS).
        left[path] = FileEntry(wanted[path].hash, info.st_size, info.st_mode & 0o7777, 0,
                               info.st_ino)
    return left


def restored_mode(recorded: int, umask: int | None = None) -> int:
    """The permission bits a restore gives a file: the recorded rwx bits,
    never wider than the umask allows (as any new file of the person's)."""
    return recorded & ORDINARY_BITS & ~(current_umask() if umask is None else umask)


def current_umask() -> int:
    """The process's umask, read without changing it where Linux shows it
    (``os.umask`` sets it for every thread while it is read)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def _remove_empty_parents(store: Checkpoints, rel: str) -> None:
    """Folders the restore emptied go too (rmdir removes only empty ones)."""
    parts = rel.split("/")[:-1]
    while parts:
        try:
            with store.sandbox.locate("/".join(parts), write=True,
                                      follow_final=False) as located:
                os.rmdir(located.name, dir_fd=located.dir_fd)
        except (OSError, ToolError):
            return
        parts.pop()
