"""Each backend resumes its own conversation, whatever ran in between, and
a look (``--backend none``) adds no conversation (issue 25, item 19)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path

from pneuma.server.persistence import load_session, peek_session_id, save_session
from tests.pneuma_process import no_server_left, start_run  # noqa: F401 (autouse fixture)


def _save(workspace: Path, session_id: str, backend: str, agent: str | None,
          conversation: str | None = None) -> None:
    save_session(workspace, session_id=session_id, mode="slide", backend=backend,
                 agent_session_id=agent, last_seq=7, conversation_id=conversation)


def test_a_backend_resumes_its_own_session_after_another_ran(tmp_path: Path) -> None:
    _save(tmp_path, "s-claude", "claude-code", "cli-1")
    codex = load_session(tmp_path, "slide", "codex")
    assert codex.session_id != "s-claude" and not codex.resumed
    _save(tmp_path, codex.session_id, "codex", "thread-1")
    claude = load_session(tmp_path, "slide", "claude-code")
    assert (claude.session_id, claude.agent_session_id, claude.resumed) == (
        "s-claude", "cli-1", True)
    assert peek_session_id(tmp_path, "slide", "claude-code") == ("s-claude", True)
    _save(tmp_path, "s-claude", "claude-code", "cli-2", conversation="c-7")
    again = load_session(tmp_path, "slide", "codex")
    assert (again.session_id, again.agent_session_id) == (codex.session_id, "thread-1")
    claude = load_session(tmp_path, "slide", "claude-code")
    assert (claude.agent_session_id, claude.conversation_id) == ("cli-2", "c-7")


def test_a_look_resumes_what_ran_last_and_changes_no_backends_own(tmp_path: Path) -> None:
    _save(tmp_path, "s-claude", "claude-code", "cli-1")
    look = load_session(tmp_path, "slide", "none")
    assert (look.session_id, look.resumed) == ("s-claude", True)
    _save(tmp_path, look.session_id, "none", look.agent_session_id)
    assert load_session(tmp_path, "slide", "claude-code").agent_session_id == "cli-1"
    assert not load_session(tmp_path, "slide", "codex").resumed


def test_a_first_look_is_taken_over_by_the_first_backend(tmp_path: Path) -> None:
    look = load_session(tmp_path, "slide", "none")
    assert not look.resumed
    _save(tmp_path, look.session_id, "none", None)
    claude = load_session(tmp_path, "slide", "claude-code")
    assert (claude.session_id, claude.resumed) == (look.session_id, True)


def test_another_modes_sessions_are_not_kept(tmp_path: Path) -> None:
    save_session(tmp_path, session_id="d1", mode="doc", backend="codex",
                 agent_session_id="t", last_seq=1)
    _save(tmp_path, "s1", "claude-code", "cli-1")
    meta = json.loads((tmp_path / ".pneuma" / "session.json").read_text())
    assert "byBackend" not in meta


def _ready_session(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"[?&]session=([^&\s]+)", line)
    assert found, (line, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
    return found.group(1)


def _run_once(workspace: Path, backend: str) -> str:
    proc = start_run(workspace, "slide", "--port", "0", "--backend", backend)
    session = _ready_session(proc)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    return session


def test_real_runs_resume_per_backend_and_looks_add_no_conversation(tmp_path: Path) -> None:
    workspace = tmp_path / "deck"
    first_look = _run_once(workspace, "none")
    socket = _run_once(workspace, "socket")
    assert socket == first_look  # the look's empty conversation is taken over
    assert _run_once(workspace, "none") == socket
    assert _run_once(workspace, "socket") == socket
