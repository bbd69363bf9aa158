"""The list of recent workspaces ($PNEUMA_HOME/workspaces.json) and what the
launcher reads from each workspace beside it."""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
from pathlib import Path

from pneuma.launcher.details import (
    conversations_summary,
    folder_size,
    workspace_details,
)
from pneuma.server.conversation_log import ConversationLog
from pneuma.startup.recent import MAX_ENTRIES, RecentWorkspaces, pneuma_home
from tests.pneuma_process import no_server_left, start_run  # noqa: F401 (autouse fixture)


def test_pneuma_home_follows_the_environment(tmp_path: Path) -> None:
    assert pneuma_home({"PNEUMA_HOME": str(tmp_path / "p")}) == tmp_path / "p"
    assert pneuma_home({"XDG_DATA_HOME": str(tmp_path / "x")}) == tmp_path / "x" / "pneuma"
    assert pneuma_home({}) == Path.home() / ".local" / "share" / "pneuma"


def test_recording_puts_a_workspace_on_top_once(tmp_path: Path) -> None:
    recent = RecentWorkspaces(tmp_path / "home")
    a, b = tmp_path / "a", tmp_path / "b"
    recent.record(a, "doc", now=1.0)
    recent.record(b, "slide", now=2.0)
    recent.record(a, "doc", now=3.0)
    assert [(e.path, e.mode) for e in recent.entries()] == [(str(a), "doc"), (str(b), "slide")]
    # Written whole and readable by anything: no temporary file is left beside it.
    assert sorted(p.name for p in (tmp_path / "home").iterdir()) == [
        "workspaces.json", "workspaces.json.lock"]
    assert recent.forget(str(b)) and not recent.forget(str(b))
    assert [e.path for e in RecentWorkspaces(tmp_path / "home").entries()] == [str(a)]


def test_the_list_is_bounded_newest_kept(tmp_path: Path) -> None:
    recent = RecentWorkspaces(tmp_path / "home")
    for n in range(MAX_ENTRIES + 15):
        recent.record(tmp_path / f"w{n}", "doc", now=float(n))
    entries = recent.entries()
    assert len(entries) == MAX_ENTRIES
    assert entries[0].path == str(tmp_path / f"w{MAX_ENTRIES + 14}")
    assert str(tmp_path / "w0") not in {e.path for e in entries}


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"

    def writer(k: int) -> None:
        for n in range(20):
            RecentWorkspaces(home).record(tmp_path / f"t{k}-{n}", "doc")

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(RecentWorkspaces(home).entries()) == 80


def test_a_damaged_file_is_set_aside_with_a_warning(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "workspaces.json").write_text('{"workspaces": [ {"path": "/x"')
    warnings: list[str] = []
    recent = RecentWorkspaces(home, warn=warnings.append)
    assert recent.entries() == []
    assert len(warnings) == 1 and "damaged" in warnings[0]
    aside = [p for p in home.iterdir() if p.name.startswith("workspaces.json.damaged-")]
    assert len(aside) == 1 and aside[0].read_text().startswith('{"workspaces"')
    recent.record(tmp_path / "w", "doc")
    assert [e.mode for e in recent.entries()] == ["doc"]
    assert len(warnings) == 1


def test_odd_entries_are_skipped_not_the_list(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "workspaces.json").write_text(json.dumps({"version": 1, "workspaces": [
        {"path": "relative", "mode": "doc", "openedAt": 1},
        {"path": "/ok", "mode": "doc", "openedAt": 2},
        "nonsense"]}))
    assert [e.path for e in RecentWorkspaces(home).entries()] == ["/ok"]


def test_details_read_the_last_message_size_and_mode(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".pneuma").mkdir(parents=True)
    (workspace / "notes.md").write_text("x" * 1000)
    (workspace / "node_modules").mkdir()
    (workspace / "node_modules" / "big.js").write_text("y" * 100_000)  # not counted
    (workspace / ".pneuma" / "session.json").write_text(json.dumps({"mode": "doc"}))
    log = ConversationLog.open(workspace / ".pneuma")
    log.append("s1", 1, 1, "user_message", None,
               json.dumps({"type": "user_message", "content": "draft the intro"}))
    log.append("s1", 2, 2, "assistant", "m1", json.dumps({"type": "assistant", "message": {
        "content": [{"type": "text", "text": "Here is   the\nintro."}]}}))
    log.append("s1", 3, 3, "result", None, json.dumps({"type": "result", "result": "x"}))
    try:
        # Read while the session still has it open, as the launcher does.
        assert conversations_summary(workspace) == (
            1, {"role": "agent", "text": "Here is the intro."})
    finally:
        log.close()
    details = workspace_details(str(workspace), "slide")
    assert details["mode"] == "doc"  # the workspace's own record wins over the list's
    # .pneuma/ and node_modules/ are not the work: only notes.md counts.
    assert details["size"] == {"bytes": 1000, "files": 1, "complete": True}
    assert details["lastActivity"] is not None and not details["missing"]
    assert details["conversations"] == 1


def test_details_of_a_missing_or_strange_workspace(tmp_path: Path) -> None:
    assert workspace_details(str(tmp_path / "gone"), "doc")["missing"] is True
    odd = tmp_path / "odd"
    (odd / ".pneuma").mkdir(parents=True)
    db = sqlite3.connect(odd / ".pneuma" / "conversation.db")
    db.execute("CREATE TABLE other (x)")
    db.commit()
    db.close()
    assert conversations_summary(odd) == (0, None)  # another schema: no message, no error
    (tmp_path / "many").mkdir()
    for n in range(30):
        (tmp_path / "many" / f"f{n}").write_text("z")
    size = folder_size(tmp_path / "many", max_entries=10)
    assert not size.complete and size.files <= 10


def test_a_pneuma_run_shows_up_in_the_list_while_and_after_it_serves(tmp_path, monkeypatch):
    home = tmp_path / "pneuma-home"
    monkeypatch.setenv("PNEUMA_HOME", str(home))
    workspace = tmp_path / "deck"
    proc = start_run(workspace, "doc", "--port", "0")
    line = proc.stdout.readline()
    assert line.startswith("[pneuma] ready "), proc.communicate(timeout=10)
    url = line.split(" ", 2)[2].strip()
    try:
        entries = _wait_for_entries(home)
        assert [(e.path, e.mode) for e in entries] == [(str(workspace.resolve()), "doc")]
        from pneuma.launcher.details import served_elsewhere

        assert served_elsewhere(workspace.resolve()) == {"pid": proc.pid, "url": url}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=15)
    assert proc.returncode == 0
    from pneuma.launcher.details import served_elsewhere

    assert served_elsewhere(workspace.resolve()) is None  # stopped: the lock is free


def _wait_for_entries(home: Path) -> list:
    import time

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        entries = RecentWorkspaces(home).entries()
        if entries:
            return entries
        time.sleep(0.05)
    raise AssertionError("`pneuma run` did not add its workspace to the list")


def test_a_list_that_cannot_be_written_is_a_warning_not_a_failed_run(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("PNEUMA_HOME", str(blocker / "pneuma"))
    proc = start_run(tmp_path / "ws", "doc", "--port", "0")
    line = proc.stdout.readline()
    assert line.startswith("[pneuma] ready "), proc.communicate(timeout=10)
    give_up = threading.Timer(20, proc.send_signal, [signal.SIGTERM])  # no warning: no hang
    give_up.start()
    try:
        for warning in iter(proc.stderr.readline, ""):  # it goes on serving after the warning
            if "warning" in warning:
                break
    finally:
        give_up.cancel()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=15)
    assert proc.returncode == 0
    assert warning.startswith("[pneuma] warning: could not add ") and "recent workspaces" in warning
