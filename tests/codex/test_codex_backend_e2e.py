"""`pneuma run --mode slide --backend codex` end to end: the REAL Codex CLI
(`codex app-server`) against the fake Responses API, a browser tab on
/ws/browser/<sid>, inside the loopback-only namespace.

The slide mode greets a fresh session with a hidden prompt; each test waits
for that turn to end before it talks. The fake model is scripted by words
in the prompt (see tests/fakes/openai_responses.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.codex.conftest import requires_codex
from tests.e2e.pneuma_run import BrowserClient, argv_of, wait_greeting
from tests.fakes.openai_responses import SLOW_REPLY, TEXT_REPLY

pytestmark = requires_codex

TURN = 30.0


async def say(client: BrowserClient, text: str, msg_id: str) -> int:
    mark = client.mark()
    await client.send({"type": "user_message", "content": text, "client_msg_id": msg_id})
    return mark


async def open_session(start_codex: Any, connect: Any, *args: str) -> tuple[Any, BrowserClient]:
    run = await start_codex(*args)
    client = await connect(run)
    await wait_greeting(client, timeout=TURN)
    return run, client


def tool_uses(client: BrowserClient, since: int) -> list[dict[str, Any]]:
    return [block for m in client.of("assistant", since) for block in m["message"]["content"]
            if block.get("type") == "tool_use"]


async def test_a_text_reply_streams_and_ends_the_turn(fake_responses, start_codex, connect,
                                                     proxy):
    run, client = await open_session(start_codex, connect)
    mark = await say(client, "Say hello", "msg-a-1")
    result = await client.wait_turn_done(since=mark, timeout=TURN)

    assert client.text_deltas(mark) == TEXT_REPLY
    assert len([m for m in client.of("stream_event", mark)
                if m["event"]["type"] == "content_block_delta"]) > 3, "the text came in pieces"
    texts = [b["text"] for m in client.of("assistant", mark) for b in m["message"]["content"]
             if b["type"] == "text"]
    assert texts == [TEXT_REPLY]
    assert result["data"]["result"] == TEXT_REPLY and not result["data"]["is_error"]
    # The slide skill reached Codex through AGENTS.md, and nothing but the
    # fake model provider was asked for anything.
    agents_md = (run.workspace / "AGENTS.md").read_text()
    assert agents_md == (run.workspace / "CLAUDE.md").read_text()
    assert "<!-- pneuma:start -->" in agents_md and "<!-- pneuma:viewer-api:start -->" in agents_md
    assert "## Pneuma Slides Mode" in fake_responses.instructions_seen()
    assert fake_responses.other_requests == []
    assert proxy.requests == []  # no update check, telemetry or login went anywhere
    client.assert_seq_contiguous()


async def test_b_a_scripted_edit_writes_a_slide_and_the_tab_sees_it(fake_responses, start_codex,
                                                                      connect):
    run, client = await open_session(start_codex, connect)
    mark = await say(client, "[patch: slides/slide-99.html][content: <section>codex</section>]",
                     "msg-b-1")
    update = await client.wait_for(
        lambda m: m.get("type") == "content_update"
        and any("slide-99.html" in str(f.get("path")) for f in m.get("files", [])),
        since=mark, timeout=TURN, what="content_update for slide-99.html")
    await client.wait_turn_done(since=mark, timeout=TURN)

    assert (run.workspace / "slides" / "slide-99.html").read_text() == "<section>codex</section>\n"
    assert update
    uses = tool_uses(client, mark)
    assert uses and uses[0]["name"] == "apply_patch"
    assert "slides/slide-99.html" in uses[0]["input"]["file_path"]
    results = client.of("tool_result", mark)
    assert results and results[-1]["tool_use_id"] == uses[-1]["id"] and not results[-1]["is_error"]


async def test_c_approvals_allow_and_deny(fake_responses, start_codex, connect):
    run, client = await open_session(start_codex, connect, "--permission-mode", "default")
    allowed = run.workspace / "allowed.txt"
    denied = run.workspace / "denied.txt"

    mark = await say(client, "[shell: touch allowed.txt]", "msg-c-1")
    request = (await client.wait_type("permission_request", since=mark, timeout=TURN))["request"]
    assert request["tool_name"] == "Bash" and "touch allowed.txt" in request["input"]["command"]
    assert not allowed.exists(), "nothing runs before the person allows it"
    await client.send({"type": "permission_response", "request_id": request["request_id"],
                       "behavior": "allow"})
    await client.wait_turn_done(since=mark, timeout=TURN)
    assert allowed.exists()

    mark = await say(client, "[shell: touch denied.txt]", "msg-c-2")
    request = (await client.wait_type("permission_request", since=mark, timeout=TURN))["request"]
    await client.send({"type": "permission_response", "request_id": request["request_id"],
                       "behavior": "deny", "message": "Not that one, please"})
    await client.wait_turn_done(since=mark, timeout=TURN)
    assert not denied.exists()
    results = client.of("tool_result", mark)
    assert results and results[-1]["is_error"]
    # The person's note reached the model.
    assert "Not that one, please" in fake_responses.instructions_seen()


async def test_d_interrupt_mid_stream(fake_responses, start_codex, connect):
    run, client = await open_session(start_codex, connect)
    mark = await say(client, "[slow] write a long essay", "msg-d-1")
    await client.wait_for(
        lambda m: m["type"] == "stream_event" and m["event"]["type"] == "content_block_delta",
        since=mark, timeout=TURN, what="a first text delta")
    begun = asyncio.get_running_loop().time()
    await client.send({"type": "interrupt"})
    result = await client.wait_turn_done(since=mark, timeout=10)
    assert asyncio.get_running_loop().time() - begun < 5
    assert result["data"]["is_error"]
    assert len(client.text_deltas(mark)) < len(SLOW_REPLY)

    again = await say(client, "Are you there?", "msg-d-2")
    result = await client.wait_turn_done(since=again, timeout=TURN)
    assert result["data"]["result"] == TEXT_REPLY and not result["data"]["is_error"]


async def test_e_restart_resumes_the_codex_thread(fake_responses, start_codex, connect, proxy):
    run, client = await open_session(start_codex, connect)
    mark = await say(client, "Remember the word PERSIMMON", "msg-e-1")
    await client.wait_turn_done(since=mark, timeout=TURN)
    await client.close()
    code, _ = await run.stop()
    assert code == 0

    run2 = await start_codex()
    client2 = await connect(run2)
    before = len(fake_responses.requests)
    mark = await say(client2, "What was the word?", "msg-e-2")
    await client2.wait_turn_done(since=mark, timeout=TURN)
    # The resumed thread sends the earlier conversation along.
    resumed = fake_responses.requests[before]
    said = [fake_responses.last_user_text({"input": [item]}) for item in resumed["input"]]
    assert "Remember the word PERSIMMON" in said and "What was the word?" in said
    assert proxy.requests == [] and fake_responses.other_requests == []


async def test_f_the_agents_md_curl_reaches_the_browser_and_back(fake_responses, start_codex,
                                                                 connect):
    if shutil.which("curl") is None:
        pytest.fail("curl is needed for the agent's viewer actions: apt-get install -y curl")
    run, client = await open_session(start_codex, connect)
    lines = (run.workspace / "AGENTS.md").read_text().splitlines()
    template = next(line for line in lines if line.startswith("curl ") and "<id>" in line)
    payload = json.dumps({"actionId": "navigate-to", "params": {"file": "slides/02-problem.html"}},
                         separators=(",", ":"))
    command = template.replace(template[template.index("-d '"):], f"-d '{payload}'")

    mark = await say(client, f"[shell: {command}]", "msg-f-1")
    request = await client.wait_type("viewer_action_request", since=mark, timeout=TURN)
    assert request["action_id"] == "navigate-to"
    assert request["params"] == {"file": "slides/02-problem.html"}
    answer = {"success": True, "message": "Showing slides/02-problem.html", "data": {"index": 1}}
    await client.send({"type": "viewer_action_response", "request_id": request["request_id"],
                       "result": answer})
    await client.wait_turn_done(since=mark, timeout=TURN)
    # PNEUMA_API and PNEUMA_TOKEN reached the command; the answer came back to the model.
    assert any(json.dumps(answer) in output or '"Showing slides/02-problem.html"' in output
               for output in fake_responses.tool_outputs())


async def test_g_the_workspace_mcp_servers_are_configured_for_codex(fake_responses, start_codex,
                                                                    connect, workspace, codex_env):
    # A mode's MCP servers land in .mcp.json (the skill installer); the
    # backend hands them to Codex. The webgal mode's tool server stands in.
    workspace.mkdir(parents=True)
    server = {"command": str(Path(sys.executable).with_name("pneuma")),
              "args": ["mcp", "--mode", "webgal", "--workspace", "."]}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"pneuma-webgal": server}}))
    codex_env["PNEUMA_LOAD_PLUGINS"] = "slide,webgal"
    run, client = await open_session(start_codex, connect)
    # MCP tools are deferred in Codex (found through its tool_search); its
    # resource listing names the configured servers, and ours answers it.
    mark = await say(client, '[call: list_mcp_resources {"server": "pneuma-webgal"}]', "msg-g-1")
    await client.wait_turn_done(since=mark, timeout=TURN)
    mark = await say(client, '[call: list_mcp_resources {"server": "not-configured"}]', "msg-g-2")
    await client.wait_turn_done(since=mark, timeout=TURN)
    ours, unknown = fake_responses.tool_outputs()[-2:]
    assert "unknown MCP server 'not-configured'" in unknown
    assert "unknown MCP server" not in ours and "pneuma-webgal" in ours, ours


async def test_h_a_model_switch_applies_to_the_next_turn(fake_responses, start_codex, connect):
    run, client = await open_session(start_codex, connect)
    mark = client.mark()
    await client.send({"type": "set_model", "model": "gpt-5.5-mini"})
    update = await client.wait_type("session_update", since=mark, timeout=5)
    assert update["updates"]["model"] == "gpt-5.5-mini"
    mark = await say(client, "Say hello", "msg-h-1")
    await client.wait_turn_done(since=mark, timeout=TURN)
    assert fake_responses.requests[-1]["model"] == "gpt-5.5-mini"
    assert fake_responses.requests[0]["model"] == "gpt-5.5"  # the greeting, before the switch


async def test_i_a_patch_outside_the_sandbox_asks_and_shows_its_file(fake_responses, start_codex,
                                                                     connect):
    # In plan mode Codex runs read-only and asks before any write.
    run, client = await open_session(start_codex, connect, "--permission-mode", "plan")
    mark = await say(client, "[patch: notes.md][content: planned]", "msg-i-1")
    request = (await client.wait_type("permission_request", since=mark, timeout=TURN))["request"]
    assert request["tool_name"] == "apply_patch"
    assert request["input"]["file_path"].endswith("notes.md")
    assert not (run.workspace / "notes.md").exists()
    await client.send({"type": "permission_response", "request_id": request["request_id"],
                       "behavior": "allow"})
    await client.wait_turn_done(since=mark, timeout=TURN)
    assert (run.workspace / "notes.md").read_text() == "planned\n"


async def test_j_a_crashed_codex_is_reported_and_the_next_message_resumes(fake_responses,
                                                                          start_codex, connect):
    run, client = await open_session(start_codex, connect)
    mark = await say(client, "Remember the word QUINCE", "msg-j-1")
    await client.wait_turn_done(since=mark, timeout=TURN)
    (codex,) = [pid for pid in run.note_children() if "app-server" in argv_of(pid)]
    mark = client.mark()
    os.kill(codex, signal.SIGKILL)
    error = await client.wait_type("error", since=mark, timeout=10)
    assert error["code"] == "agent_exited"

    before = len(fake_responses.requests)
    mark = await say(client, "Still there?", "msg-j-2")
    result = await client.wait_turn_done(since=mark, timeout=TURN)
    assert result["data"]["result"] == TEXT_REPLY and not result["data"]["is_error"]
    said = [fake_responses.last_user_text({"input": [item]})
            for item in fake_responses.requests[before]["input"]]
    assert "Remember the word QUINCE" in said  # the same thread, resumed


# A 1×1 PNG.
PIXEL = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")


async def test_k_an_image_reaches_the_model(fake_responses, start_codex, connect):
    run, client = await open_session(start_codex, connect)
    mark = client.mark()
    await client.send({"type": "user_message", "content": "What is in this picture?",
                       "images": [{"media_type": "image/png", "data": PIXEL}],
                       "client_msg_id": "msg-k-1"})
    await client.wait_turn_done(since=mark, timeout=TURN)
    parts = [part for item in fake_responses.requests[-1]["input"]
             if item.get("role") == "user" and isinstance(item.get("content"), list)
             for part in item["content"]]
    images = [part for part in parts if part.get("type") == "input_image"]
    assert images and images[-1]["image_url"] == f"data:image/png;base64,{PIXEL}"


async def test_l_a_refused_key_is_told_and_the_turn_ends(fake_responses, start_codex, connect):
    run, client = await open_session(start_codex, connect)
    mark = await say(client, "[status: 401]", "msg-l-1")
    result = await client.wait_turn_done(since=mark, timeout=TURN)
    assert result["data"]["is_error"]
    errors = client.of("error", mark)
    assert len(errors) == 1 and errors[0]["code"] == "auth_failed", errors
    assert "Incorrect API key provided" in errors[0]["message"]
    assert "OPENAI_API_KEY" in errors[0]["message"] and "codex login" in errors[0]["message"]
