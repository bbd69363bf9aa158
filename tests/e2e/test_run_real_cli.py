"""`pneuma run` end to end: a browser's WebSocket, the server, the REAL Claude
Code CLI and a fake Anthropic Messages API, all on loopback.

Each test starts `pneuma run --mode slide ... --port 0` as a subprocess with
an environment that sends the CLI (the binary bundled in
claude-agent-sdk==0.2.187) to the fake API running in the test, reads the
ready line, and plays the person's browser tab over /ws/browser/<sid>.

The slide mode greets the person on a fresh session: its greeting is a
hidden first prompt, so every test scripts a greeting reply first and waits
for that turn to end before it talks.

Also here: the same path with tests/fakes/fake_claude.py as the CLI, a
missing CLI binary, and how fast a stop closes the
browser's socket.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import shutil
import signal
from importlib.resources import files
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.e2e.pneuma_run import (
    CLAUDE_BIN,
    BrowserClient,
    PneumaRun,
    alive,
    argv_of,
    identity,
    wait_greeting,
)
from tests.fakes.anthropic_api import FakeAnthropicAPI, text, tool_use

pytestmark = pytest.mark.skipif(
    CLAUDE_BIN is None,
    reason="the real Claude Code CLI is not installed: pip install claude-agent-sdk==0.2.187",
)

GREETING_REPLY = "Hi! Your deck has eight slides. What do you want to present?"
MANIFEST_GREETING = json.loads(
    files("pneuma_slide").joinpath("manifest.json").read_text(encoding="utf-8")
)["agent"]["greeting"]


# --- helpers ------------------------------------------------------------------


def block_text(content: Any) -> str:
    """The text of a message's or tool_result's content (a str or blocks)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, dict):
            if block.get("type") == "text":
                parts.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                parts.append(block_text(block.get("content")))
    return "\n".join(parts)


def request_text(body: dict[str, Any]) -> str:
    """All the text a request to the API carried in its messages."""
    return "\n".join(block_text(m.get("content")) for m in body.get("messages", []))


def history_texts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(type, text) of each user_message and assistant text in a history."""
    out = []
    for message in messages:
        if message["type"] == "user_message":
            out.append(("user", message["content"]))
        elif message["type"] == "assistant":
            out.append(("assistant", block_text(message["message"]["content"])))
    return out


async def say(client: BrowserClient, content: str, msg_id: str) -> int:
    """Send a user message as the page does; returns the mark to wait from."""
    mark = client.mark()
    await client.send({"type": "user_message", "content": content, "client_msg_id": msg_id})
    return mark


async def open_session(
    fake_api: FakeAnthropicAPI, start_pneuma, connect, *args: str
) -> tuple[PneumaRun, BrowserClient]:
    """`pneuma run` with a scripted greeting, a subscribed tab, the greeting turn over."""
    fake_api.push(text(GREETING_REPLY))
    run = await start_pneuma(*args)
    client = await connect(run)
    await wait_greeting(client)
    return run, client


def curl_from_claude_md(workspace: Path, payload: dict[str, Any]) -> str:
    """The viewer-action curl command the workspace's CLAUDE.md teaches, with ``payload``."""
    claude_md = (workspace / "CLAUDE.md").read_text(encoding="utf-8")
    commands = re.findall(r"^curl .*/api/viewer/action.*$", claude_md, re.MULTILINE)
    assert commands, "CLAUDE.md shows no curl command for /api/viewer/action"
    prefix, _, _ = commands[0].partition(" -d '")
    assert prefix == (
        'curl -s -X POST "$PNEUMA_API/api/viewer/action" -H "Authorization: Bearer $PNEUMA_TOKEN" '
        "-H 'Content-Type: application/json'"
    ), prefix
    return f"{prefix} -d {shlex.quote(json.dumps(payload, separators=(',', ':')))}"


# --- (a) ------------------------------------------------------------------------


async def test_a_text_reply_streams_to_the_browser(fake_api, start_pneuma, connect):
    reply = "Hello from the fake API, through pneuma run and the real CLI!"
    run, client = await open_session(fake_api, start_pneuma, connect)
    fake_api.push(text(reply, chunk=6))

    mark = await say(client, "Say hello", "msg-a-1")
    result = await client.wait_turn_done(since=mark)

    echo = client.of("user_message", mark)[0]
    assert echo["content"] == "Say hello" and echo["client_msg_id"] == "msg-a-1"
    assert result["data"]["subtype"] == "success" and not result["data"]["is_error"]
    assert result["data"]["result"] == reply
    assert client.text_deltas(mark) == reply
    turn = client.messages[mark:]
    first_delta = next(
        i for i, m in enumerate(turn)
        if m["type"] == "stream_event" and m["event"]["type"] == "content_block_delta"
    )
    (assistant,) = [m for m in turn if m["type"] == "assistant"]
    assert assistant["message"]["content"] == [{"type": "text", "text": reply}]
    assert first_delta < turn.index(assistant) < turn.index(result)
    assert len([m for m in turn if m["type"] == "stream_event"]) > len(reply) // 6

    # The greeting was the hidden first prompt, never shown as the person's message.
    conversation = fake_api.conversation_requests()
    assert MANIFEST_GREETING in request_text(conversation[0])
    assert "Say hello" in request_text(conversation[-1])
    assert not any(m["type"] == "user_message" and m["content"] == MANIFEST_GREETING
                   for m in client.messages)
    client.assert_seq_contiguous()


# --- (b) ------------------------------------------------------------------------


async def test_b_a_write_reaches_the_browser_as_content_update(fake_api, start_pneuma, connect, workspace):
    content = '<section class="slide">\n  <h1>A new ninth slide</h1>\n</section>\n'
    target = workspace / "slides" / "09-new.html"
    write = tool_use("Write", {"file_path": str(target), "content": content})
    run, client = await open_session(fake_api, start_pneuma, connect)
    fake_api.push(text("I'll add slide 9."), write)
    fake_api.push(text("Slide 9 is in place."))

    mark = await say(client, "Add a ninth slide", "msg-b-1")
    update = await client.wait_for(
        lambda m: m["type"] == "content_update"
        and any(f["path"] == "slides/09-new.html" for f in m["files"]),
        since=mark, what="content_update for slides/09-new.html",
    )
    result = await client.wait_turn_done(since=mark)

    (changed,) = [f for f in update["files"] if f["path"] == "slides/09-new.html"]
    assert changed["content"] == content
    assert changed["origin"] == "external"
    assert not changed.get("deleted")
    assert target.read_text() == content
    assert result["data"]["result"] == "Slide 9 is in place."
    (tool_result,) = client.of("tool_result", mark)
    assert tool_result["tool_use_id"] == write.id and not tool_result["is_error"]
    tool_use_blocks = [
        b for m in client.of("assistant", mark) for b in m["message"]["content"] if b["type"] == "tool_use"
    ]
    assert [b["id"] for b in tool_use_blocks] == [write.id]
    client.assert_seq_contiguous()


# --- (c) ------------------------------------------------------------------------


async def test_c_permission_prompts_allow_and_deny(fake_api, start_pneuma, connect, workspace):
    allowed = workspace / "slides" / "10-allowed.html"
    denied = workspace / "denied.txt"
    write = tool_use("Write", {"file_path": str(allowed), "content": "<section>ok</section>\n"})
    bash = tool_use("Bash", {"command": f"touch {denied}", "description": "Create a file"})
    run, client = await open_session(fake_api, start_pneuma, connect, "--permission-mode", "default")
    fake_api.push(write)
    fake_api.push(bash)
    fake_api.push(text("finished"))

    mark = await say(client, "Write slide 10, then touch denied.txt", "msg-c-1")
    first = (await client.wait_type("permission_request", since=mark))["request"]
    assert first["tool_name"] == "Write" and first["tool_use_id"] == write.id
    assert first["input"] == {"file_path": str(allowed), "content": "<section>ok</section>\n"}
    assert not allowed.exists(), "nothing is written before the person allows it"
    await client.send({"type": "permission_response", "request_id": first["request_id"], "behavior": "allow"})

    second_at = client.mark()
    second = (await client.wait_type("permission_request", since=second_at))["request"]
    assert second["tool_name"] == "Bash" and second["input"]["command"] == f"touch {denied}"
    await client.send({"type": "permission_response", "request_id": second["request_id"],
                       "behavior": "deny", "message": "Not that one, please"})
    result = await client.wait_turn_done(since=second_at)

    assert result["data"]["result"] == "finished"
    assert allowed.read_text() == "<section>ok</section>\n"
    assert not denied.exists()
    allowed_result, denied_result = fake_api.tool_results()
    assert allowed_result["tool_use_id"] == write.id and not allowed_result.get("is_error")
    assert denied_result["tool_use_id"] == bash.id and denied_result["is_error"]
    assert "Not that one, please" in block_text(denied_result["content"])
    assert [(m["tool_use_id"], m["is_error"]) for m in client.of("tool_result", mark)] == [
        (write.id, False), (bash.id, True)]
    answered = {m["request_id"]: m.get("behavior") for m in client.of("permission_cancelled", mark)}
    assert answered == {first["request_id"]: "allow", second["request_id"]: "deny"}
    client.assert_seq_contiguous()


# --- (d) ------------------------------------------------------------------------


async def test_d_interrupt_mid_stream(fake_api, start_pneuma, connect):
    long_text = "word " * 400
    run, client = await open_session(fake_api, start_pneuma, connect)
    fake_api.push(text(long_text, chunk=5), delay=0.02)  # ~8 s if nobody interrupts

    mark = await say(client, "Write a long essay", "msg-d-1")
    await client.wait_for(
        lambda m: m["type"] == "stream_event" and m["event"]["type"] == "content_block_delta",
        since=mark, what="a first text delta",
    )
    begun = asyncio.get_running_loop().time()
    await client.send({"type": "interrupt"})
    result = await client.wait_turn_done(since=mark, timeout=5)
    assert asyncio.get_running_loop().time() - begun < 3
    assert result["data"]["is_error"] and result["data"]["subtype"] == "error_during_execution"
    assert len(client.text_deltas(mark)) < len(long_text)
    assert not client.of("error", mark), client.of("error", mark)

    fake_api.push(text("Still here."))
    again = await say(client, "Are you there?", "msg-d-2")
    result = await client.wait_turn_done(since=again)
    assert result["data"]["result"] == "Still here." and not result["data"]["is_error"]
    assert client.text_deltas(again) == "Still here."
    client.assert_seq_contiguous()


# --- (e) ------------------------------------------------------------------------


async def test_e_stop_and_restart_resume_the_same_cli_session(fake_api, start_pneuma, connect, workspace):
    run, client = await open_session(fake_api, start_pneuma, connect)
    fake_api.push(text("The secret word is BANANA."))
    mark = await say(client, "Remember the secret word", "msg-e-1")
    await client.wait_turn_done(since=mark)
    (first_cli,) = run.cli_argvs()
    assert "--resume" not in first_cli
    below = set(run.seen)  # the CLI among them

    code, took = await run.stop()
    assert code == 0, run.stderr()
    assert took < 5
    assert run.stdout_lines == [run.ready_line], "`pneuma run` prints exactly one line"
    left = [argv_of(pid) for pid, started in below if identity(pid) == (pid, started) and alive(pid)]
    assert not left, f"processes outlived `pneuma run`: {left}"
    stored = json.loads((workspace / ".pneuma" / "session.json").read_text())
    assert stored["sessionId"] == run.sid
    cli_session = stored["agentSessionId"]
    assert cli_session and re.fullmatch(r"[0-9a-f-]{36}", cli_session)
    requests_before = len(fake_api.conversation_requests())

    again = await start_pneuma()
    assert again.sid == run.sid and again.token != run.token
    tab = await connect(again)
    init = tab.of("session_init")[0]["session"]
    assert init["agent_session_id"] == cli_session
    assert history_texts(tab.history()) == [
        ("assistant", GREETING_REPLY),
        ("user", "Remember the secret word"),
        ("assistant", "The secret word is BANANA."),
    ]
    await asyncio.sleep(0.5)
    assert len(fake_api.conversation_requests()) == requests_before, "no second greeting on resume"

    fake_api.push(text("It was BANANA."))
    mark = await say(tab, "What was the secret word?", "msg-e-2")
    result = await tab.wait_turn_done(since=mark)
    assert result["data"]["result"] == "It was BANANA."
    (resumed_cli,) = again.cli_argvs()
    assert resumed_cli[resumed_cli.index("--resume") + 1] == cli_session

    new_requests = fake_api.conversation_requests()[requests_before:]
    assert new_requests, "the resumed turn reached the API"
    sent = str(new_requests[0]["messages"])
    assert "Remember the secret word" in sent and "BANANA" in sent
    assert "What was the secret word?" in request_text(new_requests[0])
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{again.base_url}/api/session",
                            headers={"Authorization": f"Bearer {again.token}"}) as response:
            assert (await response.json())["agent_session_id"] == cli_session
    tab.assert_seq_contiguous()


# --- (f) ------------------------------------------------------------------------


async def test_f_the_claude_md_curl_reaches_the_browser_and_back(fake_api, start_pneuma, connect, workspace):
    if shutil.which("curl") is None:
        pytest.fail("curl is needed for the agent's viewer actions: apt-get install -y curl")
    run, client = await open_session(fake_api, start_pneuma, connect)
    payload = {"actionId": "navigate-to", "params": {"file": "slides/02-problem.html"}}
    command = curl_from_claude_md(workspace, payload)
    assert command.endswith(
        """-d '{"actionId":"navigate-to","params":{"file":"slides/02-problem.html"}}'""")
    bash = tool_use("Bash", {"command": command, "description": "Show slide 2 in the viewer"})
    fake_api.push(text("Let me show slide 2."), bash)
    fake_api.push(text("Slide 2 is on your screen."))

    mark = await say(client, "Show me the problem slide", "msg-f-1")
    request = await client.wait_type("viewer_action_request", since=mark)
    assert request["action_id"] == "navigate-to"
    assert request["params"] == {"file": "slides/02-problem.html"}
    answer = {
        "success": True,
        "message": "Showing slides/02-problem.html",
        "data": {"file": "slides/02-problem.html", "index": 1, "total": 8},
    }
    await client.send({"type": "viewer_action_response", "request_id": request["request_id"],
                       "result": answer})
    result = await client.wait_turn_done(since=mark)
    assert result["data"]["result"] == "Slide 2 is on your screen."

    (bash_result,) = [r for r in fake_api.tool_results() if r["tool_use_id"] == bash.id]
    assert not bash_result.get("is_error"), bash_result
    output = block_text(bash_result["content"]).strip()
    assert json.loads(output) == answer, output
    (shown,) = [m for m in client.of("tool_result", mark) if m["tool_use_id"] == bash.id]
    assert json.loads(block_text(shown["content"]).strip()) == answer
    client.assert_seq_contiguous()


# --- without the real CLI -------------------------------------------------------


async def test_pneuma_run_drives_the_fake_cli(start_pneuma, connect, fake_claude_bin, cli_env, tmp_path):
    """The same path with tests/fakes/fake_claude.py as the CLI (no API involved)."""
    log = tmp_path / "fake-claude.jsonl"
    env = dict(cli_env, FAKE_CLAUDE_LOG=str(log))
    run = await start_pneuma(env=env, claude_bin=fake_claude_bin)
    client = await connect(run)
    await wait_greeting(client)

    mark = await say(client, "hello", "msg-fake-1")
    result = await client.wait_turn_done(since=mark)
    assert result["data"]["result"] == "Hello from the fake CLI!"
    assert client.text_deltas(mark) == "Hello from the fake CLI!"
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    (argv,) = [e["argv"] for e in entries if "argv" in e]
    assert argv[argv.index("--permission-mode") + 1] == "bypassPermissions"
    assert "--resume" not in argv
    prompts = [block_text(e["stdin"]["message"]["content"]) for e in entries
               if "stdin" in e and e["stdin"].get("type") == "user"]
    assert prompts == [MANIFEST_GREETING, "hello"]
    client.assert_seq_contiguous()


async def test_a_missing_cli_binary_tells_the_person_what_to_do(start_pneuma, connect):
    run = await start_pneuma(claude_bin="/nonexistent")
    client = await connect(run)

    mark = await say(client, "Hello?", "msg-missing-1")
    error = await client.wait_type("error", since=mark, timeout=5)
    assert error["code"] == "agent_not_found"
    message = error["message"]
    assert "/nonexistent" in message
    assert "pip install claude-agent-sdk" in message and "--claude-bin" in message
    await client.wait_for(lambda m: m["type"] == "status_change" and m["status"] == "idle",
                          since=client.messages.index(error), timeout=5, what="status idle")
    # The server lives on: the viewer still works.
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{run.base_url}/api/files",
                            headers={"Authorization": f"Bearer {run.token}"}) as response:
            assert response.status == 200
    client.assert_seq_contiguous()


# --- shutdown -------------------------------------------------------------------


async def test_stop_closes_the_browser_sockets_at_once(fake_api, start_pneuma, connect):
    fake_api.push(text(GREETING_REPLY))
    run = await start_pneuma()
    client = await connect(run)
    begun = asyncio.get_running_loop().time()
    run.proc.send_signal(signal.SIGTERM)
    await asyncio.wait_for(asyncio.shield(client._reader), 5)
    closed_after = asyncio.get_running_loop().time() - begun
    code, _ = await run.stop()
    assert code == 0
    # aiohttp alone waits a full second for a running handler; a server that
    # closes its tabs when told to stop does it in milliseconds.
    assert closed_after < 0.9, f"the tab's socket was closed {closed_after:.2f} s after SIGTERM"
