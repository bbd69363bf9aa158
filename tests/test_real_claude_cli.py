"""The Claude Code backend driving the REAL Claude Code CLI, offline.

The CLI (the binary bundled in claude-agent-sdk==0.2.187) talks to the fake
Messages API of tests/fakes/anthropic_api.py on 127.0.0.1. These tests only
run in a loopback-only network namespace (the root conftest re-executes
pytest under ``unshare -n``; by hand:
``unshare -n -- sh -c 'ip link set lo up && exec .venv/bin/python -m pytest tests/test_real_claude_cli.py'``),
so whatever the CLI tries, nothing leaves the machine.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pneuma.agents import claude_code
from pneuma.agents.claude_code import ClaudeCodeBackend
from pneuma.core.backend import BackendOptions
from tests.fakes.anthropic_api import FakeAnthropicAPI, text, tool_use
from tests.fakes.sink import RecordingSink
from tests.loopback import fail_unless_loopback_only

CLAUDE_BIN = claude_code._bundled_binary()
TURN = 30.0  # seconds a CLI turn may take at most (they take about one)

pytestmark = pytest.mark.skipif(
    CLAUDE_BIN is None,
    reason="the real Claude Code CLI is not installed: pip install claude-agent-sdk==0.2.187",
)

# Variables of the outer environment that would steer the CLI elsewhere.
_FOREIGN_ENV = (
    "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_OAUTH_TOKEN", "IS_SANDBOX", "CLAUDECODE", "HTTPS_PROXY",
    "HTTP_PROXY", "https_proxy", "http_proxy",
)  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def loopback_only_network() -> None:
    """Refuse to start the real CLI where it could reach the internet."""
    fail_unless_loopback_only("the real-CLI tests", "tests/test_real_claude_cli.py")


@pytest.fixture
async def api():
    async with FakeAnthropicAPI() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
async def make(api: FakeAnthropicAPI, workspace: Path, tmp_path: Path, monkeypatch):
    for name in _FOREIGN_ENV:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    backends: list[ClaudeCodeBackend] = []

    def make_backend(permission_mode: str = "bypassPermissions", sandbox: bool = True, **options: Any):
        env = {
            "ANTHROPIC_BASE_URL": api.base_url,
            "ANTHROPIC_API_KEY": "sk-test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        }
        if sandbox:
            env["IS_SANDBOX"] = "1"  # as root, bypassPermissions needs it
        sink = RecordingSink()
        backend = ClaudeCodeBackend(
            BackendOptions(
                workspace=workspace,
                mode=SimpleNamespace(name="doc", manifest=SimpleNamespace(agent=SimpleNamespace(
                    permission_mode="bypassPermissions"))),
                api_url="http://127.0.0.1:9",
                token="tok",
                session_id="pneuma-session",
                permission_mode=permission_mode,
                claude_bin=CLAUDE_BIN,
                extra_env=env,
                **options,
            ),
            sink,
        )
        backends.append(backend)
        return backend, sink

    yield make_backend
    for backend in backends:
        await backend.stop()


def user_texts(body: dict[str, Any]) -> str:
    """All the text of a request's messages, for 'did the CLI send X' checks."""
    parts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        else:
            for block in content or []:
                if block.get("type") == "text":
                    parts.append(block["text"])
    return "\n".join(parts)


async def test_a_text_reply_streams_then_arrives_whole(make, api, workspace):
    api.push(text("Hello from the fake API!"))
    backend, sink = make()
    await backend.start()
    await backend.send_user_message("Say hello", [])
    result = await sink.wait_type("result", timeout=TURN)

    assert result["data"]["subtype"] == "success" and not result["data"]["is_error"]
    assert result["data"]["result"] == "Hello from the fake API!"
    assert sink.text_deltas() == "Hello from the fake API!"
    first_delta = next(
        i for i, e in enumerate(sink.events)
        if e["type"] == "stream_event" and e["event"]["type"] == "content_block_delta"
    )
    (assistant,) = sink.of("assistant")
    assert first_delta < sink.events.index(assistant) < sink.events.index(result)
    assert assistant["message"]["content"] == [{"type": "text", "text": "Hello from the fake API!"}]
    assert sink.events[-1] == {"type": "status_change", "status": "idle"}

    updates = sink.of("session_update")[0]["updates"]
    assert Path(updates["cwd"]).resolve() == workspace.resolve()
    assert updates["permission_mode"] == "bypassPermissions"
    assert "Write" in updates["tools"]
    assert uuid.UUID(sink.agent_session_ids[-1])
    assert "Say hello" in user_texts(api.conversation_requests()[-1])


async def test_a_scripted_write_creates_the_file(make, api, workspace):
    target = workspace / "hello.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "hello world\n"})
    api.push(text("I'll create the file."), write)
    api.push(text("done"))
    backend, sink = make()
    await backend.start()
    await backend.send_user_message("Create hello.txt containing 'hello world'", [])
    result = await sink.wait_type("result", timeout=TURN)

    assert result["data"]["result"] == "done"
    assert target.read_text() == "hello world\n"
    (tool_result,) = sink.of("tool_result")
    assert tool_result["tool_use_id"] == write.id and not tool_result["is_error"]
    assert [r["tool_use_id"] for r in api.tool_results()] == [write.id]
    message_ids = {e["message"]["id"] for e in sink.of("assistant")}
    assert len(message_ids) == 2, "text and tool_use blocks of one reply share its id"


async def test_permission_prompts_allow_and_deny(make, api, workspace):
    allowed, denied = workspace / "allowed.txt", workspace / "denied.txt"
    write = tool_use("Write", {"file_path": str(allowed), "content": "ok\n"})
    bash = tool_use("Bash", {"command": f"touch {denied}", "description": "Create a file"})
    api.push(write)
    api.push(bash)
    api.push(text("finished"))
    backend, sink = make(permission_mode="default")
    await backend.start()
    await backend.send_user_message("Write allowed.txt, then touch denied.txt", [])

    first = (await sink.wait_type("permission_request", timeout=TURN))["request"]
    assert first["tool_name"] == "Write" and first["tool_use_id"] == write.id
    assert first["input"] == {"file_path": str(allowed), "content": "ok\n"}
    assert not allowed.exists(), "nothing is written before the person allows it"
    await backend.answer_permission(first["request_id"], "allow")

    second = (await sink.wait_type("permission_request", count=2, timeout=TURN))["request"]
    assert second["tool_name"] == "Bash" and second["input"]["command"] == f"touch {denied}"
    await backend.answer_permission(second["request_id"], "deny", message="Not that one, please")

    result = await sink.wait_type("result", timeout=TURN)
    assert result["data"]["result"] == "finished"
    assert allowed.read_text() == "ok\n"
    assert not denied.exists()
    allowed_result, denied_result = api.tool_results()
    assert not allowed_result.get("is_error")
    assert denied_result["is_error"] and "Not that one, please" in str(denied_result["content"])
    assert [e["is_error"] for e in sink.of("tool_result")] == [False, True]


async def test_interrupt_mid_stream(make, api):
    api.push(text("word " * 400, chunk=5), delay=0.02)  # ~8 s if nobody interrupts
    backend, sink = make()
    await backend.start()
    await backend.send_user_message("Write a long essay", [])
    await sink.wait_for(
        lambda e: e["type"] == "stream_event" and e["event"]["type"] == "content_block_delta", timeout=TURN
    )
    begun = time.monotonic()
    await backend.interrupt()
    result = await sink.wait_type("result", timeout=5)
    assert time.monotonic() - begun < 3
    assert result["data"]["is_error"] and result["data"]["subtype"] == "error_during_execution"
    assert len(sink.text_deltas()) < len("word " * 400)

    api.push(text("after interrupt"))
    await backend.send_user_message("Are you there?", [])
    again = await sink.wait_type("result", count=2, timeout=TURN)
    assert again["data"]["result"] == "after interrupt"


async def test_a_new_backend_resumes_the_conversation(make, api):
    api.push(text("The secret word is BANANA."))
    first, first_sink = make()
    await first.start()
    await first.send_user_message("Remember the secret word", [])
    await first_sink.wait_type("result", timeout=TURN)
    session_id = first_sink.agent_session_ids[-1]
    await first.stop()
    assert first_sink.of("cli_disconnected")

    api.push(text("It was BANANA."))
    second, second_sink = make(agent_session_id=session_id, greeting="Say hi (never sent: resuming)")
    await second.start()
    await second.send_user_message("What was the secret word?", [])
    result = await second_sink.wait_type("result", timeout=TURN)
    assert result["data"]["result"] == "It was BANANA."

    argv = Path(f"/proc/{second._process.proc.pid}/cmdline").read_bytes().split(b"\0")
    assert argv[argv.index(b"--resume") + 1] == session_id.encode()
    assert second_sink.agent_session_ids == [] or second_sink.agent_session_ids[-1] == session_id
    last = api.conversation_requests()[-1]
    assert "BANANA" in user_texts(last) or "BANANA" in str(last["messages"])
    assert "Remember the secret word" in str(last["messages"])
    assert "never sent" not in str(api.requests)
    assert [e["message"]["content"][0]["text"] for e in second_sink.of("assistant")] == ["It was BANANA."]


async def test_a_stale_resume_id_starts_a_fresh_session(make, api):
    api.push(text("Fresh start."))
    stale = str(uuid.uuid4())
    backend, sink = make(agent_session_id=stale)
    await backend.start()
    await backend.send_user_message("Hello?", [])
    result = await sink.wait_type("result", timeout=TURN)
    assert result["data"]["result"] == "Fresh start."
    assert sink.agent_session_ids[0] is None and sink.agent_session_ids[-1] not in (None, stale)
    assert not sink.of("error") and not sink.of("cli_disconnected")


async def test_the_greeting_is_sent_as_a_hidden_first_prompt(make, api):
    api.push(text("Hi! What shall we write?"))
    backend, sink = make(greeting="Greet the person in one short sentence.")
    await backend.start()
    result = await sink.wait_type("result", timeout=TURN)
    assert result["data"]["result"] == "Hi! What shall we write?"
    assert "Greet the person in one short sentence." in user_texts(api.conversation_requests()[0])
    assert not sink.of("user_message")


async def test_a_rejected_api_key_is_explained_and_the_turn_ended(make, api):
    api.fail_always(401, "authentication_error", "invalid x-api-key")
    backend, sink = make()
    await backend.start()
    await backend.send_user_message("Hello", [])
    error = await sink.wait_type("error", timeout=TURN)
    assert error["code"] == "auth_failed"
    assert "ANTHROPIC_API_KEY" in error["message"] and "claude login" in error["message"]
    # The CLI would retry for minutes; the backend ends the turn.
    result = await sink.wait_type("result", timeout=10)
    assert result["data"]["is_error"]
    assert sink.events[-1] == {"type": "status_change", "status": "idle"}


@pytest.mark.skipif(os.geteuid() != 0, reason="only root is refused bypassPermissions")
async def test_bypass_permissions_as_root_without_sandbox_is_explained(make, api):
    backend, sink = make(sandbox=False)
    await backend.start()
    await backend.send_user_message("Hello", [])
    gone = await sink.wait_type("cli_disconnected", timeout=TURN)
    assert gone["exit_code"] != 0
    assert any("root" in line for line in gone["stderr"])
    (error,) = sink.of("error")
    assert error["code"] == "root_refused" and "IS_SANDBOX=1" in error["message"]
