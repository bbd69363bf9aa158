"""Temp files of atomic writes killed mid-way (issue 14, item 6, first half).

``atomic_write_bytes`` writes ``.<name>.<8 hex>.tmp`` and renames it over the
file; a writer killed before the rename leaves the temp file behind, and
nothing removed it (11 files, 2.9 MB after 25 kills). `pneuma run` now
removes, at start, those that no writer can still be busy with: named
exactly as the writes name them and untouched for ``STALE_TEMP_AGE``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pneuma.core.files import STALE_TEMP_AGE, remove_stale_temp_files, temp_name

PNEUMA = str(Path(sys.executable).parent / "pneuma")

# A writer that hangs in its fsync, i.e. after the temp file got its bytes
# and before the rename: the moment a kill -9 leaves a temp file behind.
HANGING_WRITER = """
import os, sys, time
from pathlib import Path
from pneuma.core import files
os.fsync = lambda fd: time.sleep(600)
files.atomic_write_bytes(Path(sys.argv[1]), b"x" * 300_000)
"""


def killed_write(target: Path) -> Path:
    """Run an atomic write of ``target`` in a process, kill -9 it mid-way,
    and return the temp file it left."""
    before = set(target.parent.iterdir()) if target.parent.exists() else set()
    writer = subprocess.Popen([sys.executable, "-c", HANGING_WRITER, str(target)])
    try:
        deadline = time.monotonic() + 15
        while True:
            new = [p for p in target.parent.glob(".*.tmp") if p not in before]
            if new and new[0].stat().st_size == 300_000:
                break
            assert time.monotonic() < deadline, "the writer never wrote its temp file"
            time.sleep(0.02)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    return new[0]


def age(path: Path, seconds: float) -> None:
    """Make ``path`` look untouched for ``seconds`` (the time since the crash)."""
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)


def make_workspace(root: Path) -> tuple[list[Path], list[Path]]:
    """(leftovers of killed writes that are stale, files that must stay)."""
    (root / "slides").mkdir(parents=True)
    (root / ".pneuma").mkdir()
    (root / "slides" / "a.html").write_text("<p>old</p>")
    stale = [killed_write(root / "slides" / "a.html"),
             killed_write(root / ".pneuma" / "history.json"),
             killed_write(root / "new.md")]
    for path in stale:
        age(path, STALE_TEMP_AGE + 60)
    kept = [
        # A write that may still be going on (another process's).
        killed_write(root / "slides" / "b.html"),
        # The user's own files, named alike but not as the writes name theirs.
        root / ".notes.md.tmp",
        root / "draft.0123abcd.tmp",
        root / ".draft.0123ABCD.tmp",
        root / ".draft.0123abc.tmp",
        root / "slides" / "a.html",
    ]
    for path in kept[1:-1]:
        path.write_text("mine")
        age(path, STALE_TEMP_AGE + 60)
    # A symlink with a temp file's name, to a file outside: neither removed
    # nor followed.
    outside = root.parent / "outside.txt"
    outside.write_text("outside")
    link = root / temp_name("c.html")
    link.symlink_to(outside)
    age(link, STALE_TEMP_AGE + 60)
    age(outside, STALE_TEMP_AGE + 60)
    kept += [link, outside]
    # What a killed write would leave where no Pneuma write goes: not walked.
    (root / "node_modules").mkdir()
    vendored = root / "node_modules" / temp_name("x.js")
    vendored.write_text("vendored")
    age(vendored, STALE_TEMP_AGE + 60)
    kept.append(vendored)
    return stale, kept


def test_a_killed_write_leaves_its_temp_file_and_the_file_intact(tmp_path: Path) -> None:
    target = tmp_path / "a.html"
    target.write_text("<p>old</p>")
    leftover = killed_write(target)
    assert leftover.stat().st_size == 300_000
    assert target.read_text() == "<p>old</p>"


def test_only_stale_temp_files_of_killed_writes_are_removed(tmp_path: Path) -> None:
    stale, kept = make_workspace(tmp_path / "w")
    removed = remove_stale_temp_files(tmp_path / "w")
    assert sorted(removed) == sorted(stale)
    assert not any(p.exists() for p in stale)
    assert all(p.exists() or p.is_symlink() for p in kept)
    assert (tmp_path / "outside.txt").read_text() == "outside"


def test_pneuma_run_removes_them_at_start(tmp_path: Path) -> None:
    workspace = tmp_path / "deck"
    stale, kept = make_workspace(workspace)
    env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "slide", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        # --seed: the folder holds files of its own and no deck yet.
        [PNEUMA, "run", "--mode", "slide", "--workspace", str(workspace), "--backend", "none",
         "--no-open", "--no-prompt", "--port", "0", "--seed"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("[pneuma] ready "), line
        # The walk runs beside the server (a big workspace must not delay
        # the ready line): give it a moment.
        deadline = time.monotonic() + 10
        while any(p.exists() for p in stale) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [p for p in stale if p.exists()] == []
        assert [p for p in kept if not (p.exists() or p.is_symlink())] == []
        assert (workspace / "slides" / "a.html").read_text() == "<p>old</p>"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
    assert proc.returncode == 0
