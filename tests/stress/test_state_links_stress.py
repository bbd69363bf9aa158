"""Issue 23, item 4 under stress: ``.pneuma/`` entries replaced by links to
canary files and folders outside the workspace, by hard links and by
FIFOs, planted before a start (refused in one line, within 2 s) and while
a real ``pneuma run`` serves the workspace and then stops (the canaries
never change)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
import urllib.request
from pathlib import Path

import pytest

from pneuma.startup import workspace_lock
from pneuma.startup.start_checks import StartProblem, claim_workspace
from tests.pneuma_process import no_server_left, start_run  # noqa: F401 (autouse fixture)
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

# Every file and folder Pneuma or a built-in mode keeps under .pneuma/.
STATE_NAMES = (
    "server.lock", "session.json", "seq.json", "conversation.db", "conversation.db-wal",
    "conversation.db-shm", "config.toml", "installed.json", "skill-version.json",
    "install-fingerprint.json", "launch-stamp.json", "webcraft-site.json",
    "webgal-engine.json", "headless-webgal.json", "headless-webgal.log", "native.sqlite3",
    "checkpoints", "checkpoints/lock", "checkpoints/manifests", "checkpoints/blobs",
    "checkpoints/agent-note.txt", "checkpoints/chat-notices.jsonl", "sessions", "captures",
    "artifacts", "coauthor",
)
PLANTS = ("link to a file", "link to a folder", "dangling link", "hard link", "FIFO")
CANARY = b"canary: the person's own bytes\n"
LIVE_ROUNDS = 3
MAX_WAIT = 2.0  # seconds a refusal may take


def _canaries(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "canary.txt").write_bytes(CANARY)
    (outside / "folder" / "inside.txt").write_bytes(CANARY)
    db = sqlite3.connect(outside / "app.db")
    db.execute("CREATE TABLE theirs (x)")
    db.commit()
    db.close()
    return outside


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mode)
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


def _plant(entry: Path, how: str, outside: Path) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    if how == "link to a file":
        entry.symlink_to(outside / ("app.db" if ".db" in entry.name or "sqlite" in entry.name
                                    else "canary.txt"))
    elif how == "link to a folder":
        entry.symlink_to(outside / "folder")
    elif how == "dangling link":
        entry.symlink_to(outside / "not-there-yet")
    elif how == "hard link":
        os.link(outside / "canary.txt", entry)
    else:
        os.mkfifo(entry)


def test_every_planted_state_entry_is_refused_before_anything_opens_it(tmp_path):
    outside = _canaries(tmp_path)
    before = _snapshot(outside)
    tried = refused = 0
    slowest = 0.0
    for number, (name, how) in enumerate((n, h) for n in STATE_NAMES for h in PLANTS):
        if how == "hard link" and "/" not in name and name in ("checkpoints", "sessions",
                                                                "captures", "artifacts",
                                                                "coauthor"):
            continue  # a folder cannot be a hard link
        workspace = tmp_path / f"ws{number}"
        (workspace / ".pneuma").mkdir(parents=True)
        _plant(workspace / ".pneuma" / name, how, outside)
        tried += 1
        started = time.monotonic()
        try:
            claim_workspace(workspace, "doc", switch_mode=False, create=True)
        except StartProblem as problem:
            refused += 1
            assert "\n" not in str(problem)
        finally:
            workspace_lock.release(workspace)
        slowest = max(slowest, time.monotonic() - started)
    assert not (outside / "not-there-yet").exists()
    assert _snapshot(outside) == before
    record("23.4 .pneuma links", f"{count(tried)} plants before a start ({len(STATE_NAMES)} "
           f"entries × {len(PLANTS)} kinds): {count(refused)} refused in one line, slowest "
           f"{slowest:.2f} s, 0 canary files changed")
    assert refused == tried
    assert slowest < MAX_WAIT


def _post(url: str, path: str, body: dict, token: str) -> int:
    request = urllib.request.Request(
        f"{url}{path}", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_links_planted_while_pneuma_runs_never_carry_a_write_outside(tmp_path):
    outside = _canaries(tmp_path)
    before = _snapshot(outside)
    replaced = 0
    for round_number in range(LIVE_ROUNDS):
        workspace = tmp_path / f"live{round_number}"
        proc = start_run(workspace, "doc", "--port", "0", root_sandbox=False)
        line = proc.stdout.readline()
        assert line.startswith("[pneuma] ready "), proc.communicate(timeout=20)
        url = line.split()[2]
        base = url.split("/?")[0]
        token = url.split("token=")[1].split("&")[0]
        state = workspace / ".pneuma"
        for entry in sorted(state.iterdir()):
            if entry.is_file() and not entry.name.startswith("conversation.db"):
                entry.unlink()
                _plant(entry, "link to a file", outside)
                replaced += 1
        for name in ("captures", "checkpoints/blobs/00"):
            _plant(state / name, "link to a folder", outside)
            replaced += 1
        # Writes that reach state files: a file through the API (the watcher,
        # a capture), then the stop, which saves the session.
        assert _post(base, "/api/files", {"path": "notes.md", "content": "# hello\n"},
                     token) == 200
        assert _post(base, "/api/captures", {"name": "shot", "data": "data:image/png;base64,"
                                     "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42"
                                     "mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="}, token) == 403
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert "Traceback" not in err, err
    assert _snapshot(outside) == before
    record("23.4 .pneuma links", f"{LIVE_ROUNDS} live `pneuma run`s with {count(replaced)} state "
           "entries swapped for links mid-run, a write and a capture, then a stop: 0 canary "
           "files changed")
