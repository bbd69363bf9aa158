"""Details of the WebGAL tool contract (seeds/webgal-tool-contracts.md)
that its field descriptions state and its schema alone does not.

- list_project_resources: ``scenes`` are the game's scripts, not every file
  under game/scene/ (notes, drafts, a README are not scenes).
- list_snapshots: "负数/NaN 会被规范化为 50": a negative or NaN ``limit``
  lists the default 50, it is not refused.
"""

from __future__ import annotations

import json
import math

import pytest

from pneuma.tools.runtime import call_tool


def call(ws, name, args):
    return call_tool("webgal", ws, name, args)


def test_scenes_lists_only_scene_scripts(seeded):
    scene = seeded / "game" / "scene"
    (scene / "notes.md").write_text("# ideas\n")
    (scene / "README").write_text("drafts go here\n")
    (scene / "draft.txt.bak").write_text("x\n")
    (scene / "ch2").mkdir()
    (scene / "ch2" / "end.txt").write_text("end;\n")
    (scene / "ch2" / "plan.json").write_text("{}\n")
    scenes = call(seeded, "list_project_resources", {})["scenes"]
    assert "start.txt" in scenes and "ch2/end.txt" in scenes
    assert all(name.endswith(".txt") for name in scenes), scenes


def _snapshots(ws, count: int) -> None:
    """``count`` snapshots, one per file (retention keeps 50 per file), where
    the webgal tools keep theirs."""
    from pneuma.tools.runtime import snapshot_dir
    from pneuma.tools.snapshots import SnapshotStore

    store = SnapshotStore(snapshot_dir(ws, "webgal"))
    for i in range(count):
        store.create(f"game/scene/s{i}.txt", f"version {i}\n", "test")


@pytest.mark.parametrize("limit", [-1, -1000, float("nan"), -0.5])
def test_a_negative_or_nan_limit_lists_the_default_fifty(seeded, limit):
    _snapshots(seeded, 55)
    answer = call(seeded, "list_snapshots", {"limit": limit})
    assert "error" not in answer, answer
    assert len(answer["snapshots"]) == 50


def test_limits_in_range_still_apply(seeded):
    _snapshots(seeded, 12)
    assert len(call(seeded, "list_snapshots", {"limit": 3})["snapshots"]) == 3
    assert len(call(seeded, "list_snapshots", {})["snapshots"]) == 12
    assert len(call(seeded, "list_snapshots", {"limit": 0})["snapshots"]) == 0


def test_nan_arrives_as_json_over_http_too(seeded):
    # Python's json (and so the HTTP route and `pneuma tool`) reads NaN.
    args = json.loads('{"limit": NaN}')
    assert math.isnan(args["limit"])
    _snapshots(seeded, 51)
    assert len(call(seeded, "list_snapshots", args)["snapshots"]) == 50
