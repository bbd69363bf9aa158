"""The launch stamp: a start whose checks saw exactly the files of the last
successful one prints its ready line first, then runs the same checks; any
change to those files (or to the command) puts the checks first again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pneuma.startup.launch_stamp import (
    STAMP_FILE,
    launch_key,
    stamp_is_current,
    write_stamp,
)

PNEUMA = str(Path(sys.executable).parent / "pneuma")


def _key(**changes):
    base = {"mode": "slide", "backend": "none", "params": {}, "skip_skill": False}
    base.update(changes)
    return launch_key(**base)


@pytest.fixture
def stamped(tmp_path):
    """A workspace whose stamp covers one file and one folder."""
    workspace = tmp_path / "ws"
    (workspace / ".pneuma").mkdir(parents=True)
    watched = tmp_path / "manifest.json"
    watched.write_text("{}")
    folder = tmp_path / "skill"
    folder.mkdir()
    write_stamp(workspace, _key(), [str(watched), str(folder)])
    return workspace, watched, folder


def test_the_stamp_is_current_until_a_file_it_covers_changes(stamped):
    workspace, watched, folder = stamped
    assert stamp_is_current(workspace, _key())
    stat = watched.stat()
    os.utime(watched, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert not stamp_is_current(workspace, _key())


def test_a_file_added_to_a_covered_folder_or_a_removed_file_count(stamped):
    workspace, watched, folder = stamped
    (folder / "new.md").write_text("x")
    assert not stamp_is_current(workspace, _key())
    write_stamp(workspace, _key(), [str(watched), str(folder)])
    assert stamp_is_current(workspace, _key())
    watched.unlink()
    assert not stamp_is_current(workspace, _key())


@pytest.mark.parametrize("change", [{"mode": "doc"}, {"backend": "claude-code"},
                                    {"params": {"title": "x"}}, {"skip_skill": True}])
def test_another_command_is_not_covered(stamped, change):
    workspace, _, _ = stamped
    assert not stamp_is_current(workspace, _key(**change))


def test_another_plugin_selection_is_not_covered(stamped, monkeypatch):
    workspace, _, _ = stamped
    monkeypatch.setenv("PNEUMA_LOAD_PLUGINS", "slide")
    assert not stamp_is_current(workspace, _key())


@pytest.mark.parametrize("content", ["", "not json", "[]", '{"key": {}}',
                                     '{"key": null, "paths": [], "digest": ""}'])
def test_a_damaged_stamp_means_checks_first(stamped, content):
    workspace, _, _ = stamped
    (workspace / STAMP_FILE).write_text(content)
    assert not stamp_is_current(workspace, _key())


def test_a_second_write_leaves_the_stamp_untouched(stamped):
    workspace, watched, folder = stamped
    before = (workspace / STAMP_FILE).stat().st_mtime_ns
    time.sleep(0.01)
    write_stamp(workspace, _key(), [str(watched), str(folder)])
    assert (workspace / STAMP_FILE).stat().st_mtime_ns == before


# --- through `pneuma run` ---


def _run(workspace: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PNEUMA_LOAD_PLUGINS": "slide", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [PNEUMA, "run", "--mode", "slide", "--workspace", str(workspace), "--backend", "none",
         "--no-open", "--no-prompt", "--port", "0", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )


def _start_and_stop(workspace: Path) -> str:
    proc = _run(workspace)
    line = proc.stdout.readline()
    assert line.startswith("[pneuma] ready "), proc.communicate()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    return line


def test_a_run_records_what_its_checks_read(tmp_path):
    workspace = tmp_path / "deck"
    _start_and_stop(workspace)
    stamp = json.loads((workspace / STAMP_FILE).read_text())
    assert stamp["key"]["mode"] == "slide" and stamp["key"]["backend"] == "none"
    paths = set(stamp["paths"])
    resolved = workspace.resolve()
    for rel in ("CLAUDE.md", ".pneuma/config.toml", ".pneuma/install-fingerprint.json",
                ".claude/skills/pneuma-slide/SKILL.md"):
        assert str(resolved / rel) in paths, rel
    assert any(p.endswith("manifest.json") and "pneuma_slide" in p for p in paths)
    assert any(p.endswith("site-packages") for p in paths)


def test_a_changed_file_puts_the_checks_before_the_ready_line(tmp_path):
    workspace = tmp_path / "deck"
    _start_and_stop(workspace)
    (workspace / "CLAUDE.md").write_text("# Notes\n<!-- pneuma:start -->\nno end marker\n")
    proc = _run(workspace)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert "[pneuma] ready" not in out  # checked first: no promise was made
    assert "marker" in err.lower() and "CLAUDE.md" in err


def test_a_stamp_that_lies_does_not_skip_the_checks(tmp_path):
    """Even when the stamp says nothing changed, the checks run (after the
    ready line): a broken CLAUDE.md still stops the start with its message
    and exit status 2, and nothing is served."""
    workspace = tmp_path / "deck"
    _start_and_stop(workspace)
    (workspace / "CLAUDE.md").write_text("# Notes\n<!-- pneuma:start -->\nno end marker\n")
    stamp = json.loads((workspace / STAMP_FILE).read_text())
    # Re-stamp the broken state as if it were the last good one.
    subprocess.run(
        [sys.executable, "-c",
         "import json, sys, pathlib; from pneuma.startup.launch_stamp import write_stamp; "
         "s = json.loads(sys.argv[2]); "
         "write_stamp(pathlib.Path(sys.argv[1]), s['key'], s['paths'], s.get('first'))",
         str(workspace), json.dumps(stamp)],
        check=True,
    )
    proc = _run(workspace)
    out, err = proc.communicate(timeout=30)
    assert out.startswith("[pneuma] ready ")  # the early ready line went out
    assert proc.returncode == 2
    assert "marker" in err.lower() and "CLAUDE.md" in err
    assert "Traceback" not in err


def test_a_signal_right_after_an_early_ready_line_keeps_the_session(tmp_path):
    workspace = tmp_path / "deck"
    first = _start_and_stop(workspace)
    session_id = first.split("session=")[1].split("&")[0]
    # The stamp is current now: the second start announces first. Stop
    # it at once, before its checks end; then a third start resumes.
    proc = _run(workspace)
    line = proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert f"session={session_id}&" in line
    third = _start_and_stop(workspace)
    assert f"session={session_id}&" in third
