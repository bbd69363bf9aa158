"""After a rewind has answered: the files it wrote, read once more when
their stat can be trusted, so that the next recording does not read them.

A restore knows the content of every file it wrote, but not that nothing
wrote the file again within the same timestamp tick (scan.racy): its undo
point records them without an mtime, and the next stat walk (the plan of
the next rewind, the next turn's checkpoint) reads and hashes each of them
again. That is what a second rewind of the same files spent most of its
time on (docs/performance.md, "The rewind's floor"). Once a tick has
passed, one read settles it for good, as git refreshes a racily clean
index entry once: this module does that read in the rewind's own thread,
after its syncs, while the person looks at the result, and gives each
file whose content is still what the rewind wrote its mtime back in the
undo point. A file that changed meanwhile, or an undo point that is no
longer the newest checkpoint, is left as it was (the next walk reads it,
as before).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pneuma.checkpoints.model import FileEntry, FileMap
from pneuma.checkpoints.scan import FINE_RACY_NS, read_entry
from pneuma.core.errors import ToolError

if TYPE_CHECKING:
    from pneuma.checkpoints.store import Checkpoints

# A little more than the tick of a file system with sub-second mtimes: a
# file written before the wait began can then no longer share its mtime
# with a later write (whole-second file systems are left to the next walk).
WAIT_S = FINE_RACY_NS / 1e9 + 0.02


def settle_written(store: Checkpoints, undo_ref: str, written: Iterable[str]) -> int:
    """Give the files ``written`` by the rewind whose undo point is
    ``undo_ref`` their mtime in that undo point's end state, where their
    content is still what was recorded. Returns how many were settled."""
    unsettled = _unsettled(store, undo_ref, written)
    if not unsettled:
        return 0
    time.sleep(WAIT_S)
    fresh: dict[str, FileEntry] = {}
    for path, entry in unsettled.items():
        found = _read_again(store, path)
        if found is not None and found.mtime_ns and found.same_content(entry) \
                and found.mode == entry.mode:
            fresh[path] = found
    if not fresh:
        return 0
    with store._locked(replay=False):
        newest = store._chain.newest_of(store._names())
        if newest is None or _ref_of(newest.name) != undo_ref:
            return 0  # a turn or another rewind came meanwhile: it has its own map
        state = dict(newest.state)
        settled = 0
        for path, entry in fresh.items():
            if state.get(path) == unsettled[path]:
                state[path] = entry
                settled += 1
        if settled:
            checkpoint = store._checkpoint(newest.stored, newest.files)
            checkpoint.after = state
            store._write(checkpoint)
        return settled


def _unsettled(store: Checkpoints, undo_ref: str, written: Iterable[str]) -> FileMap:
    with store._locked(replay=False):
        newest = store._chain.newest_of(store._names())
        if newest is None or _ref_of(newest.name) != undo_ref:
            return {}
        state = newest.state
        return {path: entry for path in written
                if (entry := state.get(path)) is not None and entry.hash is not None
                and not entry.mtime_ns}


def _read_again(store: Checkpoints, path: str) -> FileEntry | None:
    try:
        with store.sandbox.locate(path, follow_final=False) as located:
            info = os.stat(located.name, dir_fd=located.dir_fd, follow_symlinks=False)
    except (OSError, ToolError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return read_entry(store.sandbox, path, info, store.policy.max_file_bytes)


def _ref_of(manifest_name: str) -> str:
    """``00000012-u3.json`` -> ``u3``."""
    return manifest_name.split("-", 1)[1][:-len(".json")]
