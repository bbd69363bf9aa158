"""Pneuma's own state under ``.pneuma/`` never follows a link (issue 23,
item 4): a shared zip, a cloned repository or the agent's shell can plant
``.pneuma/server.lock`` as a link to a file of the person's, and starting
Pneuma must neither truncate it nor write the session URL and its token
into it. Each case plants links to canary files outside the workspace and
checks the canaries afterwards, byte for byte."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest

from pneuma.checkpoints.store import Checkpoints
from pneuma.core.sandbox import Sandbox
from pneuma.core.state_files import (
    UnsafeStatePath,
    audit_state_dir,
    check_sqlite_files,
    open_state_file,
    read_state_bytes,
    write_beneath,
    write_state_bytes,
)
from pneuma.server.content_site import ContentSite
from pneuma.startup import workspace_lock
from pneuma.startup.start_checks import StartProblem, claim_workspace
from pneuma.workspace.mode_switch import remove_old_skill
from tests.pneuma_process import PNEUMA, no_server_left, start_run  # noqa: F401 (autouse)

CANARY = b"the person's own file, not Pneuma's\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the workspace holding a canary file and a canary
    SQLite database of "another application"."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "canary.txt").write_bytes(CANARY)
    db = sqlite3.connect(folder / "app.db")
    db.execute("CREATE TABLE theirs (x)")
    db.commit()
    db.close()
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".pneuma").mkdir(parents=True)
    return ws


def _unlock(ws: Path) -> None:
    workspace_lock.release(ws)


# --- at start: one line, nothing opened -------------------------------------------


@pytest.mark.parametrize("planted", [
    "server.lock", "webcraft-site.json", "conversation.db", "conversation.db-wal",
    "session.json", "config.toml", "checkpoints", "checkpoints/blobs", "sessions",
])
def test_a_link_under_pneuma_stops_the_start_with_one_line(workspace, outside, planted):
    before = _snapshot(outside)
    link = workspace / ".pneuma" / planted
    link.parent.mkdir(parents=True, exist_ok=True)
    target = outside if planted in ("checkpoints", "checkpoints/blobs", "sessions") else (
        outside / ("app.db" if planted.startswith("conversation") else "canary.txt"))
    link.symlink_to(target)
    with pytest.raises(StartProblem) as refused:
        claim_workspace(workspace, "doc", switch_mode=False, create=True)
    line = str(refused.value)
    assert "\n" not in line
    assert planted.split("/")[-1] in line and "symlink" in line and "rm " in line
    assert not workspace_lock.holds(workspace)
    assert _snapshot(outside) == before


def test_a_pneuma_folder_that_is_itself_a_link_is_refused(tmp_path, outside):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".pneuma").symlink_to(outside)
    before = _snapshot(outside)
    with pytest.raises(StartProblem, match=r"\.pneuma is a symlink"):
        claim_workspace(ws, "doc", switch_mode=False, create=True)
    assert _snapshot(outside) == before and not (outside / "server.lock").exists()


def test_a_fifo_under_pneuma_is_refused_without_hanging(workspace):
    os.mkfifo(workspace / ".pneuma" / "session.json")
    with pytest.raises(StartProblem, match="is a FIFO"):
        claim_workspace(workspace, "doc", switch_mode=False, create=True)
    with pytest.raises(UnsafeStatePath, match="FIFO"):
        read_state_bytes(workspace / ".pneuma" / "session.json")


def test_pneuma_run_names_the_link_before_any_ready_line(workspace, outside):
    (workspace / ".pneuma" / "server.lock").symlink_to(outside / "canary.txt")
    proc = start_run(workspace, "doc", "--port", "0", root_sandbox=False)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "[pneuma] ready" not in out
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pneuma: error: "), err
    assert "server.lock is a symlink" in lines[0]
    assert (outside / "canary.txt").read_bytes() == CANARY


# --- planted after the start (the agent's shell): each writer refuses or replaces ---


def test_the_lock_file_is_never_opened_through_a_link(workspace, outside):
    (workspace / ".pneuma" / "server.lock").symlink_to(outside / "canary.txt")
    with pytest.raises(UnsafeStatePath):
        workspace_lock.acquire(workspace)
    assert (outside / "canary.txt").read_bytes() == CANARY
    assert workspace_lock.holder(workspace) is None  # nor read through one


def test_the_lock_file_holding_the_url_is_the_owners_alone(workspace):
    try:
        assert workspace_lock.acquire(workspace)
        workspace_lock.record_url(workspace, "http://127.0.0.1:1/?token=secret")
        info = (workspace / ".pneuma" / "server.lock").stat()
        assert stat.S_IMODE(info.st_mode) == 0o600
    finally:
        _unlock(workspace)


async def test_the_content_sites_port_file_replaces_a_link_instead_of_writing_through(
        workspace, outside):
    port_file = workspace / ".pneuma" / "webcraft-site.json"
    port_file.symlink_to(outside / "canary.txt")
    site = ContentSite(Sandbox(workspace), lambda: "http://127.0.0.1:1", "token",
                       port_file=port_file)
    await site.start()
    try:
        assert (outside / "canary.txt").read_bytes() == CANARY
        assert not port_file.is_symlink()
        assert json.loads(port_file.read_text())["port"] == site.port
    finally:
        await site.stop()


def test_the_checkpoint_store_keeps_no_blob_outside(workspace, outside):
    (workspace / "a.txt").write_text("one")
    store = Checkpoints(workspace)
    store.record("first")
    blobs = workspace / ".pneuma" / "checkpoints" / "blobs"
    for sub in list(blobs.iterdir()):
        for blob in sub.iterdir():
            blob.unlink()
        sub.rmdir()
    blobs.rmdir()
    blobs.symlink_to(outside)
    before = _snapshot(outside)
    (workspace / "a.txt").write_text("two")
    with pytest.raises(UnsafeStatePath, match="blobs is a symlink"):
        store.record("second")
    assert _snapshot(outside) == before


def test_a_blob_that_is_a_link_is_never_read(workspace, outside):
    (workspace / "a.txt").write_text("one")
    store = Checkpoints(workspace)
    first = store.record("first")
    digest = first.files["a.txt"].hash
    blob = store.blobs.path(digest)
    blob.unlink()
    blob.symlink_to(outside / "canary.txt")
    assert not store.blobs.has(digest)
    with pytest.raises(OSError):
        store.blobs.get(digest)


@pytest.mark.parametrize("side", ["", "-wal", "-shm", "-journal"])
def test_a_database_or_its_side_file_as_a_link_is_refused(workspace, outside, side):
    db = workspace / ".pneuma" / "conversation.db"
    (workspace / ".pneuma" / f"conversation.db{side}").symlink_to(outside / "app.db")
    before = _snapshot(outside)
    with pytest.raises(UnsafeStatePath, match="symlink"):
        check_sqlite_files(db)
    assert _snapshot(outside) == before


def test_a_hard_link_to_a_file_outside_is_not_written(workspace, outside):
    os.link(outside / "canary.txt", workspace / ".pneuma" / "server.lock")
    with pytest.raises(UnsafeStatePath, match="hard links"):
        open_state_file(workspace / ".pneuma" / "server.lock", os.O_RDWR | os.O_CREAT)
    assert (outside / "canary.txt").read_bytes() == CANARY


def test_state_written_replaces_a_link_and_is_private(workspace, outside):
    path = workspace / ".pneuma" / "session.json"
    path.symlink_to(outside / "canary.txt")
    write_state_bytes(path, b"{}")
    assert (outside / "canary.txt").read_bytes() == CANARY
    assert path.read_bytes() == b"{}" and not path.is_symlink()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_new_pneuma_folder_is_the_owners_alone(tmp_path):
    ws = tmp_path / "fresh"
    ws.mkdir()
    write_state_bytes(ws / ".pneuma" / "checkpoints" / "lock", b"")
    assert stat.S_IMODE((ws / ".pneuma").stat().st_mode) == 0o700
    assert stat.S_IMODE((ws / ".pneuma" / "checkpoints").stat().st_mode) == 0o700


def test_the_audit_passes_a_healthy_state_folder(workspace):
    (workspace / ".pneuma" / "checkpoints" / "blobs" / "ab").mkdir(parents=True)
    (workspace / ".pneuma" / "checkpoints" / "blobs" / "ab" / ("c" * 62)).write_bytes(b"x")
    (workspace / ".pneuma" / "session.json").write_text("{}")
    audit_state_dir(workspace)


# --- the skill installer and a mode switch, outside .pneuma/ ------------------------


def test_the_skill_installer_never_writes_through_a_linked_claude_folder(workspace, outside):
    (workspace / ".claude").symlink_to(outside)
    before = _snapshot(outside)
    with pytest.raises(UnsafeStatePath):
        write_beneath(workspace, ".claude/commands/polish.md", b"# polish\n")
    assert _snapshot(outside) == before


def test_a_mode_switch_never_deletes_a_skill_through_a_linked_claude_folder(
        workspace, outside):
    (outside / "skills" / "pneuma-doc").mkdir(parents=True)
    (outside / "skills" / "pneuma-doc" / "SKILL.md").write_text("the person's own skill")
    (workspace / ".claude").symlink_to(outside)
    (workspace / ".pneuma" / "installed.json").write_text(
        json.dumps({"skill": ".claude/skills/pneuma-doc"}))
    remove_old_skill(workspace)
    assert (outside / "skills" / "pneuma-doc" / "SKILL.md").read_text() == \
        "the person's own skill"


def test_pneuma_skill_install_refuses_a_linked_claude_folder_in_one_line(workspace, outside):
    (workspace / ".claude").symlink_to(outside)
    before = _snapshot(outside)
    done = subprocess.run([PNEUMA, "skill", "install", "--mode", "doc", "-w",
                           str(workspace)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert ".claude is a symlink" in done.stderr
    assert _snapshot(outside) == before


def test_the_conversation_log_is_never_opened_through_a_linked_side_file(workspace, outside):
    from pneuma.server.conversation_log import ConversationLog

    (workspace / ".pneuma" / "conversation.db-wal").symlink_to(outside / "app.db")
    before = _snapshot(outside)
    with pytest.raises(UnsafeStatePath, match="conversation.db-wal is a symlink"):
        ConversationLog.open(workspace / ".pneuma")
    assert _snapshot(outside) == before
