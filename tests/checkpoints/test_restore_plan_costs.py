"""A rewind far back plans from manifests already read (issue 27, item 3):
the second plan of a rewind over more checkpoints than the 64 a process
used to keep parsed reads no manifest of the walk again (the whole ones
were parsed twice until the plan and the restore shared them) (docs/checkpoints.md, "Restoring")."""

from __future__ import annotations

from pathlib import Path

from pneuma.checkpoints import Checkpoints, plan_restore

from .test_store_costs import one_turn, workspace

TURNS = 90


def test_planning_a_rewind_again_does_not_parse_the_walk_again(tmp_path: Path) -> None:
    workspace(tmp_path)
    store = Checkpoints(tmp_path)
    for turn in range(1, TURNS + 1):
        one_turn(store, tmp_path, turn)
    first = plan_restore(store, "2")
    before = store.manifests_read
    again = plan_restore(store, "2")
    parsed = store.manifests_read - before
    assert again.to_json() == first.to_json()
    assert again.paths("write")  # the pages turns 2 on changed
    # Whole manifests are kept parsed too (within the bound on the paths
    # kept): nothing of the walk is parsed again.
    assert parsed == 0, parsed
