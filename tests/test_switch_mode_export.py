"""A slide workspace switched to another mode and back (``--switch-mode``
both ways) is the deck it was: `pneuma export` gives the same file, no doc
instructions are left in CLAUDE.md, skills or commands, and the slide
conversation resumes. While it is switched, `pneuma export` says in one
line what is wrong. The parked conversation includes its SQLite log."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp

from pneuma.workspace.mode_switch import switch_sessions
from tests.pneuma_process import PNEUMA, no_server_left, start_run  # noqa: F401 (autouse fixture)


def _start(workspace: Path, mode: str, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """``pneuma run`` up to its ready line; the process and the URL."""
    proc = start_run(workspace, mode, "--port", "0", *extra, plugins="slide,doc")
    line = proc.stdout.readline()
    assert line.startswith("[pneuma] ready "), (line, proc.stderr.read() if proc.poll() else "")
    return proc, line.split("ready ", 1)[1].strip()


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err


def _session(url: str) -> str:
    return parse_qs(urlsplit(url).query)["session"][0]


def _served_once(workspace: Path, mode: str, *extra: str) -> str:
    """Run ``pneuma run`` until its ready line, stop it; the session id."""
    proc, url = _start(workspace, mode, *extra)
    _stop(proc)
    return _session(url)


def _export(workspace: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PNEUMA, "export", "-w", str(workspace), "--format", "html", *extra],
                          capture_output=True, text=True, timeout=60, check=False)


def _agent_files(workspace: Path) -> dict[str, bytes]:
    """What the agent reads about its mode: CLAUDE.md and all of .claude/."""
    files = {"CLAUDE.md": (workspace / "CLAUDE.md").read_bytes()}
    for path in sorted((workspace / ".claude").rglob("*")):
        if path.is_file():
            files[path.relative_to(workspace).as_posix()] = path.read_bytes()
    return files


def test_a_deck_switched_to_doc_and_back_exports_the_same_deck(tmp_path):
    workspace = tmp_path / "deck"
    slide_session = _served_once(workspace, "slide")
    before = _export(workspace, "-o", str(tmp_path / "before.html"))
    assert before.returncode == 0, before.stderr
    agent_files = _agent_files(workspace)

    doc_session = _served_once(workspace, "doc", "--switch-mode")
    assert doc_session != slide_session
    # Switched: export says what is wrong and how to get the deck, in one line.
    switched = _export(workspace, "-o", str(tmp_path / "switched.html"))
    assert switched.returncode == 2
    assert switched.stderr.startswith("pneuma: error: ")
    assert switched.stderr.count("\n") == 1, switched.stderr
    assert "doc mode" in switched.stderr and "--switch-mode" in switched.stderr
    assert not (tmp_path / "switched.html").exists()

    assert _served_once(workspace, "slide", "--switch-mode") == slide_session  # resumes
    after = _export(workspace, "-o", str(tmp_path / "after.html"))
    assert after.returncode == 0, after.stderr
    assert after.stderr.startswith("[pneuma] exported 8 slide(s)")
    assert "warning" not in after.stderr
    assert (tmp_path / "after.html").read_bytes() == (tmp_path / "before.html").read_bytes()
    # No doc skill, doc commands or doc sections left for the agent to read.
    assert _agent_files(workspace) == agent_files


def test_export_to_a_place_that_cannot_be_written_is_one_error_line(tmp_path):
    workspace = tmp_path / "deck"
    _served_once(workspace, "slide")
    (tmp_path / "a-file").write_text("not a folder")
    proc = _export(workspace, "-o", str(tmp_path / "a-file" / "deck.html"))
    assert proc.returncode == 1
    assert proc.stderr.startswith("pneuma: error: ") and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "a-file" in proc.stderr


async def _tab(url: str, say: str | None = None) -> list[str]:
    """A browser tab on the run at ``url``: the user messages its history
    shows; then it says ``say`` (answered, with no agent, by an error)."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    ws_url = (f"ws://{parts.netloc}/ws/browser/{query['session'][0]}"
              f"?token={query['token'][0]}&last_seq=0")
    shown: list[str] = []
    async with aiohttp.ClientSession() as http, http.ws_connect(ws_url) as ws:
        async def until(done: Callable[[dict[str, Any]], bool]) -> None:
            while True:
                frame = await ws.receive(timeout=15)
                assert frame.type == aiohttp.WSMsgType.TEXT, frame
                for line in filter(str.strip, frame.data.split("\n")):
                    message = json.loads(line)
                    if message["type"] == "message_history":
                        shown.extend(m["content"] for m in message["messages"]
                                     if m.get("type") == "user_message")
                    if done(message):
                        return

        # The greeting ends with the status, which carries no seq.
        await until(lambda m: m["type"] == "status_change" and "seq" not in m)
        if say is not None:
            await ws.send_str(json.dumps({"type": "user_message", "content": say,
                                          "client_msg_id": say}))
            await until(lambda m: m["type"] == "error" and m.get("code") == "no_agent")
    return shown


async def test_each_mode_gets_its_own_conversation_back(tmp_path):
    workspace = tmp_path / "deck"
    proc, url = _start(workspace, "slide")
    assert await _tab(url, "make me a deck") == []
    _stop(proc)

    proc, url = _start(workspace, "doc", "--switch-mode")
    assert await _tab(url, "write me a doc") == []  # a fresh conversation
    _stop(proc)

    proc, url = _start(workspace, "slide", "--switch-mode")
    assert await _tab(url) == ["make me a deck"]
    _stop(proc)

    proc, url = _start(workspace, "doc", "--switch-mode")
    assert await _tab(url) == ["write me a doc"]
    _stop(proc)


# --- the conversation log parked with its mode ------------------------------------------

_CRASHED_WRITER = """
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA wal_autocheckpoint=0")
db.execute("CREATE TABLE IF NOT EXISTS messages (text TEXT)")
db.execute("INSERT INTO messages VALUES (?)", (sys.argv[2],))
db.commit()
os._exit(0)  # killed before closing: the message is only in the -wal
"""


def _write_conversation(workspace: Path, mode: str, text: str) -> None:
    """What a `pneuma run` of ``mode`` leaves when killed: its session.json
    and a conversation.db whose last message is still in the -wal."""
    state = workspace / ".pneuma"
    state.mkdir(parents=True, exist_ok=True)
    (state / "session.json").write_text(f'{{"sessionId": "{mode}-1", "mode": "{mode}"}}')
    subprocess.run([sys.executable, "-c", _CRASHED_WRITER, str(state / "conversation.db"), text],
                   check=True, timeout=30)


def _conversation(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT text FROM messages")]


def test_a_parked_conversation_db_comes_back_on_switching_back(tmp_path):
    workspace = tmp_path / "deck"
    state = workspace / ".pneuma"
    _write_conversation(workspace, "slide", "make me a deck")
    assert (state / "conversation.db-wal").exists()  # the crash left it

    assert switch_sessions(workspace, "doc") == "slide"
    # The doc run starts afresh: nothing of the slide conversation is left
    # where it would open (or append to) its log.
    assert sorted(p.name for p in state.glob("conversation.db*")) == []
    _write_conversation(workspace, "doc", "write me a doc")

    assert switch_sessions(workspace, "slide") == "doc"
    assert _conversation(state / "conversation.db") == ["make me a deck"]
    assert _conversation(workspace / ".pneuma/sessions/doc/conversation.db") == ["write me a doc"]
    assert switch_sessions(workspace, "doc") == "slide"
    assert _conversation(state / "conversation.db") == ["write me a doc"]


def test_parking_never_leaves_a_stale_wal_beside_another_database(tmp_path):
    workspace = tmp_path / "deck"
    state = workspace / ".pneuma"
    _write_conversation(workspace, "slide", "make me a deck")
    parked = workspace / ".pneuma/sessions/slide"
    parked.mkdir(parents=True)
    # Left in the parked folder by an earlier switch a crash cut short.
    (parked / "conversation.db-wal").write_bytes(b"from another database")
    for side in ("conversation.db-wal", "conversation.db-shm"):
        (state / side).unlink()  # this time the log was closed cleanly
    switch_sessions(workspace, "doc")
    assert sorted(p.name for p in parked.iterdir()) == ["conversation.db", "session.json"]
