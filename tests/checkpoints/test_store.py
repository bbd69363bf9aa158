"""Recording, dedupe, stat reuse, pruning and diffs of per-turn checkpoints,
on real files in a temporary workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pneuma.checkpoints import Checkpoints, StorePolicy
from pneuma.checkpoints import scan as scan_module
from pneuma.core.errors import ToolError

_ticks = iter(range(1, 1_000_000))


def write(root: Path, rel: str, text: str, *, old: bool = True) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if old:  # an mtime well in the past (each write its own), so the stat reuse trusts it
        when = 1_600_000_000_000_000_000 + next(_ticks) * 1_000_000_000
        os.utime(path, ns=(when, when))
    return path


def edit(root: Path, changes: dict[str, str | None]) -> None:
    """Change the workspace as a turn would: write each file given a text,
    delete each given None."""
    for rel, text in changes.items():
        if text is None:
            (root / rel).unlink()
        else:
            write(root, rel, text)


def blob_count(root: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(root / ".pneuma/checkpoints/blobs"))


def test_record_lists_watched_files_only(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "A")
    write(tmp_path, "sub/b.md", "B")
    write(tmp_path, "notes.log", "ignored")
    write(tmp_path, ".git/config", "x")
    write(tmp_path, "node_modules/p/i.md", "x")
    write(tmp_path, ".claude/settings.json", "{}")
    write(tmp_path, ".pneuma/session.json", "{}")
    write(tmp_path, ".env", "SECRET=1")
    store = Checkpoints(tmp_path, watch=["**/*.md", "**/*.log"], ignore=["*.log"])
    checkpoint = store.record("Write the intro please, with a lot of detail " * 5)
    assert sorted(checkpoint.files) == ["a.md", "sub/b.md"]
    assert checkpoint.ref == "1"
    assert len(checkpoint.message) <= 80 and checkpoint.message.startswith("Write the intro")
    assert store.record("second").ref == "2"
    assert store.record("explicit", turn=7).ref == "7"


def test_same_content_is_one_blob(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "same")
    write(tmp_path, "b.md", "same")
    store = Checkpoints(tmp_path)
    store.record("one")
    store.record("two")
    assert blob_count(tmp_path) == 1


def test_unchanged_files_are_not_read_again(tmp_path: Path, monkeypatch) -> None:
    write(tmp_path, "a.md", "A")
    write(tmp_path, "b.md", "B")
    store = Checkpoints(tmp_path)
    store.record("one")
    opened: list[str] = []
    original = store.sandbox.open_file

    def counting(rel):
        opened.append(rel)
        return original(rel)

    monkeypatch.setattr(store.sandbox, "open_file", counting)
    write(tmp_path, "b.md", "B changed")
    second = store.record("two")
    assert opened == ["b.md"]
    assert second.files["a.md"].hash == store.checkpoints()[0].files["a.md"].hash


def test_recently_written_file_is_read_again(tmp_path: Path, monkeypatch) -> None:
    # Written within the mtime-granularity window: a same-size rewrite in the
    # same tick would keep size and mtime, so the hash is not reused.
    write(tmp_path, "a.md", "A", old=False)
    store = Checkpoints(tmp_path)
    store.record("one")
    (tmp_path / "a.md").write_text("Z")
    assert store.diff("1").modified == ["a.md"]


def test_pruning_keeps_the_newest_and_collects_blobs(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path, policy=StorePolicy(max_checkpoints=3))
    for turn in range(1, 6):
        write(tmp_path, "a.md", f"version {turn}")
        store.record(f"turn {turn}")
    assert [c.ref for c in store.checkpoints()] == ["3", "4", "5"]
    assert blob_count(tmp_path) == 3


def test_blob_budget_drops_oldest_checkpoints(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path, policy=StorePolicy(max_blob_bytes=3000))
    for turn in range(1, 5):
        # Content that does not compress: each blob is its 1,000 bytes on disk.
        (tmp_path / "a.bin").write_bytes(os.urandom(1000))
        store.record(f"turn {turn}")
    kept = store.checkpoints()
    assert [c.ref for c in kept] == ["3", "4"]
    assert blob_count(tmp_path) == 2


def test_file_over_the_limit_is_listed_not_kept(tmp_path: Path) -> None:
    write(tmp_path, "big.bin", "x" * 5000)
    write(tmp_path, "small.md", "s")
    store = Checkpoints(tmp_path, policy=StorePolicy(max_file_bytes=1000))
    checkpoint = store.record("one")
    assert checkpoint.files["big.bin"].hash is None
    assert checkpoint.files["big.bin"].skipped == "too_big"
    assert blob_count(tmp_path) == 1


def test_symlinks_and_hard_links_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    workspace = tmp_path / "w"
    write(workspace, "a.md", "A")
    os.symlink(outside / "secret.md", workspace / "link.md")
    os.symlink(outside, workspace / "linkdir")
    os.link(outside / "secret.md", workspace / "hard.md")
    checkpoint = Checkpoints(workspace).record("one")
    assert sorted(checkpoint.files) == ["a.md", "hard.md"]
    assert checkpoint.files["hard.md"].hash is None
    assert checkpoint.files["hard.md"].skipped == "hard_link"
    blobs = workspace / ".pneuma/checkpoints/blobs"
    assert all(b"secret" not in p.read_bytes() for p in blobs.rglob("*") if p.is_file())


def test_diff_between_checkpoints_and_now(tmp_path: Path) -> None:
    edit(tmp_path, {"a.md": "one\ntwo\nthree\n", "gone.md": "bye"})
    store = Checkpoints(tmp_path)
    store.record("first")
    edit(tmp_path, {"a.md": "one\nTWO\nthree\n", "gone.md": None, "new.md": "hi"})
    store.record("second")
    changes = store.diff("1", "2")
    assert (changes.added, changes.modified, changes.removed) == (["new.md"], ["a.md"],
                                                                  ["gone.md"])
    assert store.changes_of("1").to_json() == changes.to_json()
    write(tmp_path, "new.md", "hello")
    assert store.diff("2").modified == ["new.md"]
    text = store.file_diff("a.md", "1", "2")
    assert text.splitlines() == ["--- a/a.md", "+++ b/a.md", "@@ -1,4 +1,4 @@", " one",
                                 "-two", "+TWO", " three", " "]
    assert store.file_diff("gone.md", "1").startswith("--- a/gone.md\n+++ /dev/null\n")


def test_unknown_and_malformed_refs(tmp_path: Path) -> None:
    store = Checkpoints(tmp_path)
    with pytest.raises(ToolError) as missing:
        store.get("4")
    assert missing.value.code == "E_NOT_FOUND"
    with pytest.raises(ToolError) as bad:
        store.get("../x")
    assert bad.value.code == "E_BAD_ARGS"


def test_open_existing_uses_the_recorded_patterns(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "A")
    write(tmp_path, "b.txt", "B")
    Checkpoints(tmp_path, watch=["**/*.md"]).record("one")
    reopened = Checkpoints.open_existing(tmp_path)
    assert sorted(reopened.current()) == ["a.md"]


def test_never_walks_into_skipped_folders(tmp_path: Path, monkeypatch) -> None:
    write(tmp_path, "a.md", "A")
    write(tmp_path, "node_modules/x/y.md", "Y")
    seen: list[str] = []
    original = os.fwalk

    def spying(*args, **kwargs):
        for item in original(*args, **kwargs):
            seen.append(item[0])
            yield item

    monkeypatch.setattr(scan_module.os, "fwalk", spying)
    Checkpoints(tmp_path).record("one")
    assert not any("node_modules" in folder for folder in seen)


def test_the_newest_checkpoint_is_kept_even_over_the_budget(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "x" * 1000)
    store = Checkpoints(tmp_path, policy=StorePolicy(max_blob_bytes=10))
    store.record("one")
    write(tmp_path, "a.md", "y" * 1000)
    store.record("two")
    assert [c.ref for c in store.checkpoints()] == ["2"]
    assert blob_count(tmp_path) == 1
    assert store.diff("2").count == 0


def test_names_the_sandbox_refuses_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "A")
    write(tmp_path, "line\nbreak.md", "x")
    (tmp_path / os.fsdecode(b"bad\xff.md")).write_bytes(b"x")
    checkpoint = Checkpoints(tmp_path).record("one")
    assert sorted(checkpoint.files) == ["a.md"]
