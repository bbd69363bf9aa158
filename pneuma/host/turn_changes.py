"""A turn's changes in the mode's own terms (issue 28), as plugins describe them
through ``register_change_describers``.

A checkpoint pair (the workspace before a turn and after it) is a list of
changed files to the store. A person thinks in slides, sections, nodes and
scenes: a ``ChangeDescriber`` turns the pair into ``Change`` items that each
say where (``"Slide 3"``) and what happened (``"title changed"``), name the
files they live in, tell the viewer how to show the spot (``locate``), and
can be reverted on their own.

The host reads the contents through ``TurnFiles`` (from the checkpoint
store, never from the live workspace, so a description does not change as
the person edits), picks the describer of the workspace's mode, and falls
back to one change per file (``describe_files``) when the mode has none or
its describer fails (logged, never raised to the person).

Reverting one change: by default every file of the change goes back to its
content before the turn. A describer that can split a file (a slide's move
and its retitle both live in ``manifest.json``) gives ``revert``, which
returns the new content of each file of the change computed from the
before and current contents; the host applies it with the rewind's conflict
rules and an undo point.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import pluggy

log = logging.getLogger(__name__)

FileStatus = Literal["added", "modified", "deleted"]
ChangeKind = Literal["added", "removed", "changed", "moved", "renamed"]
# A string, or one per language: {"en": "Slide 3", "zh-CN": "第 3 页"}.
Label = str | Mapping[str, str]

# A change's id is stable for the same pair of states, short, and safe in a
# URL path segment and on a command line (`pneuma checkpoints revert 4 slide:7:moved`).
CHANGE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:._/@#=+-]{0,199}$")


@dataclass(frozen=True)
class FileChange:
    """One file a turn changed: its workspace-relative POSIX path and how."""

    path: str
    status: FileStatus


class TurnFiles(Protocol):
    """The two states of a turn, read from the checkpoint store.

    ``changed`` lists the files that differ, sorted by path. ``before`` and
    ``after`` read any file of either state (not only the changed ones: a
    describer may need the deck's ``manifest.json`` to number a slide whose
    own file changed): ``None`` when the file is absent from that state or
    its content was not kept (too big, unreadable). ``paths_before`` /
    ``paths_after`` list every file of each state.
    """

    @property
    def changed(self) -> Sequence[FileChange]: ...

    def before(self, path: str) -> bytes | None: ...

    def after(self, path: str) -> bytes | None: ...

    def paths_before(self) -> Sequence[str]: ...

    def paths_after(self) -> Sequence[str]: ...


@dataclass(frozen=True)
class Change:
    """One change a person understands.

    ``id``: stable for the same pair of states, unique within the turn,
    matching ``CHANGE_ID`` (``"slide:07-workflow.html:moved"``). ``where``
    and ``what``: labels shown as "where: what" (``"Slide 3"``, ``"title
    changed"``). ``kind``: added, removed, changed, moved or renamed.
    ``files``: the files the change is in (what a revert writes; by default
    each goes back to its content before the turn). ``locate``: what the
    mode's viewer needs to show the spot (``{"file": …}`` plus the viewer's
    own keys, passed to its ``locate``), or None. ``revertible``: False when
    the change cannot be undone on its own (the describer says why in
    ``what``).
    """

    id: str
    where: Label
    what: Label
    kind: ChangeKind
    files: tuple[str, ...]
    locate: Mapping[str, Any] | None = None
    revertible: bool = True

    def __post_init__(self) -> None:
        if not CHANGE_ID.match(self.id):
            raise ValueError(f"change id {self.id!r} must match {CHANGE_ID.pattern}")
        if not self.files:
            raise ValueError(f"change {self.id!r} names no file")

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "where": _label_json(self.where), "what": _label_json(self.what),
                "kind": self.kind, "files": list(self.files),
                "locate": dict(self.locate) if self.locate is not None else None,
                "revertible": self.revertible}


# revert(files, change, current) -> {path: new content, or None to delete}.
# ``current`` holds the live content of each of ``change.files`` (None when
# absent). Return only files of ``change.files``.
RevertFn = Callable[[TurnFiles, Change, Mapping[str, bytes | None]], Mapping[str, bytes | None]]


@dataclass(frozen=True)
class ChangeDescriber:
    """How one mode describes a turn: ``describe(files) -> [Change, ...]``
    in reading order (slide order, document order), and optionally
    ``revert`` for changes that share a file with others."""

    mode: str
    describe: Callable[[TurnFiles], Sequence[Change]]
    revert: RevertFn | None = None


@dataclass(frozen=True)
class DescribedTurn:
    """What the host answers: the changes, and whether they came from the
    mode (``"mode"``) or the per-file fallback (``"files"``)."""

    changes: list[Change]
    source: Literal["mode", "files"]
    warning: str | None = None
    describer: ChangeDescriber | None = field(default=None, compare=False)
    # The per-file changes the host added for files the describer left out:
    # reverted per file, never through the describer's ``revert``.
    added_by_host: frozenset[str] = field(default=frozenset(), compare=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"changes": [c.to_json() for c in self.changes],
                                "source": self.source}
        if self.warning:
            data["warning"] = self.warning
        return data


_FILE_KIND: dict[FileStatus, ChangeKind] = {
    "added": "added", "deleted": "removed", "modified": "changed"}
_FILE_WHAT: dict[FileStatus, dict[str, str]] = {
    "added": {"en": "added", "zh-CN": "新增"},
    "deleted": {"en": "removed", "zh-CN": "删除"},
    "modified": {"en": "changed", "zh-CN": "修改"},
}


def file_change_id(path: str) -> str:
    """The fallback change id of one file (``file:<path>``); a path the id
    grammar cannot carry is named by its position-independent hash."""
    candidate = f"file:{path}"
    if CHANGE_ID.match(candidate):
        return candidate
    import hashlib

    return "file:#" + hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def describe_files(files: TurnFiles) -> list[Change]:
    """One change per changed file: the fallback every mode gets."""
    return [Change(id=file_change_id(item.path), where=item.path, what=_FILE_WHAT[item.status],
                   kind=_FILE_KIND[item.status], files=(item.path,),
                   locate={"file": item.path} if item.status != "deleted" else None)
            for item in files.changed]


def all_describers(pm: pluggy.PluginManager) -> dict[str, ChangeDescriber]:
    """Every plugin's describers by mode; the first registered wins a mode."""
    found: dict[str, ChangeDescriber] = {}
    for answer in pm.hook.register_change_describers():
        for describer in answer or []:
            if isinstance(describer, ChangeDescriber):
                found.setdefault(describer.mode, describer)
            else:
                log.warning("register_change_describers returned %r, not a ChangeDescriber",
                            describer)
    return found


def describe_turn(describer: ChangeDescriber | None, files: TurnFiles) -> DescribedTurn:
    """The turn's changes in the mode's terms, or per file when the mode has
    no describer or its describer fails (a warning, never an exception).

    A describer's answer is also checked: ids unique, and every changed file
    named by some change (a file the describer did not account for is added
    as a per-file change, so nothing a turn did is hidden).
    """
    if describer is None:
        return DescribedTurn(describe_files(files), "files")
    try:
        changes = list(describer.describe(files))
    except Exception as exc:  # a plugin's bug must not take the review away
        log.warning("the %s mode's change describer failed: %s", describer.mode, exc,
                    exc_info=True)
        return DescribedTurn(describe_files(files), "files",
                             warning=f"the {describer.mode} mode could not describe this turn: {exc}")
    seen: set[str] = set()
    unique: list[Change] = []
    for change in changes:
        if not isinstance(change, Change) or change.id in seen:
            log.warning("the %s mode's change describer returned a duplicate or bad change %r",
                        describer.mode, change)
            continue
        seen.add(change.id)
        unique.append(change)
    covered = {path for change in unique for path in change.files}
    added: set[str] = set()
    for item in files.changed:
        if item.path not in covered:
            fallback = describe_files(_OnlyOne(files, item))[0]
            if fallback.id not in seen:
                unique.append(fallback)
                seen.add(fallback.id)
                added.add(fallback.id)
    return DescribedTurn(unique, "mode", describer=describer, added_by_host=frozenset(added))


def find_change(turn: DescribedTurn, change_id: str) -> Change | None:
    return next((c for c in turn.changes if c.id == change_id), None)


def revert_contents(turn: DescribedTurn, files: TurnFiles, change: Change,
                    current: Mapping[str, bytes | None]) -> dict[str, bytes | None]:
    """The content each file of ``change`` gets when only that change is
    reverted: the describer's ``revert`` when it has one, else each file as
    it was before the turn. Raises ValueError for a change that cannot be
    reverted on its own."""
    if not change.revertible:
        raise ValueError(f"change {change.id} cannot be reverted on its own")
    describer = turn.describer
    if describer is not None and describer.revert is not None and turn.source == "mode" \
            and change.id not in turn.added_by_host:
        answer = dict(describer.revert(files, change, current))
        stray = set(answer) - set(change.files)
        if stray:
            raise ValueError(f"the {describer.mode} mode's revert wrote files outside the change: "
                             f"{sorted(stray)}")
        return answer
    return {path: files.before(path) for path in change.files}


@dataclass(frozen=True)
class _OnlyOne:
    """A TurnFiles narrowed to one changed file (for the fallback of a file
    a describer left out)."""

    inner: TurnFiles
    item: FileChange

    @property
    def changed(self) -> Sequence[FileChange]:
        return [self.item]

    def before(self, path: str) -> bytes | None:
        return self.inner.before(path)

    def after(self, path: str) -> bytes | None:
        return self.inner.after(path)

    def paths_before(self) -> Sequence[str]:
        return self.inner.paths_before()

    def paths_after(self) -> Sequence[str]:
        return self.inner.paths_after()


class TurnFilesFromMaps:
    """A ``TurnFiles`` over two in-memory maps ``{path: bytes}``: for tests
    of a describer (``pneuma.testing``) and for the template."""

    def __init__(self, before: Mapping[str, bytes], after: Mapping[str, bytes]) -> None:
        self._before = dict(before)
        self._after = dict(after)
        changed: list[FileChange] = []
        for path in sorted(set(self._before) | set(self._after)):
            if path not in self._before:
                changed.append(FileChange(path, "added"))
            elif path not in self._after:
                changed.append(FileChange(path, "deleted"))
            elif self._before[path] != self._after[path]:
                changed.append(FileChange(path, "modified"))
        self._changed = changed

    @property
    def changed(self) -> Sequence[FileChange]:
        return self._changed

    def before(self, path: str) -> bytes | None:
        return self._before.get(path)

    def after(self, path: str) -> bytes | None:
        return self._after.get(path)

    def paths_before(self) -> Sequence[str]:
        return sorted(self._before)

    def paths_after(self) -> Sequence[str]:
        return sorted(self._after)


def _label_json(label: Label) -> str | dict[str, str]:
    return label if isinstance(label, str) else dict(label)


def text_of(content: bytes | None) -> str | None:
    """UTF-8 text of a file's content, or None when absent or not text."""
    if content is None:
        return None
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return None
