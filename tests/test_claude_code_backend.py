"""The Claude Code backend against a fake CLI (tests/fakes/fake_claude.py).

Each test drives ``ClaudeCodeBackend`` the way a session does and checks
what the browser would be sent (the recording sink) and what the CLI was
given (its argv and stdin lines, logged by the fake).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pneuma.agents import claude_code
from pneuma.agents.claude_code import ClaudeCodeBackend, find_claude_binary
from pneuma.core.backend import BackendOptions
from tests.fakes.sink import RecordingSink

FAKE_CLI = Path(__file__).parent / "fakes" / "fake_claude.py"


class FakeCLI:
    """Paths and logs of one fake CLI installation."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin" / "claude"
        self.bin.parent.mkdir()
        self.bin.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLI}" "$@"\n')
        self.bin.chmod(self.bin.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        self.log = root / "cli-log.jsonl"
        self.state = root / "sessions"
        self.state.mkdir()
        self.workspace = root / "ws"
        self.workspace.mkdir()

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def starts(self) -> list[dict[str, Any]]:
        return [e for e in self.entries() if "argv" in e]

    def stdin(self, kind: str | None = None) -> list[dict[str, Any]]:
        lines = [e["stdin"] for e in self.entries() if "stdin" in e]
        return [m for m in lines if kind is None or m.get("type") == kind]

    def controls(self, subtype: str) -> list[dict[str, Any]]:
        return [m for m in self.stdin("control_request") if m["request"]["subtype"] == subtype]


@pytest.fixture
def fake(tmp_path: Path) -> FakeCLI:
    return FakeCLI(tmp_path)


def make_mode(permission_mode: str = "bypassPermissions") -> Any:
    return SimpleNamespace(
        name="doc", manifest=SimpleNamespace(agent=SimpleNamespace(permission_mode=permission_mode))
    )


@pytest.fixture
def make_backend(fake: FakeCLI):
    def make(**overrides: Any) -> tuple[ClaudeCodeBackend, RecordingSink]:
        extra_env = {"FAKE_CLAUDE_LOG": str(fake.log), "FAKE_CLAUDE_STATE": str(fake.state)}
        extra_env.update(overrides.pop("extra_env", {}))
        options = BackendOptions(
            workspace=fake.workspace,
            mode=overrides.pop("mode", make_mode()),
            api_url="http://127.0.0.1:17007",
            token="tok-123",
            session_id="sess-abc",
            claude_bin=overrides.pop("claude_bin", str(fake.bin)),
            extra_env=extra_env,
            **overrides,
        )
        sink = RecordingSink()
        return ClaudeCodeBackend(options, sink), sink

    return make


@pytest.fixture
async def cleanup():
    backends: list[ClaudeCodeBackend] = []
    yield backends.append
    for backend in backends:
        await backend.stop()


async def started(make_backend, cleanup, **overrides: Any) -> tuple[ClaudeCodeBackend, RecordingSink]:
    backend, sink = make_backend(**overrides)
    cleanup(backend)
    await backend.start()
    return backend, sink


# -- one turn ------------------------------------------------------------------


async def test_a_turn_maps_every_cli_message(make_backend, cleanup, fake, monkeypatch):
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
    backend, sink = await started(make_backend, cleanup, extra_env={"FAKE_EXTRA": "yes"})
    assert fake.starts() == [], "the CLI starts lazily, on the first message"

    await backend.send_user_message("say hello", [])
    result = await sink.wait_type("result")

    kinds = [e["type"] for e in sink.events]
    assert sink.events[:2] == [{"type": "cli_connected"}, {"type": "status_change", "status": "running"}]
    assert kinds.index("session_update") < kinds.index("stream_event") < kinds.index("assistant")
    assert kinds.index("assistant") < kinds.index("result")
    assert sink.events[-1] == {"type": "status_change", "status": "idle"}
    assert {"type": "status_change", "status": "running"} in sink.events

    update = sink.of("session_update")[0]["updates"]
    assert update["model"] == "claude-fake-model"
    assert update["permission_mode"] == "bypassPermissions"
    assert update["cwd"] == str(fake.workspace)
    assert update["tools"] == ["Bash", "Read", "Write", "Edit"]
    assert update["slash_commands"] == ["compact", "review"]
    session_id = sink.agent_session_ids[-1]
    assert session_id and backend.agent_session_id == session_id
    assert sink.state["model"] == "claude-fake-model"
    assert sink.state["commands"] == ["compact", "review"]  # from the initialize answer

    assert sink.text_deltas() == "Hello from the fake CLI!"
    assert all(e["parent_tool_use_id"] is None for e in sink.of("stream_event"))
    (assistant,) = sink.of("assistant")
    assert assistant["message"]["content"] == [{"type": "text", "text": "Hello from the fake CLI!"}]
    assert result["data"] == {
        "subtype": "success",
        "is_error": False,
        "duration_ms": 12,
        "num_turns": 1,
        "total_cost_usd": 0.00014,
        "result": "Hello from the fake CLI!",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }

    (start,) = fake.starts()
    argv = start["argv"]
    assert argv[:1] == ["--print"]
    for pair in (["--input-format", "stream-json"], ["--output-format", "stream-json"],
                 ["--permission-mode", "bypassPermissions"], ["--permission-prompt-tool", "stdio"]):
        i = argv.index(pair[0])
        assert argv[i : i + 2] == pair
    assert "--include-partial-messages" in argv and "--verbose" in argv
    assert "--resume" not in argv and "--model" not in argv
    assert start["cwd"] == str(fake.workspace)
    assert start["env"] == {
        "PNEUMA_API": "http://127.0.0.1:17007",
        "PNEUMA_TOKEN": "tok-123",
        "PNEUMA_SESSION_ID": "sess-abc",
        "PNEUMA_MODE": "doc",
        "CLAUDECODE": None,
        "CLAUDE_CODE_ENTRYPOINT": None,
        "FAKE_EXTRA": "yes",
    }
    assert fake.stdin("user") == [
        {
            "type": "user",
            "message": {"role": "user", "content": "say hello"},
            "parent_tool_use_id": None,
            "session_id": "",
        }
    ]
    assert len(fake.controls("initialize")) == 1


async def test_messages_sent_before_the_cli_is_up_all_arrive_in_order(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup)
    await asyncio.gather(*(backend.send_user_message(f"hello number {i}", []) for i in range(4)))
    await sink.wait_type("result", count=4)
    assert [m["message"]["content"] for m in fake.stdin("user")] == [f"hello number {i}" for i in range(4)]
    assert len(fake.starts()) == 1


async def test_images_go_as_content_blocks(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message(
        "what is in this picture", [{"media_type": "image/png", "data": "iVBORw0KGgo="}]
    )
    await sink.wait_type("result")
    (line,) = fake.stdin("user")
    assert line["message"]["content"] == [
        {"type": "text", "text": "what is in this picture"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
    ]


async def test_greeting_is_a_hidden_first_prompt_of_a_fresh_session(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup, greeting="Greet the person in one line.")
    await sink.wait_type("result")
    assert [m["message"]["content"] for m in fake.stdin("user")] == ["Greet the person in one line."]
    assert not sink.of("user_message"), "the greeting is never echoed to the browser"
    assert sink.of("assistant")


async def test_no_greeting_when_resuming(make_backend, cleanup, fake):
    (fake.state / "known-session.json").write_text("{}")
    backend, sink = await started(
        make_backend, cleanup, greeting="Greet the person.", agent_session_id="known-session"
    )
    await asyncio.sleep(0.3)
    assert fake.starts() == [] and sink.events == []
    await backend.send_user_message("hello again", [])
    await sink.wait_type("result")
    argv = fake.starts()[0]["argv"]
    assert argv[argv.index("--resume") + 1] == "known-session"
    assert [m["message"]["content"] for m in fake.stdin("user")] == ["hello again"]


# -- content blocks ------------------------------------------------------------


async def test_blocks_of_one_message_keep_its_id_and_tool_results_are_emitted(make_backend, cleanup):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("use a tool", [])
    await sink.wait_type("result")
    first, second, third = sink.of("assistant")
    assert first["message"]["id"] == second["message"]["id"] != third["message"]["id"]
    assert first["message"]["content"][0]["type"] == "text"
    assert second["message"]["content"] == [
        {"type": "tool_use", "id": "toolu_write_1", "name": "Write",
         "input": {"file_path": "hello.txt", "content": "hello world\n"}}
    ]
    assert sink.of("tool_result") == [
        {"type": "tool_result", "tool_use_id": "toolu_write_1", "content": "File created successfully",
         "is_error": False, "parent_tool_use_id": None},
        {"type": "tool_result", "tool_use_id": "toolu_read_2", "content": "no such file",
         "is_error": True, "parent_tool_use_id": None},
    ]
    kinds = [e["type"] for e in sink.events]
    assert kinds.index("tool_result") < kinds.index("result")


async def test_subagent_messages_carry_their_parent_tool_use_id(make_backend, cleanup):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("run a subagent", [])
    await sink.wait_type("result")
    assert sink.of("stream_event")
    assert {e["parent_tool_use_id"] for e in sink.of("stream_event")} == {"toolu_parent_task"}
    assert sink.of("assistant")[0]["parent_tool_use_id"] == "toolu_parent_task"


# -- permissions -----------------------------------------------------------------


def control_success(request: dict, response: dict) -> dict:
    """The control_response line the CLI must get for an answered permission."""
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request["request_id"],
                     "response": response},
    }


async def ask_permission(make_backend, cleanup, fake) -> tuple[ClaudeCodeBackend, RecordingSink, dict]:
    backend, sink = await started(make_backend, cleanup, permission_mode="default")
    await backend.send_user_message("ask permission to write", [])
    request = (await sink.wait_type("permission_request"))["request"]
    argv = fake.starts()[0]["argv"]
    assert argv[argv.index("--permission-mode") + 1] == "default"
    assert argv[argv.index("--permission-prompt-tool") + 1] == "stdio"
    return backend, sink, request


async def test_permission_allow_round_trip(make_backend, cleanup, fake):
    backend, sink, request = await ask_permission(make_backend, cleanup, fake)
    assert request["tool_name"] == "Write"
    assert request["input"] == {"file_path": "/workspace/allowed.txt", "content": "ok\n"}
    assert request["description"] == "allowed.txt"
    assert request["tool_use_id"] == "toolu_perm_1"
    assert not sink.of("result"), "the turn waits for the person"

    await backend.answer_permission(request["request_id"], "allow")
    result = await sink.wait_type("result")
    assert fake.stdin("control_response") == [control_success(request, {
        "behavior": "allow",
        "updatedInput": {"file_path": "/workspace/allowed.txt", "content": "ok\n"},
    })]
    assert result["data"]["result"] == "allowed"
    (tool_result,) = sink.of("tool_result")
    assert not tool_result["is_error"]


async def test_permission_allow_with_edited_input(make_backend, cleanup, fake):
    backend, sink, request = await ask_permission(make_backend, cleanup, fake)
    edited = {"file_path": "/workspace/allowed.txt", "content": "edited\n"}
    await backend.answer_permission(request["request_id"], "allow", updated_input=edited)
    await sink.wait_type("result")
    assert fake.stdin("control_response")[0]["response"]["response"] == {
        "behavior": "allow", "updatedInput": edited
    }
    assert '"content": "edited\\n"' in sink.of("tool_result")[0]["content"]


async def test_permission_deny_round_trip(make_backend, cleanup, fake):
    backend, sink, request = await ask_permission(make_backend, cleanup, fake)
    await backend.answer_permission(request["request_id"], "deny", message="Not that file")
    result = await sink.wait_type("result")
    assert fake.stdin("control_response") == [
        control_success(request, {"behavior": "deny", "message": "Not that file"})]
    assert result["data"]["result"] == "denied"
    assert sink.of("tool_result")[0] | {"content": None} == {
        "type": "tool_result", "tool_use_id": "toolu_perm_1", "content": None,
        "is_error": True, "parent_tool_use_id": None,
    }


async def test_an_answer_for_an_unknown_request_writes_nothing(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("hello", [])
    await sink.wait_type("result")
    await backend.answer_permission("no-such-request", "allow")
    await asyncio.sleep(0.1)
    assert fake.stdin("control_response") == []


async def test_bypass_permissions_allows_without_asking(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("ask permission to write", [])
    result = await sink.wait_type("result")
    assert result["data"]["result"] == "allowed"
    assert not sink.of("permission_request")
    assert fake.stdin("control_response")[0]["response"]["response"]["behavior"] == "allow"


async def test_a_withdrawn_permission_request_is_cancelled(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup, permission_mode="acceptEdits")
    await backend.send_user_message("withdraw a request", [])
    await sink.wait_type("result")
    (request,) = sink.of("permission_request")
    assert sink.of("permission_cancelled") == [
        {"type": "permission_cancelled", "request_id": request["request"]["request_id"]}
    ]


# -- control requests ------------------------------------------------------------


async def test_interrupt_sends_a_control_request_and_ends_the_turn(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("be slow", [])
    await sink.wait_for(lambda e: e["type"] == "stream_event", count=5)
    assert not sink.of("result")
    await backend.interrupt()
    result = await sink.wait_type("result")
    (control,) = fake.controls("interrupt")
    assert control == {"type": "control_request", "request_id": control["request_id"],
                       "request": {"subtype": "interrupt"}}
    assert result["data"]["subtype"] == "error_during_execution" and result["data"]["is_error"]
    assert sink.events[-1] == {"type": "status_change", "status": "idle"}
    # The CLI keeps running: the next message is answered by the same process.
    await backend.send_user_message("hello again", [])
    await sink.wait_type("result", count=2)
    assert len(fake.starts()) == 1


async def test_set_model_switches_the_running_cli_and_later_starts(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup, model="claude-first")
    await backend.send_user_message("hello", [])
    await sink.wait_type("result")
    assert fake.starts()[0]["argv"][fake.starts()[0]["argv"].index("--model") + 1] == "claude-first"

    await backend.set_model("claude-other")
    (control,) = fake.controls("set_model")
    assert control["request"] == {"subtype": "set_model", "model": "claude-other"}
    await backend.send_user_message("hello", [])
    await sink.wait_type("result", count=2)
    assert sink.of("session_update")[-1]["updates"]["model"] == "claude-other"

    await backend.send_user_message("crash now", [])
    await sink.wait_type("cli_disconnected")
    await backend.send_user_message("hello", [])
    await sink.wait_type("result", count=3)
    argv = fake.starts()[1]["argv"]
    assert argv[argv.index("--model") + 1] == "claude-other"


async def test_set_model_before_any_cli_is_used_at_start(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup)
    await backend.set_model("claude-later")
    assert fake.starts() == []
    await backend.send_user_message("hello", [])
    await sink.wait_type("result")
    argv = fake.starts()[0]["argv"]
    assert argv[argv.index("--model") + 1] == "claude-later"


# -- robustness --------------------------------------------------------------------


async def test_a_line_that_is_not_json_is_skipped_with_a_warning(make_backend, cleanup, caplog):
    caplog.set_level(logging.WARNING, logger="pneuma.agents.claude_code")
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("print garbage", [])
    result = await sink.wait_type("result")
    assert result["data"]["result"] == "Hello from the fake CLI!"
    assert any("not JSON" in r.getMessage() and "this line is not JSON" in r.getMessage()
               for r in caplog.records)


async def test_keep_alive_rate_limit_and_unknown_messages_are_not_forwarded(make_backend, cleanup):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("make noise", [])
    await sink.wait_type("result")
    kinds = {e["type"] for e in sink.events}
    assert kinds <= {"cli_connected", "status_change", "session_update", "stream_event", "assistant", "result"}
    assert "stream_event" in kinds


async def test_a_one_mebibyte_line_is_parsed(make_backend, cleanup):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("something big", [])
    await sink.wait_type("result")
    (assistant,) = sink.of("assistant")
    assert len(assistant["message"]["content"][0]["text"]) == 1024 * 1024


async def test_an_exit_is_reported_and_the_next_message_resumes(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("hello", [])
    await sink.wait_type("result")
    session_id = backend.agent_session_id

    await backend.send_user_message("crash please", [])
    gone = await sink.wait_type("cli_disconnected")
    assert gone["exit_code"] == 3
    assert gone["stderr"] == ["Error: something went badly wrong", "    at fakeFrame (fake_claude.py:1)"]
    assert sink.events[-1]["type"] == "cli_disconnected"
    assert {"type": "status_change", "status": "idle"} in sink.events[sink.events.index(gone) - 1 :]

    await backend.send_user_message("hello once more", [])
    await sink.wait_type("result", count=2)
    first, second = fake.starts()
    assert "--resume" not in first["argv"]
    assert second["argv"][second["argv"].index("--resume") + 1] == session_id
    assert len(sink.of("cli_connected")) == 2
    assert fake.stdin("user")[-1]["message"]["content"] == "hello once more"


async def test_a_stale_resume_id_is_dropped_and_the_message_still_answered(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup, agent_session_id="11111111-dead-4bad-8bad-111111111111")
    await backend.send_user_message("hello after a long time", [])
    result = await sink.wait_type("result")
    assert result["data"]["result"] == "Hello from the fake CLI!"
    assert len(sink.of("result")) == 1, "the stale CLI's error result is not shown"
    assert not sink.of("cli_disconnected") and not sink.of("error")
    assert sink.agent_session_ids[0] is None
    assert sink.agent_session_ids[-1] not in (None, "11111111-dead-4bad-8bad-111111111111")
    first, second = fake.starts()
    assert "--resume" in first["argv"] and "--resume" not in second["argv"]
    # The message reached the fresh CLI (it was sent to both).
    assert [m["message"]["content"] for m in fake.stdin("user")] == ["hello after a long time"] * 2


async def test_the_message_a_resumed_cli_repeats_is_not_shown_twice(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup, extra_env={"FAKE_CLAUDE_RESUME_ECHO": "1"})
    await backend.send_user_message("hello", [])
    await sink.wait_type("result")
    await backend.send_user_message("crash", [])
    await sink.wait_type("cli_disconnected")
    await backend.send_user_message("hello again", [])
    await sink.wait_type("result", count=2)
    assert "--resume" in fake.starts()[1]["argv"]
    texts = [e["message"]["content"] for e in sink.of("assistant")]
    assert len(texts) == 2, texts
    assert len({e["message"]["id"] for e in sink.of("assistant")}) == 2


# -- failures the person must understand ------------------------------------------


async def test_a_missing_binary_says_what_to_install(make_backend, cleanup, tmp_path):
    backend, sink = await started(make_backend, cleanup, claude_bin=str(tmp_path / "nowhere" / "claude"))
    (error,) = sink.of("error")
    assert error["code"] == "agent_not_found"
    assert "pip install claude-agent-sdk==0.2.187" in error["message"]
    assert "npm install -g @anthropic-ai/claude-code" in error["message"]
    assert "--claude-bin" in error["message"]
    await backend.send_user_message("hello?", [])  # no crash, no hang
    assert [e["type"] for e in sink.events[1:]] == ["error", "status_change"]
    assert sink.events[-1]["status"] == "idle"
    await backend.stop()


def test_the_binary_is_found_in_the_documented_order(fake, tmp_path, monkeypatch):
    other = tmp_path / "path-bin"
    other.mkdir()
    (other / "claude").write_text("#!/bin/sh\n")
    (other / "claude").chmod(0o755)
    monkeypatch.setenv("PATH", str(other))
    monkeypatch.setenv("PNEUMA_CLAUDE_BIN", str(fake.bin))
    assert find_claude_binary("/bin/true") == "/bin/true"
    assert find_claude_binary(None) == str(fake.bin)
    monkeypatch.delenv("PNEUMA_CLAUDE_BIN")
    assert find_claude_binary(None) == str(other / "claude")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(claude_code, "_bundled_binary", lambda: "/opt/sdk/_bundled/claude")
    assert find_claude_binary(None) == "/opt/sdk/_bundled/claude"
    monkeypatch.setattr(claude_code, "_bundled_binary", lambda: None)
    assert find_claude_binary(None) is None


def test_the_bundled_binary_is_found_without_importing_the_sdk():
    if importlib.util.find_spec("claude_agent_sdk") is None:
        pytest.skip("claude-agent-sdk is not installed")
    probe = (
        "import sys; from pneuma.agents.claude_code import _bundled_binary; "
        "print(_bundled_binary()); print('claude_agent_sdk' in sys.modules)"
    )
    found, imported = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert found.endswith("/claude_agent_sdk/_bundled/claude") and os.access(found, os.X_OK)
    assert imported == "False"


async def test_an_authentication_failure_says_how_to_log_in(make_backend, cleanup):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("auth fails", [])
    await sink.wait_type("result")
    (error,) = sink.of("error")
    assert error["code"] == "auth_failed"
    assert "ANTHROPIC_API_KEY" in error["message"] and "claude login" in error["message"]
    assert sink.of("result")[0]["data"]["is_error"]


async def test_an_exit_after_a_401_says_how_to_log_in(make_backend, cleanup):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("authexit", [])
    gone = await sink.wait_type("cli_disconnected")
    assert gone["exit_code"] == 1
    (error,) = sink.of("error")
    assert error["code"] == "auth_failed" and "ANTHROPIC_API_KEY" in error["message"]
    assert sink.events.index(error) < sink.events.index(gone)


async def test_a_401_retry_loop_is_reported_and_ended(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup)
    await backend.send_user_message("retry401", [])
    result = await sink.wait_type("result")
    assert result["data"]["is_error"]
    assert [e["code"] for e in sink.of("error")] == ["auth_failed"]
    assert len(fake.controls("interrupt")) == 1, "the backend stops a retry loop that cannot succeed"


async def test_bypass_as_root_refused_says_what_to_do(make_backend, cleanup):
    backend, sink = await started(make_backend, cleanup, extra_env={"FAKE_CLAUDE_AS_ROOT": "1"})
    await backend.send_user_message("hello", [])
    gone = await sink.wait_type("cli_disconnected")
    assert gone["exit_code"] == 1
    (error,) = sink.of("error")
    assert error["code"] == "root_refused" and "IS_SANDBOX=1" in error["message"]


# -- stopping ----------------------------------------------------------------------


def _is_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_stop_kills_a_cli_that_ignores_sigterm(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup, extra_env={"FAKE_CLAUDE_STUBBORN": "1"})
    await backend.send_user_message("hello", [])
    await sink.wait_type("result")
    pid = fake.starts()[0]["pid"]
    begun = time.monotonic()
    await backend.stop()
    took = time.monotonic() - begun
    assert 1.5 < took < 3.5, took
    assert _is_gone(pid), "killed and reaped, not left a zombie"
    gone = sink.of("cli_disconnected")
    assert len(gone) == 1 and gone[0]["exit_code"] == -9
    await backend.stop()  # idempotent
    assert len(sink.of("cli_disconnected")) == 1


async def test_stop_is_quick_for_a_well_behaved_cli_and_idempotent(make_backend, cleanup, fake):
    backend, sink = await started(make_backend, cleanup)
    await backend.stop()  # nothing started yet
    await backend.start()
    await backend.send_user_message("hello", [])
    await sink.wait_type("result")
    pid = fake.starts()[0]["pid"]
    begun = time.monotonic()
    await backend.stop()
    assert time.monotonic() - begun < 1.5
    assert _is_gone(pid)
    await backend.stop()
    await backend.interrupt()  # no CLI: nothing to do, no error
