"""A turn costs what it changed, never the number of checkpoints kept: the
manifests a turn reads, the bytes the store grows by, and what pruning at
the cap reads (docs/checkpoints.md, "The format")."""

from __future__ import annotations

import os
from pathlib import Path

from pneuma.checkpoints import Checkpoints, StorePolicy, restore
from pneuma.checkpoints.blobs import PACKED
from pneuma.checkpoints.manifest import DELTAS_PER_WHOLE

from .test_store import write


def workspace(root: Path, files: int = 120) -> None:
    for i in range(files):
        write(root, f"docs{i % 6}/page{i}.md", f"# Page {i}\n" + "Some words of the page.\n" * 40)


def stored_bytes(root: Path) -> int:
    total = 0
    for folder, _, names in os.walk(root / ".pneuma/checkpoints"):
        total += sum(os.lstat(os.path.join(folder, n)).st_size for n in names
                     if n.endswith(".json") or "/blobs/" in folder + "/")
    return total


def page(turn: int, files: int = 120) -> str:
    return f"docs{turn % files % 6}/page{turn % files}.md"


def one_turn(store: Checkpoints, root: Path, turn: int, files: int = 120) -> int:
    """A turn that changes one page; the manifests its recording, its end
    and "what changed" read."""
    before = store.manifests_read
    checkpoint = store.record(f"turn {turn}")
    write(root, page(turn, files), f"# Page changed at turn {turn}\n" * 30)
    store.turn_ended()
    assert store.changes_of(checkpoint.ref).modified == [page(turn, files)]
    return store.manifests_read - before


def test_a_turn_reads_the_same_few_manifests_at_turn_3_and_at_turn_80(tmp_path: Path) -> None:
    workspace(tmp_path)
    store = Checkpoints(tmp_path)
    read = {turn: one_turn(store, tmp_path, turn) for turn in range(1, 81)}
    assert read[3] <= 1
    assert read[80] == read[3]
    assert max(read.values()) <= 1


def test_a_new_process_reads_at_most_one_whole_map_and_its_deltas(tmp_path: Path) -> None:
    workspace(tmp_path)
    store = Checkpoints(tmp_path)
    for turn in range(1, 101):
        one_turn(store, tmp_path, turn)
    fresh = Checkpoints(tmp_path)
    fresh.record("after a restart")
    assert fresh.manifests_read <= DELTAS_PER_WHOLE
    assert fresh.changes_of("50").modified == ["docs2/page50.md"]
    assert fresh.manifests_read <= DELTAS_PER_WHOLE + 2


def test_the_store_grows_by_about_what_a_turn_changed(tmp_path: Path) -> None:
    workspace(tmp_path, files=300)
    store = Checkpoints(tmp_path)
    for turn in range(1, 4):
        one_turn(store, tmp_path, turn)
    before = stored_bytes(tmp_path)
    one_turn(store, tmp_path, 4)
    grown = stored_bytes(tmp_path) - before
    # One page of ~900 bytes changed: its compressed content and a manifest
    # naming the one file, not a list of all 300 files (about 40 KB).
    assert grown < 2_000, grown


def test_text_is_kept_compressed_and_read_back_whole(tmp_path: Path) -> None:
    text = "a line of a long document that repeats\n" * 500
    write(tmp_path, "long.md", text)
    write(tmp_path, "odd.bin", "")
    (tmp_path / "odd.bin").write_bytes(PACKED + os.urandom(2000))
    checkpoint = Checkpoints(tmp_path).record("one")
    store = Checkpoints(tmp_path)
    digest = checkpoint.files["long.md"].hash
    assert digest is not None
    assert store.blobs.path(digest).stat().st_size < len(text) // 5
    assert store.read_blob(digest, "long.md").decode() == text
    odd = checkpoint.files["odd.bin"].hash
    assert odd is not None
    assert store.read_blob(odd, "odd.bin") == (tmp_path / "odd.bin").read_bytes()


def test_pruning_at_the_cap_reads_what_it_drops_and_frees_their_blobs(tmp_path: Path) -> None:
    workspace(tmp_path, files=30)
    store = Checkpoints(tmp_path, policy=StorePolicy(max_checkpoints=5))
    read = {}
    for turn in range(1, 61):
        read[turn] = one_turn(store, tmp_path, turn, files=30)
    kept = store.checkpoints()
    assert [c.ref for c in kept] == ["56", "57", "58", "59", "60"]
    # Each drop rebuilds the new oldest (at most a chain of deltas): the
    # same at turn 20 as at turn 60.
    assert read[60] == read[20]
    held = set().union(*(c.hashes() for c in kept))
    on_disk = {folder[-2:] + name for folder, _, names in
               os.walk(tmp_path / ".pneuma/checkpoints/blobs") for name in names}
    assert on_disk == held
    restore(store, "56")
    # Before turn 56 its page was as turn 26 left it.
    assert (tmp_path / page(56, 30)).read_text().startswith("# Page changed at turn 26\n")


def test_a_long_chain_rebuilds_every_checkpoint_exactly(tmp_path: Path) -> None:
    workspace(tmp_path, files=12)
    store = Checkpoints(tmp_path)
    seen = {}
    for turn in range(1, DELTAS_PER_WHOLE * 2 + 5):
        seen[str(turn)] = {p.relative_to(tmp_path).as_posix(): p.read_text()
                           for p in tmp_path.glob("docs*/*.md")}
        checkpoint = store.record(f"turn {turn}")
        write(tmp_path, f"docs{turn % 6}/page{turn % 12}.md", f"turn {turn}")
        if turn % 5 == 0:
            (tmp_path / f"docs{turn % 6}/page{turn % 12}.md").unlink()
        store.turn_ended()
        assert checkpoint.ref == str(turn)
    fresh = Checkpoints(tmp_path)
    for ref, files in seen.items():
        got = fresh.get(ref).files
        assert sorted(got) == sorted(files)
        assert {p: fresh.read_blob(e.hash or "", p).decode() for p, e in got.items()} == files


def test_hand_edits_since_a_checkpoint_come_from_the_deltas(tmp_path: Path) -> None:
    workspace(tmp_path, files=30)
    store = Checkpoints(tmp_path)
    for turn in range(1, 41):
        one_turn(store, tmp_path, turn, files=30)
        if turn == 20:
            write(tmp_path, "docs1/page1.md", "by hand between turns 20 and 21")
    write(tmp_path, "docs2/page2.md", "by hand since the last turn")
    now = store.current()
    before = store.manifests_read
    assert store.changed_between_turns("10", now) == {"docs1/page1.md", "docs2/page2.md"}
    assert store.changed_between_turns("30", now) == {"docs2/page2.md"}
    # The checkpoints since each ref, each read once: no whole map rebuilt.
    assert store.manifests_read - before <= 31 + 11


def test_a_turn_end_allocates_about_what_changed(tmp_path: Path) -> None:
    import tracemalloc

    workspace(tmp_path, files=200)
    store = Checkpoints(tmp_path)
    for turn in range(1, 40):
        one_turn(store, tmp_path, turn)
    store.record("turn 40")
    write(tmp_path, page(40), "# Page changed at turn 40\n" * 30)
    tracemalloc.start()
    try:
        store.turn_ended()
        store.changes_of("40")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The map of 200 files and one page read: not a 20 MiB read buffer, nor
    # every checkpoint's list.
    assert peak < 2 * 1024 * 1024, peak
