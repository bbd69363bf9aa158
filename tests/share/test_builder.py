"""A shared file holds each turn's files as the checkpoints kept them, the
conversation without its secrets, and stays under its size cap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pneuma.checkpoints.store import Checkpoints
from pneuma.core.errors import ToolError
from pneuma.share.builder import ShareOptions, write_share
from pneuma.share.model import read_share_file
from pneuma.testing.slide_session import SLIDE_WATCH, make_slide_session

API_KEY = "sk-ant-api03-Pl4ntedKeyOfTheConversation0123456789"
SESSION_TOKEN = "session-tok3n-9f8e7d6c5b4a"
ENV_VALUE = "https://intranet.example/very-private-value"


def _watched(files: dict[str, bytes]) -> dict[str, bytes]:
    test = Checkpoints(Path("/nonexistent"), SLIDE_WATCH).watched
    return {path: data for path, data in files.items() if test(path)}


def test_the_files_at_every_turn_are_what_the_checkpoint_held(tmp_path: Path) -> None:
    session = make_slide_session(tmp_path / "deck", 4)
    shared = write_share(session.workspace)
    data = read_share_file(shared.path)
    assert [t.ref for t in data.turns] == ["1", "2", "3", "4"]
    for number, written in enumerate(session.after, start=1):
        assert data.files_at(number) == _watched(written), f"turn {number}"
    assert data.files_at(0) == {}  # the deck did not exist before turn 1
    # Each content once: 5 slides never change but one a turn, plus manifest and theme.
    unique = {content for files in session.after for content in _watched(files).values()}
    assert len(data.files) == len(unique)
    assert data.turns[1].source == "mode"
    assert [c["where"]["en"] for c in data.turns[1].changes] == ["Slide 2"]


def test_no_secret_of_the_conversation_reaches_the_file(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PNEUMA_TEST_PRIVATE_URL", ENV_VALUE)
    session = make_slide_session(
        tmp_path / "deck", 2, planted=f"use {API_KEY} with Bearer {SESSION_TOKEN}x",
        answer_extra=f"I read /home/alice/notes.txt, {SESSION_TOKEN} and {ENV_VALUE}.")
    (session.workspace / "assets").mkdir(exist_ok=True)
    (session.workspace / "assets" / "deploy.env").write_text(f"KEY={API_KEY}\n")
    Checkpoints(session.workspace, SLIDE_WATCH).record("one more", conversation=session.conversation_id)
    shared = write_share(session.workspace, options=ShareOptions(secrets=[SESSION_TOKEN]))
    text = shared.path.read_text(encoding="utf-8")
    # The conversation's title is its first message cut short: no part of the key either.
    for secret in (API_KEY, API_KEY[:20], SESSION_TOKEN, ENV_VALUE, "/home/alice",
                   "secret thoughts", str(session.workspace)):
        assert secret not in text, secret
    data = read_share_file(shared.path)
    assert "Turn 1: retitle slide 1." in data.conversation[0].text
    assert "~/notes.txt" in data.conversation[1].text
    assert data.conversation[1].tools[0].name == "Edit"
    assert data.conversation[1].tools[0].summary == "slides/s.html"
    assert {"path": "assets/deploy.env", "reason": "a file that holds keys by custom"} in data.left_out


def test_no_chat_and_no_history(tmp_path: Path) -> None:
    session = make_slide_session(tmp_path / "deck", 3, planted="a remark only the chat has")
    quiet = read_share_file(write_share(
        session.workspace, tmp_path / "quiet.html",
        ShareOptions(chat=False, history=False)).path)
    assert quiet.conversation == []
    assert "a remark only the chat has" not in (tmp_path / "quiet.html").read_text()
    assert [t.ref for t in quiet.turns] == ["3"]
    assert quiet.start == {}
    assert quiet.files_at() == _watched(session.after[-1])
    assert len(quiet.files) == len(_watched(session.after[-1]))


def test_over_the_cap_the_error_names_what_is_big_and_the_way_out(tmp_path: Path) -> None:
    session = make_slide_session(tmp_path / "deck", 2, asset_bytes=400_000)
    small = write_share(session.workspace, tmp_path / "small.html",
                        ShareOptions(leave_out=["assets/**"]))
    assert {"path": "assets/film.bin", "reason": "--leave-out"} in small.left_out
    cap = small.size + 100_000
    with pytest.raises(ToolError) as caught:
        write_share(session.workspace, tmp_path / "big.html", ShareOptions(max_bytes=cap))
    error = caught.value
    assert error.code == "E_TOO_LARGE"
    assert "assets/film.bin" in error.message and "turn 1" in error.message
    assert "--no-history" in error.message and "--leave-out" in error.message
    assert not (tmp_path / "big.html").exists()
    fits = write_share(session.workspace, tmp_path / "fits.html",
                       ShareOptions(max_bytes=cap, leave_out=["*.bin"]))
    assert fits.size <= cap


def test_a_conversation_the_workspace_does_not_have_is_not_found(tmp_path: Path) -> None:
    session = make_slide_session(tmp_path / "deck", 1)
    with pytest.raises(ToolError) as caught:
        write_share(session.workspace, options=ShareOptions(conversation="nope"))
    assert caught.value.code == "E_NOT_FOUND"


def test_pneuma_s_own_files_and_the_agent_s_instructions_never_go(tmp_path: Path) -> None:
    """A mode that watches everything: still no .pneuma/, CLAUDE.md, .claude/,
    .mcp.json, earlier exports or key files in the shared file."""
    workspace = tmp_path / "site"
    (workspace / ".claude").mkdir(parents=True)
    (workspace / "exports").mkdir()
    for path, text in {"index.html": "<h1>Hi</h1>", "CLAUDE.md": "instructions",
                       ".claude/settings.json": "{}", ".mcp.json": "{}", "AGENTS.md": "x",
                       "exports/old-share.html": "old", "id_rsa": "KEY"}.items():
        (workspace / path).write_text(text, encoding="utf-8")
    store = Checkpoints(workspace, ["**/*"])
    store.record("make the page")
    (workspace / "index.html").write_text("<h1>Hello</h1>", encoding="utf-8")
    store.turn_ended()
    data = read_share_file(write_share(workspace, tmp_path / "s.html",
                                       ShareOptions(mode="webcraft")).path)
    assert data.files_at() == {"index.html": b"<h1>Hello</h1>"}
    assert data.files_at(0) == {"index.html": b"<h1>Hi</h1>"}
    assert [entry["path"] for entry in data.left_out] == ["id_rsa"]


def test_a_workspace_without_turns_is_shared_as_the_mode_watches_it_now(tmp_path: Path) -> None:
    workspace = tmp_path / "notes"
    workspace.mkdir()
    (workspace / "raw-data.csv").write_text("a,b\n1,2\n")  # not a file the doc mode shows
    (workspace / "intro.md").write_text("# Intro\n")
    data = read_share_file(write_share(workspace, tmp_path / "n.html",
                                       ShareOptions(mode="doc")).path)
    assert data.turns == [] and data.conversation == []
    assert data.files_at() == {"intro.md": b"# Intro\n"}


def test_only_the_shared_conversation_s_turns_are_on_the_timeline(tmp_path: Path) -> None:
    session = make_slide_session(tmp_path / "deck", 2)
    store = Checkpoints(session.workspace, SLIDE_WATCH)
    store.record("a turn of another conversation", conversation="another")
    (session.workspace / "theme.css").write_text(".slide { color: red; }\n")
    store.turn_ended()
    data = read_share_file(write_share(session.workspace, tmp_path / "s.html").path)
    assert [t.ref for t in data.turns] == ["1", "2"]
    assert data.conversation_id == session.conversation_id


def test_the_agent_s_messages_of_a_turn_are_one_and_a_subagent_s_stay_out() -> None:
    from pneuma.share.conversation import shared_messages

    def said(text: str, parent: str | None = None,
             tool: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        blocks = [{"type": "text", "text": text}] + ([tool] if tool else [])
        return "assistant", {"type": "assistant", "parent_tool_use_id": parent,
                             "message": {"content": blocks}}

    rows = [("user_message", {"content": "make it", "timestamp": 2.5}),
            said("Looking.", tool={"type": "tool_use", "name": "Bash",
                                   "input": {"command": "ls -la\n  slides"}}),
            said("inner work of a subagent", parent="tu_1"),
            said("Done.")]
    shared = shared_messages(rows, lambda text: text)
    assert [(m.role, m.text, m.at) for m in shared] == [
        ("user", "make it", 2500), ("assistant", "Looking.\n\nDone.", 2500)]
    assert [(t.name, t.summary) for t in shared[1].tools] == [("Bash", "ls -la slides")]
