"""``/ws/cli/{sid}``: an agent that connects by WebSocket (``--backend socket``).

A real aiohttp app (ServerConfig + create_app, slide mode, seeded workspace)
served by pytest-aiohttp. The "agent" is a plain WebSocket client that
replays stdout lines of the real Claude Code transcripts in
reference/claude-code-stream-json/; a "browser" tab is a /ws/browser client
that splits frames on newlines, as the server coalesces messages.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from pneuma.agents.builtin import register_backends
from pneuma.agents.socket_agent import SocketAgentBackend
from pneuma.testing.browser import join_session
from tests.server.harness import (
    AppServer,
    seeded_slide_workspace,
    server_config,
    start_app_server,
)
from tests.server.ws_client import TIMEOUT, FrameClient

TRANSCRIPTS = Path("/work/shared/reference/claude-code-stream-json")
if not TRANSCRIPTS.is_dir():
    TRANSCRIPTS = Path(__file__).resolve().parents[2] / "shared" / "reference" / "claude-code-stream-json"


def transcript(name: str, direction: str = "stdout") -> list[dict[str, Any]]:
    path = TRANSCRIPTS / name
    if not path.is_file():
        pytest.skip(f"transcript {path} is not available")
    entries = []
    for line in path.read_text().splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:  # the recorder mangled a few partial_json deltas
            continue
    return [e["msg"] for e in entries if e["dir"] == direction]


def backend_spec(name: str):
    return next(s for s in register_backends() if s.name == name)


class Peer(FrameClient):
    """A WebSocket client (an agent on /ws/cli or a browser tab) that also
    keeps every frame as it came."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        super().__init__(ws)
        self.frames: list[str] = []

    def _on_frame(self, data: str) -> None:
        self.frames.append(data)

    async def wait_type(self, kind: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        return await self.wait_until(lambda m: m.get("type") == kind, timeout, repr(kind))

    async def send_lines(self, messages: list[dict[str, Any]]) -> None:
        """Several NDJSON lines in one frame, as an agent may write them."""
        await self.ws.send_str("".join(json.dumps(m) + "\n" for m in messages))


@dataclass(kw_only=True)
class Server(AppServer):
    """A served slide session whose tabs and agents are ``Peer``s."""

    @property
    def backend(self) -> Any:
        return self.session.backend

    async def tab(self) -> Peer:  # type: ignore[override]
        """A subscribed browser tab (session_init, history, status consumed)."""
        tab = Peer(await self._ws_connect(self.ws_path()))
        self.tabs.append(tab)
        await join_session(tab)
        return tab

    async def agent(self, *, greeting: bool = True) -> Peer:
        """An agent connected to /ws/cli/{sid}, past its initialize request
        and (the first agent of a fresh session) the mode's greeting."""
        ws = await self.client.ws_connect(f"/ws/cli/{self.session.id}", headers=self.auth)
        agent = Peer(ws)
        self.tabs.append(agent)  # closed with the server, as the tabs are
        first = await agent.recv()
        assert first["type"] == "control_request" and first["request"]["subtype"] == "initialize"
        if greeting:
            hello = await agent.recv()
            assert hello["type"] == "user"
            assert hello["message"]["content"] == self.config.mode.manifest.agent.greeting
        return agent


@pytest.fixture
def make_server(pm, aiohttp_client, tmp_path):
    async def make(backend: str = "socket", **config_kwargs: Any) -> Server:
        mode, workspace = seeded_slide_workspace(tmp_path)
        config = server_config(mode, workspace, backend=backend_spec(backend), **config_kwargs)
        return await start_app_server(aiohttp_client, config, Server)

    return make


@pytest.fixture
async def server(make_server) -> Server:
    return await make_server()


def user_texts(lines: list[dict[str, Any]]) -> list[str]:
    return [m["message"]["content"] for m in lines if m.get("type") == "user"]


def expected_browser_types(stdout: list[dict[str, Any]]) -> list[str]:
    """What the stdio backend makes of each CLI line, written out independently."""
    kinds: list[str] = []
    for msg in stdout:
        kind, subtype = msg["type"], msg.get("subtype")
        if kind == "system" and subtype == "init":
            kinds.append("session_update")
        elif kind == "system" and subtype == "status":
            kinds.append("status_change")
        elif kind in ("stream_event", "assistant"):
            kinds.append(kind)
        elif kind == "user":
            kinds += ["tool_result" for b in msg["message"]["content"] if b.get("type") == "tool_result"]
        elif kind == "result":
            kinds += ["result", "status_change"]
    return kinds


# -- the mapping ------------------------------------------------------------------


async def test_a_replayed_cli_turn_reaches_the_browser_mapped_and_in_order(server):
    stdout = transcript("tool_write.ndjson")
    tab = await server.tab()
    await tab.send({"type": "user_message", "content": "Create hello.txt containing 'hello world'"})
    assert (await tab.wait_type("user_message"))["content"].startswith("Create hello.txt")

    agent = await server.agent()
    assert (await tab.wait_type("cli_connected"))["seq"] > 0
    assert user_texts([await agent.recv()]) == ["Create hello.txt containing 'hello world'"]
    await tab.drain()  # the two turn starts

    # Replay the CLI's stdout several lines per frame, as a socket may carry it.
    for start in range(0, len(stdout), 4):
        await agent.send_lines(stdout[start:start + 4])
    await tab.wait_type("result")
    await tab.drain()
    mapped = tab.received[tab.received.index(next(m for m in tab.received
                                                  if m["type"] == "session_update")):]
    # The session's own record of the turn's checkpoint is not a CLI line.
    mapped = [m for m in mapped if m["type"] not in ("turn_checkpoint", "turn_changes",
                                                   "turn_described", "turn_checked")]

    assert [m["type"] for m in mapped] == expected_browser_types(stdout)
    seqs = [m["seq"] for m in mapped]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

    init = stdout[0]
    assert mapped[0]["updates"]["model"] == init["model"] == "claude-opus-5-5"
    assert mapped[0]["updates"]["tools"] == init["tools"]
    assert server.session.agent_session_id == init["session_id"]
    assert server.session.agent_state["cwd"] == "/workspace"
    events = [m["event"] for m in mapped if m["type"] == "stream_event"]
    assert events == [m["event"] for m in stdout if m["type"] == "stream_event"]
    (tool_result,) = [m for m in mapped if m["type"] == "tool_result"]
    assert tool_result["tool_use_id"] == "toolu_a714128f6f1d4af3921e9e42"
    assert "File created successfully" in tool_result["content"]
    assert tool_result["is_error"] is False
    result = next(m for m in mapped if m["type"] == "result")
    assert result["data"]["result"] == "done" and result["data"]["subtype"] == "success"
    assert mapped[-1]["type"] == "status_change" and mapped[-1]["status"] == "idle"
    assert server.session.status == "idle"
    # Both assistant lines of msg_fake_0001 fold into one message in the history.
    first = [m for m in server.session.history
             if m["type"] == "assistant" and m["message"]["id"] == "msg_fake_0001"]
    assert [b["type"] for b in first[0]["message"]["content"]] == ["text", "tool_use"]


async def test_queued_messages_are_delivered_in_order_when_the_agent_connects(server):
    tab = await server.tab()
    await tab.send({"type": "user_message", "content": "first"})
    note = await tab.wait_type("system_note")
    assert f"/ws/cli/{server.session.id}" in note["message"]
    assert server.session.status == "idle"  # nothing runs while the message waits
    await tab.send({"type": "user_message", "content": "second", "images": [
        {"media_type": "image/png", "data": "iVBORw0KGgo="}]})
    await tab.wait_until(lambda m: m.get("type") == "user_message" and m["content"] == "second")
    # The first waiting message explains; the second does not repeat it.
    assert len([m for m in await tab.drain() + tab.received if m["type"] == "system_note"]) == 1
    assert "connects to" in (server.session.no_agent_reason or "")

    agent = await server.agent()  # the greeting comes first
    got = [await agent.recv() for _ in range(2)]
    assert [m["type"] for m in got] == ["user", "user"]
    assert got[0]["message"]["content"] == "first"
    assert got[1]["message"]["content"] == [
        {"type": "text", "text": "second"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": "iVBORw0KGgo="}},
    ]
    assert got[0] == {"type": "user", "message": {"role": "user", "content": "first"},
                      "parent_tool_use_id": None, "session_id": ""}
    assert all(frame.endswith("\n") and frame.count("\n") == 1 for frame in agent.frames)
    assert server.session.agent_connected and server.session.no_agent_reason is None
    await tab.wait_until(lambda m: m == {"type": "status_change", "status": "running",
                                         "seq": m["seq"]})

    # Connected: once the turn ends, a new message goes straight through
    # (during a turn it waits in the queue of follow-ups: pneuma/server/follow_ups.py).
    await agent.send_lines([{"type": "result", "subtype": "success", "is_error": False,
                             "result": "ok", "num_turns": 1}])
    await tab.wait_until(lambda m: m.get("type") == "result")
    await tab.send({"type": "user_message", "content": "third"})
    assert (await agent.recv())["message"]["content"] == "third"


async def test_garbage_and_blank_lines_are_skipped_and_the_socket_stays_open(server, caplog):
    caplog.set_level(logging.WARNING, logger="pneuma.agents.socket_agent")
    stdout = transcript("plain.ndjson")
    init = next(m for m in stdout if m.get("subtype") == "init")
    tab = await server.tab()
    agent = await server.agent()
    await agent.ws.send_str("this is not json\n\n   \n" + json.dumps(init) + "\n[1, 2]\n")
    update = await tab.wait_type("session_update")
    assert update["updates"]["model"] == init["model"]
    messages = [r.getMessage() for r in caplog.records]
    assert any("not JSON" in m and "this is not json" in m for m in messages)
    assert any("not an object" in m for m in messages)

    # Still open: later lines, keep_alive and unknown types included, keep flowing.
    await agent.send_lines([{"type": "keep_alive"}, {"type": "who_knows"},
                            {"type": "system", "subtype": "status", "status": "requesting"}])
    status = await tab.wait_type("status_change")
    assert status["status"] == "requesting"
    assert not agent.ws.closed
    assert not [m for m in tab.received if m["type"] in ("keep_alive", "who_knows", "error")]


async def test_a_permission_prompt_round_trips_as_the_exact_control_response(server):
    requests = [m for m in transcript("permission.ndjson")
                if m.get("type") == "control_request" and m["request"]["subtype"] == "can_use_tool"]
    answers = [m for m in transcript("permission.ndjson", "stdin")
               if m.get("type") == "control_response"]
    tab = await server.tab()
    agent = await server.agent()

    await agent.send_lines([requests[0]])
    prompt = await tab.wait_type("permission_request")
    assert prompt["request"] == {
        "request_id": requests[0]["request_id"],
        "tool_name": "Write",
        "input": {"file_path": "/workspace/allowed.txt", "content": "ok\n"},
        "description": "allowed.txt",
        "tool_use_id": "toolu_54dcd1def0294798ab9f5aea",
    }
    await tab.send({"type": "permission_response", "request_id": requests[0]["request_id"],
                    "behavior": "allow"})
    assert await agent.recv() == answers[0]

    await agent.send_lines([requests[1]])
    await tab.wait_until(lambda m: m.get("type") == "permission_request"
                         and m["request"]["request_id"] == requests[1]["request_id"])
    await tab.send({"type": "permission_response", "request_id": requests[1]["request_id"],
                    "behavior": "deny", "message": "Denied by harness"})
    assert await agent.recv() == answers[1]
    await tab.wait_until(lambda m: m.get("type") == "permission_cancelled"
                         and m["request_id"] == requests[1]["request_id"])


async def test_interrupt_and_set_model_go_to_the_agent_as_control_requests(server):
    tab = await server.tab()
    agent = await server.agent()

    await tab.send({"type": "interrupt"})
    request = await agent.recv()
    assert request["type"] == "control_request"
    assert request["request"] == {"subtype": "interrupt"}
    await agent.send_lines([{"type": "control_response", "response": {
        "subtype": "success", "request_id": request["request_id"], "response": {"still_queued": []}}}])

    await tab.send({"type": "set_model", "model": "claude-other"})
    request = await agent.recv()
    assert request["request"] == {"subtype": "set_model", "model": "claude-other"}
    await agent.send_lines([{"type": "control_response", "response": {
        "subtype": "success", "request_id": request["request_id"], "response": {}}}])
    update = await tab.wait_type("session_update")
    assert update["updates"] == {"model": "claude-other"}


async def test_an_initialize_answer_fills_the_session_state(server):
    ws = await server.client.ws_connect(f"/ws/cli/{server.session.id}", headers=server.auth)
    agent = Peer(ws)
    initialize = await agent.recv()
    await agent.send_lines([{"type": "control_response", "response": {
        "subtype": "success", "request_id": initialize["request_id"],
        "response": {"commands": [{"name": "compact"}, {"name": "review"}],
                     "models": [{"value": "default"}]}}}])
    await agent.send_lines([{"type": "keep_alive"}])
    for _ in range(50):
        if "commands" in server.session.agent_state:
            break
        await asyncio.sleep(0.01)
    assert server.session.agent_state["commands"] == ["compact", "review"]
    assert server.session.agent_state["models"] == [{"value": "default"}]


async def test_a_chosen_model_is_sent_on_connect_before_the_queued_turns(make_server):
    server = await make_server(model="claude-pinned")
    tab = await server.tab()
    await tab.send({"type": "set_model", "model": "claude-chosen"})  # no agent yet: remembered
    await tab.wait_type("session_update")
    await tab.send({"type": "user_message", "content": "go"})
    await tab.wait_type("system_note")

    ws = await server.client.ws_connect(f"/ws/cli/{server.session.id}", headers=server.auth)
    agent = Peer(ws)
    got = [await agent.recv() for _ in range(4)]
    assert [m["type"] for m in got] == ["control_request", "control_request", "user", "user"]
    assert got[0]["request"]["subtype"] == "initialize"
    assert got[1]["request"] == {"subtype": "set_model", "model": "claude-chosen"}
    assert got[2]["message"]["content"] == server.config.mode.manifest.agent.greeting
    assert got[3]["message"]["content"] == "go"


# -- connection rules ---------------------------------------------------------------


async def test_the_token_is_required(server):
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await server.client.ws_connect(f"/ws/cli/{server.session.id}")
    assert refused.value.status == 401
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await server.client.ws_connect(f"/ws/cli/{server.session.id}",
                                       headers={"Authorization": "Bearer wrong"})
    assert refused.value.status == 401
    # The query parameter works as well as the header.
    ws = await server.client.ws_connect(f"/ws/cli/{server.session.id}?token={server.token}")
    assert (await Peer(ws).recv())["request"]["subtype"] == "initialize"


async def test_a_wrong_session_id_is_404(server):
    response = await server.client.get("/ws/cli/not-this-one", headers=server.auth)
    assert response.status == 404
    error = (await response.json())["error"]
    assert error["code"] == "E_NOT_FOUND" and error["details"]["reason"] == "unknown_session"


async def test_one_agent_socket_at_a_time_and_reconnecting_works(server):
    tab = await server.tab()
    first = await server.agent()
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await server.client.ws_connect(f"/ws/cli/{server.session.id}", headers=server.auth)
    assert refused.value.status == 409
    response = await server.client.get(f"/ws/cli/{server.session.id}", headers=server.auth)
    error = (await response.json())["error"]
    assert error["code"] == "E_CONFLICT" and error["details"] == {"reason": "agent_connected"}

    # A prompt open when the agent leaves is withdrawn; the browser is told.
    await first.send_lines([{"type": "control_request", "request_id": "r1", "request": {
        "subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"},
        "tool_use_id": "toolu_1"}}])
    await tab.wait_type("permission_request")
    await first.ws.close()
    cancelled = await tab.wait_type("permission_cancelled")
    assert cancelled["request_id"] == "r1"
    gone = await tab.wait_type("cli_disconnected")
    assert gone["close_code"] == 1000
    assert not server.session.agent_connected and server.session.pending_permissions == {}
    assert "connects to" in server.session.no_agent_reason

    second = await server.agent(greeting=False)  # the greeting went to the first one
    await tab.wait_type("cli_connected")
    await tab.send({"type": "user_message", "content": "are you there?"})
    assert (await second.wait_type("user"))["message"]["content"] == "are you there?"


async def test_a_session_with_another_agent_refuses_sockets(make_server):
    stdio = await make_server("claude-code", claude_bin="/nonexistent/claude")
    response = await stdio.client.get(f"/ws/cli/{stdio.session.id}", headers=stdio.auth)
    assert response.status == 409
    body = await response.json()
    assert body["error"]["code"] == "E_CONFLICT"
    assert body["error"]["details"] == {"reason": "agent_running"}
    assert "already runs an agent" in body["error"]["message"]

    none = await make_server("none")
    response = await none.client.get(f"/ws/cli/{none.session.id}", headers=none.auth)
    assert response.status == 409
    error = (await response.json())["error"]
    assert error["code"] == "E_CONFLICT" and error["details"] == {"reason": "no_socket_agent"}
    assert "--backend socket" in error["message"] and "--backend socket" in error["hint"]


async def test_stopping_the_server_closes_the_agent_socket(make_server):
    server = await make_server()
    agent = await server.agent()
    backend = server.backend
    assert isinstance(backend, SocketAgentBackend) and backend.connected
    await asyncio.wait_for(server.client.close(), 5)
    frame = await agent.ws.receive(timeout=TIMEOUT)
    assert frame.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
    assert not backend.connected
