"""The native runtime's own workspace tools follow the sandbox's read and
write rules: no hard-linked file is read, and .claude/ and .mcp.json (what
decides the agent's own permissions) are not written."""

from __future__ import annotations

import os
from pathlib import Path

from pneuma.agents.native.tools import run_workspace_tool


def test_a_hard_linked_file_is_not_read(tmp_path: Path):
    secret = tmp_path / "outside.env"
    secret.write_text("TOKEN=hunter2\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.link(secret, workspace / "notes.md")
    result, is_error = run_workspace_tool(workspace, "workspace_read_file", {"path": "notes.md"})
    assert is_error and result["error"]["error"]["details"]["reason"] == "hard_link"
    assert "hunter2" not in str(result)


def test_agent_settings_are_not_written(tmp_path: Path):
    workspace = tmp_path / "ws"
    (workspace / ".claude").mkdir(parents=True)
    for rel in (".claude/settings.local.json", ".mcp.json"):
        result, is_error = run_workspace_tool(workspace, "workspace_write_file",
                                              {"path": rel, "content": "{}"})
        assert is_error and result["error"]["error"]["details"]["reason"] == "read_only"
        assert not (workspace / rel).exists()


def test_a_write_leaves_no_temp_file_behind(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result, is_error = run_workspace_tool(workspace, "workspace_write_file",
                                          {"path": "plan/today.md", "content": "# Today\n"})
    assert not is_error and result == {"path": "plan/today.md", "bytes": 8}
    assert sorted(p.name for p in (workspace / "plan").iterdir()) == ["today.md"]


def test_a_plain_file_is_read_and_a_missing_one_is_said_so(tmp_path: Path):
    workspace = tmp_path / "ws"
    (workspace / "plan").mkdir(parents=True)
    (workspace / "plan" / "today.md").write_text("# Today\n", encoding="utf-8")
    result, is_error = run_workspace_tool(workspace, "workspace_read_file",
                                          {"path": "plan/today.md"})
    assert not is_error and result == {"path": "plan/today.md", "content": "# Today\n"}
    result, is_error = run_workspace_tool(workspace, "workspace_read_file",
                                          {"path": "plan/none.md"})
    assert is_error and result == {"error": "no file plan/none.md"}
