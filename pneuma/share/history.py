"""A shared file's turns written into a new workspace as its own history
(docs/sharing.md, "Open a shared file"): the files before the first turn,
then for each turn a checkpoint recorded as a served turn records one
(before the turn, then what the turn left), so the timeline, Compare,
Rewind and Replay work on the opened workspace as on one made here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.checkpoints import Checkpoints
from pneuma.core.files import write_in_workspace
from pneuma.core.sandbox import Sandbox

Files = dict[str, bytes]


@dataclass(frozen=True)
class RecordedTurn:
    """One shared turn recorded in the new workspace's checkpoint store."""

    ref: str
    files_changed: dict[str, Any]  # as a served turn's ``turn_changes`` says it


def write_turns(target: Path, mode_name: str, messages: list[str], trees: list[Files],
                conversation_id: str | None) -> list[RecordedTurn]:
    """Write ``trees[0]`` (the files before the first turn), then each next
    tree as turn ``messages[i]`` of the conversation; answer the turns
    recorded (none when the mode is not installed here: then only the last
    tree is written)."""
    sandbox = Sandbox(target)
    watch = _watch(mode_name)
    if watch is None:
        _apply(sandbox, {}, trees[-1])
        return []
    _apply(sandbox, {}, trees[0])
    store = Checkpoints(target, *watch)
    recorded = []
    for before, after, message in zip(trees, trees[1:], messages, strict=False):
        ref = store.record(message, conversation=conversation_id).ref
        _apply(sandbox, before, after)
        store.turn_ended()
        recorded.append(RecordedTurn(ref, store.changes_of(ref).to_json()))
    return recorded


def _apply(sandbox: Sandbox, before: Files, after: Files) -> None:
    """The workspace from ``before`` to ``after``: removed files deleted,
    new and changed ones written."""
    for rel in before.keys() - after.keys():
        sandbox.resolve(rel).unlink(missing_ok=True)
    for rel, content in after.items():
        if before.get(rel) != content:
            write_in_workspace(sandbox, rel, content)


def _watch(mode_name: str) -> tuple[list[str], list[str]] | None:
    """The mode's watched and ignored files, as its checkpoints record them."""
    from pneuma.host.registry import load_modes

    mode = load_modes().modes.get(mode_name)
    if mode is None:
        return None
    viewer = mode.manifest.viewer
    return list(viewer.watch_patterns), list(viewer.ignore_patterns)
