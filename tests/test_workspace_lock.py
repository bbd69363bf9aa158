"""A workspace belongs to one `pneuma run` and one mode: a second server on
it is refused with the URL of the first, and another mode only with
--switch-mode, which keeps the first mode's conversation resumable."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from tests.pneuma_process import no_server_left, start_run  # noqa: F401 (autouse fixture)


def _run(workspace: Path, mode: str, *extra: str) -> subprocess.Popen:
    return start_run(workspace, mode, "--port", "0", *extra, plugins="slide,doc")


def _ready(proc: subprocess.Popen) -> str:
    line = proc.stdout.readline()
    assert line.startswith("[pneuma] ready "), (line, proc.stderr.read() if proc.poll() else "")
    return line.split("ready ", 1)[1].strip()


def _stop(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    return err


def _session(url: str) -> str:
    return url.split("session=")[1].split("&")[0]


def _state(workspace: Path, *, session: bool = True) -> dict[str, bytes]:
    """What another mode's start would rewrite (and, with ``session``, the
    stored conversation, which a running server itself may save)."""
    files = ["CLAUDE.md", ".pneuma/installed.json", ".pneuma/config.toml"]
    if session:
        files.append(".pneuma/session.json")
    return {rel: (workspace / rel).read_bytes() for rel in files if (workspace / rel).exists()}


def test_a_second_run_on_a_served_workspace_names_the_url_and_exits_2(tmp_path):
    workspace = tmp_path / "deck"
    first = _run(workspace, "slide")
    try:
        url = _ready(first)
        before = _state(workspace, session=False)
        for mode in ("slide", "doc"):
            second = _run(workspace, mode)
            out, err = second.communicate(timeout=30)
            assert second.returncode == 2, err
            assert "[pneuma] ready" not in out
            assert url in err and "already served" in err, err
        assert _state(workspace, session=False) == before  # nothing rewritten
    finally:
        _stop(first)
    # Once the first has stopped, the workspace is free again.
    again = _run(workspace, "slide")
    assert _session(_ready(again)) == _session(url)
    _stop(again)


def test_another_mode_needs_switch_mode_which_keeps_the_conversation(tmp_path):
    workspace = tmp_path / "deck"
    proc = _run(workspace, "slide")
    slide_session = _session(_ready(proc))
    _stop(proc)
    before = _state(workspace)

    refused = _run(workspace, "doc")
    out, err = refused.communicate(timeout=30)
    assert refused.returncode == 2
    assert "[pneuma] ready" not in out
    assert "slide workspace" in err and "--switch-mode" in err, err
    assert _state(workspace) == before

    proc = _run(workspace, "doc", "--switch-mode")
    doc_session = _session(_ready(proc))
    err = _stop(proc)
    assert doc_session != slide_session
    assert "switched" in err
    assert not (workspace / ".claude" / "skills" / "pneuma-slide").exists()  # no stale skill

    proc = _run(workspace, "slide", "--switch-mode")
    assert _session(_ready(proc)) == slide_session  # the slide conversation resumes
    _stop(proc)
    assert (workspace / ".claude" / "skills" / "pneuma-slide").is_dir()
