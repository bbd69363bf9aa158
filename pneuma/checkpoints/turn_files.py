"""One turn's two states, read from the checkpoint store, as the
``TurnFiles`` a mode's change describer reads (pneuma.host.turn_changes;
docs/checkpoints.md, "A turn in the mode's terms").

Before is the checkpoint (the workspace as the turn found it), after is
what the turn left: the end recorded when it ended, or, for a turn whose
end was never recorded, the next checkpoint. A turn still running has no
after yet: its description would change under the person's eyes, so it is
refused (``E_CONFLICT``). Nothing is read from the live workspace, so a
description stays the same however the files are edited since.

Everything is read lazily: the maps when a describer first asks for a file,
each content when it is asked for (and kept while this object lives, since
a describer often reads ``manifest.json`` once per slide).

``describe_checkpoint`` is what the routes, the command line and the turn
listener's ``turn_described`` use; other features (compare, after-turn
checks) may use it too. Note for the floors: this module imports
pneuma.host, so pneuma.host must never import pneuma.checkpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pneuma.checkpoints.model import FileEntry, FileMap
from pneuma.core.errors import ToolError
from pneuma.host.turn_changes import (
    ChangeDescriber,
    DescribedTurn,
    FileChange,
    FileStatus,
    describe_turn,
)

if TYPE_CHECKING:
    from pneuma.checkpoints.store import Checkpoints


class StoreTurnFiles:
    """The ``TurnFiles`` of checkpoint ``ref`` in ``store``. Raises
    ``E_NOT_FOUND`` (no such checkpoint), ``E_BAD_ARGS`` (not a ref) or
    ``E_CONFLICT`` (the turn has not ended) when made."""

    def __init__(self, store: Checkpoints, ref: str | int) -> None:
        self.store = store
        names, index = store._find(ref)
        stored = store._chain.read(names[index])
        self.ref = _ref_of(names[index])
        self.seq = stored.seq
        self.ended = stored.ended
        self._next_name = names[index + 1] if index + 1 < len(names) else None
        if not self.ended and self._next_name is None:
            raise ToolError("E_CONFLICT", f"turn {self.ref} has not ended: its changes are "
                            "known once the agent has finished", details={"reason": "turn_running",
                                                                         "ref": self.ref},
                            hint="Wait for the turn to end, then ask again.")
        self._names, self._index = names, index
        self._changed: list[FileChange] | None = None
        self._before: FileMap | None = None
        self._after: FileMap | None = None
        self._contents: dict[tuple[str, str], bytes | None] = {}

    # --- the maps (no content read) ---

    @property
    def before_map(self) -> FileMap:
        if self._before is None:
            self._before = self.store._chain.files_of(self._names, self._index)[0]
        return self._before

    @property
    def after_map(self) -> FileMap:
        if self._after is None:
            if self.ended:
                stored = self.store._chain.read(self._names[self._index])
                self._after = stored.end_state(self.before_map)
            else:
                self._after = self.store._chain.files_of(self._names, self._index + 1)[0]
        return self._after

    # --- TurnFiles ---

    @property
    def changed(self) -> Sequence[FileChange]:
        if self._changed is None:
            found = self.store.changes_of(self.ref)
            status: list[tuple[list[str], FileStatus]] = [
                (found.added, "added"), (found.modified, "modified"), (found.removed, "deleted")]
            self._changed = sorted((FileChange(path, how) for paths, how in status
                                    for path in paths), key=lambda item: item.path)
        return self._changed

    def before(self, path: str) -> bytes | None:
        return self._content("before", self.before_map.get(path), path)

    def after(self, path: str) -> bytes | None:
        return self._content("after", self.after_map.get(path), path)

    def paths_before(self) -> Sequence[str]:
        return sorted(self.before_map)

    def paths_after(self) -> Sequence[str]:
        return sorted(self.after_map)

    def _content(self, side: str, entry: FileEntry | None, path: str) -> bytes | None:
        """A file's stored content; None when absent or not kept (too big,
        a hard link, unreadable). A damaged blob raises ``E_IO``."""
        if entry is None or entry.hash is None:
            return None
        key = (side, path)
        if key not in self._contents:
            self._contents[key] = self.store.read_blob(entry.hash, path)
        return self._contents[key]

    def forget_contents(self) -> None:
        """Drop the contents read so far (a description cached for long
        keeps its changes, not the files they came from)."""
        self._contents.clear()


def _ref_of(name: str) -> str:
    """``00000012-u3.json`` -> ``u3``."""
    return name.split("-", 1)[1].removesuffix(".json")


def describe_checkpoint(store: Checkpoints, describer: ChangeDescriber | None,
                        ref: str | int) -> DescribedTurn:
    """Turn ``ref`` of ``store`` in the terms of ``describer`` (None: per
    file). Errors as ``StoreTurnFiles``."""
    files = StoreTurnFiles(store, ref)
    try:
        return describe_turn(describer, files)
    finally:
        files.forget_contents()
