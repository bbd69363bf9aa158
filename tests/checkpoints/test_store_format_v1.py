"""A store written before the delta format (version 1: one whole JSON map per
checkpoint, blobs as they are) keeps working: listed, compared, built on by
new turns, restored, and pruned without losing what newer checkpoints hold.
The fixture is written here in that format's exact JSON shape."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pneuma.checkpoints import Checkpoints, StorePolicy, restore

from .test_store import write


def v1_entry(root: Path, rel: str) -> dict[str, Any]:
    path = root / rel
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    blob = root / ".pneuma/checkpoints/blobs" / digest[:2] / digest[2:]
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    info = path.stat()
    return {"hash": digest, "size": len(data), "mode": info.st_mode & 0o7777,
            "mtimeNs": info.st_mtime_ns, "ino": info.st_ino}


def v1_manifest(root: Path, seq: int, turn: int, files: dict[str, dict[str, Any]],
                after: dict[str, dict[str, Any]] | None) -> None:
    data: dict[str, Any] = {"version": 1, "seq": seq, "kind": "turn", "number": turn,
                            "ref": str(turn), "timestamp": 1_700_000_000_000 + seq,
                            "message": f"turn {turn}", "watch": ["**/*"], "ignore": [],
                            "files": files}
    if after is not None:
        data["after"] = after
        data["afterTimestamp"] = 1_700_000_000_500 + seq
    folder = root / ".pneuma/checkpoints/manifests"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{seq:08d}-{turn}.json").write_text(json.dumps(data, separators=(",", ":")))


def old_store(root: Path) -> None:
    """Two turns as the version 1 store recorded them: turn 1 changed a.md
    (ended), turn 2 is still running."""
    write(root, "a.md", "alpha one")
    write(root, "b.md", "beta")
    before_1 = {rel: v1_entry(root, rel) for rel in ("a.md", "b.md")}
    write(root, "a.md", "alpha two")
    after_1 = {rel: v1_entry(root, rel) for rel in ("a.md", "b.md")}
    v1_manifest(root, 1, 1, before_1, after_1)
    v1_manifest(root, 2, 2, after_1, None)
    write(root, "c.md", "gamma")  # turn 2 adds c.md


def test_an_old_store_is_listed_and_compared(tmp_path: Path) -> None:
    old_store(tmp_path)
    store = Checkpoints.open_existing(tmp_path)
    rows = [(c.ref, c.file_count, changed.to_json()) for c, changed in store.history()]
    assert rows == [("1", 2, {"added": [], "modified": ["a.md"], "removed": []}),
                    ("2", 2, {"added": ["c.md"], "modified": [], "removed": []})]
    assert store.changes_of("1").modified == ["a.md"]
    assert "+alpha two" in store.turn_file_diff("1", "a.md")


def test_new_turns_build_on_an_old_store_and_restore_its_checkpoints(tmp_path: Path) -> None:
    old_store(tmp_path)
    store = Checkpoints(tmp_path)
    store.turn_ended()  # turn 2 ends under the new code
    assert store.changes_of("2").added == ["c.md"]
    store.record("turn 3")
    write(tmp_path, "b.md", "beta three")
    store.turn_ended()
    assert store.changes_of("3").modified == ["b.md"]
    restore(store, "1")
    assert (tmp_path / "a.md").read_text() == "alpha one"
    assert (tmp_path / "b.md").read_text() == "beta"
    assert not (tmp_path / "c.md").exists()
    restore(store, "u1")
    assert (tmp_path / "b.md").read_text() == "beta three"
    assert (tmp_path / "c.md").read_text() == "gamma"


def test_pruning_an_old_store_keeps_what_newer_checkpoints_hold(tmp_path: Path) -> None:
    old_store(tmp_path)
    store = Checkpoints(tmp_path, policy=StorePolicy(max_checkpoints=2))
    store.record("turn 3")
    assert [c.ref for c in store.checkpoints()] == ["2", "3"]
    blobs = {folder[-2:] + name for folder, _, names in
             os.walk(tmp_path / ".pneuma/checkpoints/blobs") for name in names}
    # "alpha one" (only turn 1 held it) is gone; what turn 2 holds is there.
    assert hashlib.sha256(b"alpha one").hexdigest() not in blobs
    assert hashlib.sha256(b"alpha two").hexdigest() in blobs
    write(tmp_path, "a.md", "changed in turn 3")
    restore(store, "2")
    assert (tmp_path / "a.md").read_text() == "alpha two"
    assert not (tmp_path / "c.md").exists()
