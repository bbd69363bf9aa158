"""A rewind never removes what its undo cannot bring back, never applies
more than ordinary permission bits, and the scan behind both never follows
a link out of the workspace (issue 23, items 2 and 7)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from pneuma.checkpoints import Checkpoints, StorePolicy, restore
from tests.checkpoints.test_cli import run
from tests.checkpoints.test_store import write

MIB = 1024 * 1024


def big_file(root: Path, rel: str, size: int) -> Path:
    """A sparse file of ``size`` bytes: over the limit without writing it."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


def test_a_big_file_the_turn_added_stays_and_the_plan_says_so(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "before")
    store = Checkpoints(tmp_path, policy=StorePolicy(max_file_bytes=1000))
    store.record("turn one")
    write(tmp_path, "a.md", "after")
    big = big_file(tmp_path, "video.bin", 5000)
    store.turn_ended()
    result = restore(store, "1")
    assert big.exists() and big.stat().st_size == 5000
    assert result.plan.paths("delete") == []
    assert result.plan.left_as_is == [{
        "path": "video.bin", "reason": "too_big",
        "why": "too big for the undo point to keep, so the rewind leaves it"}]
    assert result.restored == ["a.md"]
    # and the undo brings back what the rewind changed
    restore(store, result.undo or "")
    assert (tmp_path / "a.md").read_text() == "after" and big.exists()


def test_a_big_file_is_never_overwritten_by_a_smaller_old_version(tmp_path: Path) -> None:
    write(tmp_path, "data.bin", "small")
    store = Checkpoints(tmp_path, policy=StorePolicy(max_file_bytes=1000))
    store.record("turn one")
    big_file(tmp_path, "data.bin", 5000)
    store.turn_ended()
    result = restore(store, "1")
    assert (tmp_path / "data.bin").stat().st_size == 5000
    assert [item["path"] for item in result.plan.left_as_is] == ["data.bin"]


def test_the_cli_preview_lists_the_big_file_as_staying(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "before")
    Checkpoints(tmp_path).record("turn one")
    write(tmp_path, "a.md", "after")
    big_file(tmp_path, "huge.bin", 21 * MIB)
    dry = run("restore", "1", "-w", str(tmp_path), "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert "delete" not in dry.stdout
    assert "left as is huge.bin: too big for the undo point to keep" in dry.stdout
    done = run("restore", "1", "-w", str(tmp_path), "--yes")
    assert done.exit_code == 0, done.stderr
    assert (tmp_path / "huge.bin").stat().st_size == 21 * MIB


def _craft_mode(root: Path, ref: str, rel: str, mode: int) -> None:
    manifest = next((root / ".pneuma/checkpoints/manifests").glob(f"*-{ref}.json"))
    data = json.loads(manifest.read_text())
    data["files"][rel]["mode"] = mode
    manifest.write_text(json.dumps(data))


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def test_a_crafted_mode_restores_only_ordinary_bits(tmp_path: Path) -> None:
    write(tmp_path, "tool.sh", "echo hi")
    write(tmp_path, "gone.sh", "echo bye")
    store = Checkpoints(tmp_path)
    store.record("turn one")
    _craft_mode(tmp_path, "1", "tool.sh", 0o7777)
    _craft_mode(tmp_path, "1", "gone.sh", 0o6777)
    write(tmp_path, "tool.sh", "echo changed")
    (tmp_path / "gone.sh").unlink()
    previous = os.umask(0o022)
    try:
        result = restore(store, "1")
    finally:
        os.umask(previous)
    assert sorted(result.restored) == ["gone.sh", "tool.sh"]
    for name in ("tool.sh", "gone.sh"):
        mode = (tmp_path / name).stat().st_mode
        assert not mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX), oct(mode)
        assert stat.S_IMODE(mode) == 0o755, oct(mode)  # rwx, narrowed by the umask


def test_ordinary_modes_still_come_back(tmp_path: Path) -> None:
    write(tmp_path, "run.sh", "echo hi")
    os.chmod(tmp_path / "run.sh", 0o700)
    store = Checkpoints(tmp_path)
    store.record("turn one")
    (tmp_path / "run.sh").unlink()
    restore(store, "1")
    assert stat.S_IMODE((tmp_path / "run.sh").stat().st_mode) == 0o700 & ~_umask()


def test_the_scan_never_follows_a_link_out(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    outside = tmp_path / "outside"
    write(outside, "secret.md", "outside")
    write(workspace, "a.md", "inside")
    os.symlink("/", workspace / "root")
    os.symlink(outside, workspace / "elsewhere")
    os.symlink(outside / "secret.md", workspace / "secret.md")
    os.symlink(workspace, workspace / "loop")
    store = Checkpoints(workspace)
    checkpoint = store.record("turn one")
    assert sorted(checkpoint.files) == ["a.md"]
    assert sorted(store.current()) == ["a.md"]
