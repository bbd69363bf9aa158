"""The three ways to call a tool: `pneuma tool` (one-shot processes sharing
state), `pneuma mcp` with a real MCP client session, and POST
/api/tools/<name> on the server; on the generic notes mode, which the
`pneuma` processes find through its entry point as any installed mode."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
from tool_helpers import (
    FILE_TOOLS,
    NOTES,
    PNEUMA,
    assert_published_as_declared,
    mcp_session,
)


def pneuma_tool(env: dict[str, str], ws: Path, *args: str,
                stdin: str | None = None) -> tuple[int, dict]:
    proc = subprocess.run([PNEUMA, "tool", "--mode", NOTES, "--workspace", str(ws), *args],
                          capture_output=True, text=True, input=stdin, timeout=60,
                          env={**os.environ, **env})
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_cli_one_shot_calls_share_state(notes_cli_env, ws):
    def tool(*args: str, stdin: str | None = None) -> tuple[int, dict]:
        return pneuma_tool(notes_cli_env, ws, *args, stdin=stdin)

    args = {"path": "notes/days/cli.md", "content": "# 你好\n"}
    code, out = tool("write_to_file", json.dumps({**args, "dryRun": True}))
    assert code == 0 and out["applied"] is False and out["diff"]["hunks"]
    code, out = tool("write_to_file", "-", stdin=json.dumps({**args, "dryRun": False}))
    assert code == 0 and out["applied"] is True
    assert (ws / "notes/days/cli.md").read_text(encoding="utf-8") == "# 你好\n"
    # The dry run was used up by that write: another process refuses a second one.
    code, out = tool("write_to_file", json.dumps({**args, "dryRun": False}))
    assert code == 1 and out["error"]["code"] == "E_POLICY_VIOLATION"
    code, out = tool("read_file", "{not json")
    assert code == 1 and out["error"]["code"] == "E_BAD_ARGS"
    code, out = tool("--list")
    names = [t["name"] for t in out["tools"]]
    assert code == 0 and set(FILE_TOOLS) <= set(names) and "execute_command" not in names
    code, out = tool("--enable-exec", "--list")
    assert "execute_command" in [t["name"] for t in out["tools"]]


def test_mcp_session(notes_cli_env, ws, notes_mode):
    out = anyio.run(mcp_session, NOTES, ws, notes_cli_env, {
        "list": ("list_files", {"path": "notes/days", "globs": ["**/*.md"]}),
        "dry": ("write_to_file", {"path": "notes/days/mcp.md", "content": "a\n", "dryRun": True}),
        "write": ("write_to_file", {"path": "notes/days/mcp.md", "content": "a\n",
                                    "dryRun": False}),
        "bad": ("read_file", {"path": "../x"}),
        "missing": ("write_to_file", {"path": "x"}),
        "find": ("find_note", {"mood": "calm"}),
        "both": ("find_note", {"title": "Monday", "mood": "calm"}),
    })
    listed = {t.name: t for t in out["tools"]}
    enabled = {t.name for t in notes_mode.manifest.tools if not t.dev_only}
    assert set(listed) == enabled
    assert_published_as_declared(listed, notes_mode)
    # The mode's own tool with a top-level oneOf: the rule moves to the
    # description, and the runtime still enforces it.
    assert "Give exactly one of: title; mood." in listed["find_note"].description
    assert out["find"].structured_content == {"paths": ["notes/days/monday.md"]}
    both = json.loads(out["both"].content[0].text)["error"]
    assert out["both"].is_error is True and both["code"] == "E_BAD_ARGS"
    assert out["list"].is_error is False
    assert "monday.md" in out["list"].structured_content["entries"]
    assert json.loads(out["list"].content[0].text) == out["list"].structured_content
    dry = out["dry"].structured_content
    assert dry["applied"] is False and dry["diff"]["hunks"][0]["linesNew"] == ["a"]
    assert out["write"].structured_content["applied"] is True
    assert (ws / "notes/days/mcp.md").read_text() == "a\n"
    assert out["bad"].is_error is True
    assert json.loads(out["bad"].content[0].text)["error"]["code"] == "E_DENY_PATH"
    error = json.loads(out["missing"].content[0].text)["error"]
    assert error["code"] == "E_BAD_ARGS" and error["details"]["field"] == "content"


async def test_http_route(server, ws):
    client, auth = server.client, server.auth
    response = await client.post("/api/tools/list_files", json={"path": "notes/days"})
    assert response.status == 401
    response = await client.post("/api/tools/list_files", json={"path": "notes/days"},
                                 headers={"Authorization": "Bearer wrong"})
    assert response.status == 401
    response = await client.post("/api/tools/list_files", json={"path": "notes/days"},
                                 headers=auth)
    assert response.status == 200 and "monday.md" in (await response.json())["entries"]
    args = {"path": "notes/days/http.md", "content": "h\n"}
    response = await client.post("/api/tools/write_to_file", json={**args, "dryRun": True},
                                 headers=auth)
    assert (await response.json())["applied"] is False
    response = await client.post("/api/tools/write_to_file", json={**args, "dryRun": False},
                                 headers=auth)
    assert response.status == 200 and (await response.json())["applied"] is True
    for path, body, status, code in [
        ("read_file", {"path": "../etc/passwd"}, 403, "E_DENY_PATH"),
        ("read_file", {"path": "notes/days/none.md"}, 404, "E_NOT_FOUND"),
        ("write_to_file", {"path": "a.txt"}, 400, "E_BAD_ARGS"),
        ("execute_command", {"scriptName": "dev"}, 403, "E_TOOL_DISABLED"),
        ("nope", {}, 400, "E_UNSUPPORTED"),
    ]:
        response = await client.post(f"/api/tools/{path}", json=body, headers=auth)
        assert response.status == status
        assert (await response.json())["error"]["code"] == code
    response = await client.post("/api/tools/read_file", data=b"{oops", headers=auth)
    assert response.status == 400 and (await response.json())["error"]["code"] == "E_BAD_ARGS"
    response = await client.get("/api/tools", headers=auth)
    names = [t["name"] for t in (await response.json())["tools"]]
    assert set(FILE_TOOLS) <= set(names) and "browser_action" not in names
