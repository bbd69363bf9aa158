"""``pneuma run --backend native`` as a person starts it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import aiohttp

from tests.fakes.anthropic_api import text

READY = re.compile(r"ready http://127\.0\.0\.1:(\d+)/\?session=([\w-]+)&token=(\S+)")
PNEUMA = str(Path(sys.executable).parent / "pneuma")


def _start(workspace: Path, env: dict[str, str]) -> tuple[subprocess.Popen, re.Match]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    full.update({"PNEUMA_LOAD_PLUGINS": "slide", "PYTHONUNBUFFERED": "1", **env})
    proc = subprocess.Popen(
        [PNEUMA, "run", "--mode", "slide", "-w", str(workspace), "--backend", "native",
         "--no-open", "--no-prompt", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full)
    line = proc.stdout.readline()
    match = READY.search(line)
    assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
    return proc, match


def _stop(proc: subprocess.Popen) -> str:
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err


async def _messages(ws, until: str, timeout: float = 10.0) -> list[dict]:
    got = []
    while True:
        frame = await ws.receive(timeout=timeout)
        for line in frame.data.split("\n"):
            if line.strip():
                got.append(json.loads(line))
                if got[-1]["type"] == until:
                    return got


async def test_a_plain_chat_turn_streams_to_the_browser_socket(tmp_path, fake_api):
    proc, ready = _start(tmp_path / "ws", {"ANTHROPIC_API_KEY": "test-key",
                                           "ANTHROPIC_BASE_URL": fake_api.base_url})
    port, session, token = ready.groups()
    fake_api.push(text("Hi, I am the native agent."))
    try:
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(f"http://127.0.0.1:{port}/ws/browser/{session}?token={token}") as ws:
                init = await _messages(ws, "session_init")
                assert init[-1]["session"]["backend"] == "native"
                assert init[-1]["session"]["model"]
                await ws.send_json({"type": "session_subscribe", "last_seq": 0})
                await _messages(ws, "message_history")
                await ws.send_json({"type": "user_message", "content": "hello"})
                got = await _messages(ws, "result")
            async with http.get(f"http://127.0.0.1:{port}/api/extension/extension-list",
                                headers={"Authorization": f"Bearer {token}"}) as response:
                assert response.status == 200
                clients = (await response.json())["clients"]
                assert [c for c in clients if c["kind"] == "browser"] == []
    finally:
        _stop(proc)
    deltas = [m["event"]["delta"]["text"] for m in got
              if m["type"] == "stream_event" and m["event"]["type"] == "content_block_delta"]
    assert "".join(deltas) == "Hi, I am the native agent." and len(deltas) > 1
    assistant = next(m for m in got if m["type"] == "assistant")
    assert assistant["message"]["content"] == [{"type": "text", "text": "Hi, I am the native agent."}]
    assert got[-1]["data"]["is_error"] is False
    assert (tmp_path / "ws" / ".pneuma" / "native.sqlite3").exists()


async def test_without_a_key_it_says_so_at_start(tmp_path):
    proc, ready = _start(tmp_path / "ws", {})
    port, session, token = ready.groups()
    try:
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(f"http://127.0.0.1:{port}/ws/browser/{session}?token={token}") as ws:
                await _messages(ws, "session_init")
                await ws.send_json({"type": "session_subscribe", "last_seq": 0})
                history = (await _messages(ws, "message_history"))[-1]
    finally:
        err = _stop(proc)
    assert "[pneuma] native backend: " in err and "ANTHROPIC_API_KEY" in err
    assert "Traceback" not in err
    errors = [m for m in history["messages"] if m["type"] == "error"]
    assert errors and errors[0]["code"] == "no_api_key"
