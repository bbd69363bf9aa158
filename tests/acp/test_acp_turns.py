"""A turn with an ACP agent (the scripted peer) through a real server: what
the page receives, what reaches the agent, what is on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.acp.conftest import MakeAcp
from tests.server.harness import seeded_slide_workspace


def _assistant(messages: list[dict[str, Any]], block_type: str) -> list[dict[str, Any]]:
    return [b for m in messages if m.get("type") == "assistant"
            for b in m["message"]["content"] if b.get("type") == block_type]


async def test_text_thinking_tools_and_plan_reach_the_page(make_acp: MakeAcp) -> None:
    acp = await make_acp({"turns": {"[slides]": [
        {"thought": "Let me think"},
        {"text": "Here "}, {"text": "you go."},
        {"tool": {"toolCallId": "t1", "title": "Read slides.md", "kind": "read",
                  "status": "pending", "locations": [{"path": "/ws/slides.md"}],
                  "rawInput": {"path": "slides.md"}}},
        {"tool_update": {"toolCallId": "t1", "status": "completed",
                         "content": [{"type": "content",
                                      "content": {"type": "text", "text": "# Title"}}]}},
        {"plan": [{"content": "Outline", "status": "completed", "priority": "high"},
                  {"content": "Write", "status": "in_progress", "priority": "medium"}]},
        {"text": "Done."},
    ]}})
    await acp.tab.say("make [slides]")
    result = await acp.result()
    seen = acp.tab.received
    assert result["subtype"] == "success" and not result["is_error"]
    assert result["result"] == "Here you go.\n\nDone."
    deltas = [m["event"]["delta"] for m in seen if m.get("type") == "stream_event"
              and m["event"].get("type") == "content_block_delta"]
    assert {"type": "text_delta", "text": "you go."} in deltas
    assert {"type": "thinking_delta", "thinking": "Let me think"} in deltas
    assert [b["thinking"] for b in _assistant(seen, "thinking")] == ["Let me think"]
    tools = _assistant(seen, "tool_use")
    read = [t for t in tools if t["id"] == "t1"][-1]
    assert read["name"] == "Read slides.md" and read["input"]["file_path"] == "/ws/slides.md"
    results = [m for m in seen if m.get("type") == "tool_result"]
    assert results == [{"type": "tool_result", "tool_use_id": "t1", "content": "# Title",
                        "is_error": False, "parent_tool_use_id": None, **{
                            k: results[0][k] for k in results[0] if k in ("seq", "ts")}}]
    plan = [t for t in tools if t["name"] == "TodoWrite"][-1]
    assert plan["input"]["todos"] == [
        {"content": "Outline", "activeForm": "Outline", "status": "completed"},
        {"content": "Write", "activeForm": "Write", "status": "in_progress"}]
    # The prompt carried the person's text, in the workspace's session.
    prompt = acp.received("session/prompt")[-1]["params"]
    assert "make [slides]" in prompt["prompt"][0]["text"]
    new = acp.received("session/new")[0]["params"]
    assert new["cwd"] == str(acp.workspace)
    init = acp.received("initialize")[0]["params"]
    assert init["clientCapabilities"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert not init["clientCapabilities"].get("terminal")
    await acp.close()


async def test_agent_modes_follow_the_permission_mode_and_models_switch(make_acp: MakeAcp) -> None:
    modes = [{"id": "auto", "name": "Auto"}, {"id": "default", "name": "Ask"},
             {"id": "plan", "name": "Plan"}]
    acp = await make_acp({"modes": modes, "models": ["small", "large"],
                          "before_new_answer": [{"commands": ["init", "review"]}],
                          "turns": {"[two]": [{"text": "first", "messageId": "m1"},
                                              {"text": "second", "messageId": "m2"}]}},
                         permission_mode="default")
    await acp.tab.say("[two]")
    # Two messages of the agent are two messages in the page.
    assert (await acp.result())["result"] == "first\n\nsecond"
    assert [b["text"] for b in _assistant(acp.tab.received, "text")] == ["first", "second"]
    # Commands announced before session/new answered are taken, not warned about.
    assert not [m for m in acp.tab.received if m.get("type") == "error"]
    assert acp.server.session.agent_state["slash_commands"] == ["/init", "/review"]
    # The session opened in the agent's "auto"; Pneuma's mode asks: its "default".
    assert [m["params"]["modeId"] for m in acp.received("session/set_mode")] == ["default"]
    await acp.tab.send({"type": "set_model", "model": "large"})
    update = await acp.tab.wait_for("session_update", 15, where=lambda m: m["updates"].get("model")
                                    == "large")
    assert update["updates"]["models"] == ["small", "large"]
    assert acp.received("session/set_config_option")[0]["params"] == {
        "sessionId": acp.server.session.agent_session_id, "configId": "model", "value": "large"}
    await acp.close()


async def test_the_workspaces_mcp_servers_reach_the_agent(make_acp: MakeAcp, tmp_path: Path) -> None:
    _mode, ws = seeded_slide_workspace(tmp_path)
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "pneuma": {"command": "/venv/bin/pneuma", "args": ["mcp", "--mode", "slide"],
                   "env": {"PNEUMA_MODE": "slide"}},
        "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}))
    acp = await make_acp({}, workspace=ws)
    await acp.tab.say("hi")
    await acp.result()
    assert acp.received("session/new")[0]["params"]["mcpServers"] == [
        {"name": "pneuma", "command": "/venv/bin/pneuma", "args": ["mcp", "--mode", "slide"],
         "env": [{"name": "PNEUMA_MODE", "value": "slide"}]}]
    await acp.close()
