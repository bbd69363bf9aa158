"""The turns of one workspace described in its mode's terms, kept for the
routes, the turn listener and the revert (docs/checkpoints.md, "A turn in
the mode's terms").

A checkpoint's two states never change once its turn has ended, so its
description is computed once and kept (the newest ``CAPACITY`` turns: the
chat asks for the turns on screen, and a revert needs the description it
reverts from). The key is the ref with the checkpoint's ``seq``, which is
never reused, so a store rebuilt from scratch cannot serve an old answer.

Describing runs in worker threads while the turn listener records the next
turn, so it reads through a store object of its own: the session's keeps
its parsed manifests and maps in memory unguarded (one job at a time
touches it), and manifests and blobs on disk are only ever replaced whole.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from pneuma.checkpoints.store import Checkpoints
from pneuma.checkpoints.turn_files import describe_checkpoint
from pneuma.host.turn_changes import ChangeDescriber, DescribedTurn, all_describers

CAPACITY = 64


def describer_of(mode: str | None) -> ChangeDescriber | None:
    """The installed describer of ``mode``; None for a mode without one."""
    if not mode:
        return None
    from pneuma.host.plugins import get_plugin_manager

    return all_describers(get_plugin_manager()).get(mode)


class DescribedTurns:
    """``describe(ref)``: turn ``ref`` of ``store`` in ``mode``'s terms,
    cached. Safe to call from several worker threads at once."""

    def __init__(self, store: Checkpoints, mode: str | None,
                 capacity: int = CAPACITY) -> None:
        self.store = store
        self.mode = mode
        self.capacity = capacity
        self._reader = Checkpoints(store.workspace, store.watch, store.ignore, store.policy)
        self._kept: OrderedDict[tuple[str, int], DescribedTurn] = OrderedDict()
        # One description at a time: the reader is not shared between threads.
        self._lock = threading.Lock()
        self._describer: ChangeDescriber | None = None
        self._looked_up = False

    @property
    def describer(self) -> ChangeDescriber | None:
        if not self._looked_up:
            self._describer = describer_of(self.mode)
            self._looked_up = True
        return self._describer

    def describe(self, ref: str | int) -> tuple[str, DescribedTurn]:
        """The checkpoint's canonical ref and its description. Errors as
        ``StoreTurnFiles`` (E_NOT_FOUND, E_BAD_ARGS, E_CONFLICT mid-turn)."""
        with self._lock:
            names, index = self._reader._find(ref)
            name = names[index]
            key = (name.split("-", 1)[1].removesuffix(".json"), int(name.split("-", 1)[0]))
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return key[0], found
            described = describe_checkpoint(self._reader, self.describer, key[0])
            self._kept[key] = described
            while len(self._kept) > self.capacity:
                self._kept.popitem(last=False)
            return key[0], described


def described_json(ref: str, turn: DescribedTurn) -> dict[str, object]:
    """The answer of ``GET /api/checkpoints/{ref}/changes`` and of
    ``pneuma checkpoints show --json``."""
    return {"ref": ref, **turn.to_json()}
