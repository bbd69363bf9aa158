"""The conversation log when its file is damaged, locked or on a full disk
(issue 23, item 1): only real damage moves a log aside, after every
readable row went into a fresh log; a backup never replaces an earlier
one; a locked log is waited for, then refused with one line; a full disk
opens it read-only and loses nothing; a zero-byte log is said to be empty."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import pytest

from pneuma.server.conversation_log import (
    LOG_FILE,
    ConversationLog,
    ConversationLogLocked,
)
from pneuma.server.persistence import try_open_log
from tests.server.log_faults import (
    body,
    damage_page,
    hold_lock,
    in_small_disk,
    leaf_pages,
    make_log,
    rows,
)


def backups(state_dir: Path) -> list[Path]:
    return sorted(p for p in state_dir.iterdir() if ".corrupt" in p.name)


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_damaged_page_loses_only_its_own_rows(tmp_path: Path, caplog) -> None:
    state = tmp_path / ".pneuma"
    make_log(state, 1500)
    path = state / LOG_FILE
    before = rows(path)
    pages = leaf_pages(path)
    victim = sorted(pages)[len(pages) // 2]
    damage_page(path, victim, b"\xff" * 64)
    damaged_bytes = path.read_bytes()

    with caplog.at_level(logging.WARNING):
        log = ConversationLog.open(state)  # died with a traceback in tail() before
        tail = log.tail("s1", 10**9)
    lost = set(pages[victim])
    assert [m.row_id for m in tail.messages] == sorted(set(before) - lost)
    assert all(m.text == before[m.row_id] for m in tail.messages)
    assert tail.next_row_id == 1501  # ids are never reused
    log.close()
    kept = backups(state)
    assert len(kept) == 1 and kept[0].read_bytes() == damaged_bytes
    said = [w for w in warnings(caplog) if "damaged" in w]
    assert len(said) == 1 and f"saved {1500 - len(lost)} messages" in said[0]
    assert kept[0].name in said[0]


def test_a_backup_never_replaces_an_earlier_one(tmp_path: Path) -> None:
    state = tmp_path / ".pneuma"
    state.mkdir()
    path = state / LOG_FILE
    contents = [f"not a database, try {n} ".encode() * 300 for n in range(3)]
    for content in contents:  # three damages within the same second
        path.write_bytes(content)
        ConversationLog.open(state).close()
    assert sorted(p.read_bytes() for p in backups(state)) == sorted(contents)


def test_a_locked_log_is_waited_for_then_refused_and_left_alone(tmp_path: Path,
                                                                monkeypatch) -> None:
    from pneuma.server import log_file

    monkeypatch.setattr(log_file, "LOCK_WAIT_SECONDS", 0.5)
    state = tmp_path / ".pneuma"
    make_log(state, 20)
    path = state / LOG_FILE
    before = rows(path)
    holder = hold_lock(path)
    try:
        started = time.monotonic()
        with pytest.raises(ConversationLogLocked) as refused:
            try_open_log(state)
        waited = time.monotonic() - started
    finally:
        holder.communicate("")
    assert 0.4 < waited < 5
    message = str(refused.value)
    assert "\n" not in message and "locked by another process" in message and str(path) in message
    assert backups(state) == []
    assert rows(path) == before


def test_a_zero_byte_log_is_said_to_be_empty(tmp_path: Path, caplog) -> None:
    state = tmp_path / ".pneuma"
    state.mkdir()
    (state / LOG_FILE).write_bytes(b"")
    with caplog.at_level(logging.WARNING):
        log = ConversationLog.open(state)
    log.close()
    said = [w for w in warnings(caplog) if "empty (0 bytes)" in w]
    assert len(said) == 1 and LOG_FILE in said[0]
    assert backups(state) == []


def test_a_lock_taken_while_serving_pauses_saving_and_loses_nothing(tmp_path: Path) -> None:
    state = tmp_path / ".pneuma"
    make_log(state, 5)
    log = ConversationLog.open(state)
    paused: list[str] = []
    log.on_pause = paused.append
    holder = hold_lock(log.path)
    try:
        started = time.monotonic()
        for n in range(6, 56):
            log.append("s1", n, n, "user_message", None, body(n))
        log.replace(6, 99, body(600))
        took = time.monotonic() - started
        assert took < 1.0, "writes stalled the event loop behind the lock"
        assert paused == ["another process holds the conversation log"]
        assert not log.resume_saving()  # still held
    finally:
        holder.communicate("")
    assert log.resume_saving()
    assert log.paused is None and log.waiting == 0
    log.close()
    saved = rows(log.path)
    assert sorted(saved) == list(range(1, 56))
    assert saved[6] == body(600)


KILLED_THEN_FULL = r"""
import json, os, subprocess, sys
from pathlib import Path
from pneuma.server.persistence import try_open_log
from tests.server.log_faults import body, fill, rows

disk = Path(sys.argv[1])
state = disk / "ws" / ".pneuma"
state.mkdir(parents=True)
writer = '''
import os, sys
from pathlib import Path
from pneuma.server.conversation_log import ConversationLog
from tests.server.log_faults import body
log = ConversationLog.open(Path(sys.argv[1]))
log.ensure_conversation("s1")
for n in range(1, 301):
    log.append("s1", n, n, "user_message", None, body(n))
os.kill(os.getpid(), 9)
'''
subprocess.run([sys.executable, "-c", writer, str(state)])
side_files = sorted(os.listdir(state))
filler = fill(disk)
first = try_open_log(state)    # the session's open
second = try_open_log(state)   # the app's, when the first gave none
shown = [m.row_id for m in first.tail("s1", 10**9).messages] if first else []
paused = first.paused if first else None
first.append("s1", 301, 301, "user_message", None, body(301))
resumed_while_full = first.resume_saving()
filler.unlink()
resumed = first.resume_saving()
first.close()
if second is not None:
    second.close()
print(json.dumps({"side_files": side_files, "files": sorted(os.listdir(state)),
                  "shown": shown, "paused": paused, "resumed_while_full": resumed_while_full,
                  "resumed": resumed, "saved": sorted(rows(state / "conversation.db"))}))
"""


def test_a_kill_9_then_a_full_disk_at_start_loses_nothing(tmp_path: Path) -> None:
    done = in_small_disk(KILLED_THEN_FULL, tmp_path / "disk", "3m")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert "conversation.db-wal" in found["side_files"]  # the kill left its WAL
    assert not [name for name in found["files"] if "corrupt" in name]
    assert found["shown"] == list(range(1, 301))
    assert found["paused"] == "the disk is full"
    assert found["resumed_while_full"] is False
    assert found["resumed"] is True
    assert found["saved"] == list(range(1, 302))
    assert "Traceback" not in done.stderr


def test_a_backup_name_taken_at_the_last_moment_is_not_replaced(tmp_path: Path) -> None:
    from pneuma.server.log_recovery import rename_no_replace

    earlier, damaged = tmp_path / "conversation.db.corrupt-x", tmp_path / "conversation.db"
    earlier.write_bytes(b"an earlier backup")
    damaged.write_bytes(b"the damaged log")
    with pytest.raises(FileExistsError):
        rename_no_replace(damaged, earlier)
    assert earlier.read_bytes() == b"an earlier backup"
    assert damaged.read_bytes() == b"the damaged log"
    assert os.stat(damaged).st_nlink == 1  # never a second link a start would refuse
