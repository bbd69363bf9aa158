"""The parts of the Codex backend that need no model: finding the binary,
its credentials, the AGENTS.md sections the skill installer writes for it,
and the workspace's MCP servers as Codex config overrides."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from pneuma.agents.codex.backend import mcp_overrides
from pneuma.agents.codex.binary import credentials_found, find_codex_binary
from pneuma.cli import cli
from pneuma.host.registry import get_mode
from pneuma.workspace.skill import install_skill


def _script(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho codex-cli 0.0.1\n")
    path.chmod(0o755)
    return path


def test_the_binary_is_pneuma_codex_bin_then_path(tmp_path: Path) -> None:
    explicit = _script(tmp_path / "explicit" / "my-codex")
    on_path = _script(tmp_path / "bin" / "codex")
    env = {"PATH": str(on_path.parent), "PNEUMA_CODEX_BIN": str(explicit)}
    assert find_codex_binary(env) == str(explicit)
    assert find_codex_binary({"PATH": str(on_path.parent)}) == str(on_path)
    missing = {"PATH": str(tmp_path / "nowhere"), "PNEUMA_CODEX_BIN": str(tmp_path / "gone")}
    assert find_codex_binary(missing) is None


def test_credentials_are_a_key_a_login_or_a_provider_of_ones_own(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    env = {"CODEX_HOME": str(home)}
    assert credentials_found(env) is None
    assert credentials_found({**env, "OPENAI_API_KEY": "sk-x"}) == "OPENAI_API_KEY"
    (home / "config.toml").write_text('model_provider = "openai"\n')
    assert credentials_found(env) is None
    (home / "config.toml").write_text('model_provider = "local"\n')
    assert "local" in (credentials_found(env) or "")
    (home / "auth.json").write_text("{}")
    assert "codex login" in (credentials_found(env) or "")


def test_codex_workspaces_get_the_claude_md_sections_in_agents_md(pm, tmp_path: Path) -> None:
    slide = get_mode("slide", pm)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("# My own notes\n\nKeep these.\n")
    params = {"slideWidth": 1280, "slideHeight": 720}

    install_skill(slide, ws, params, pm=pm, instruction_files=("AGENTS.md",))
    agents = (ws / "AGENTS.md").read_text()
    assert agents.startswith("# My own notes\n\nKeep these.\n")
    claude = (ws / "CLAUDE.md").read_text()
    for marker in ("<!-- pneuma:start -->", "<!-- pneuma:end -->",
                   "<!-- pneuma:viewer-api:start -->", "<!-- pneuma:viewer-api:end -->"):
        assert agents.count(marker) == 1 and marker in claude
    assert claude in agents  # the same sections, after the person's text

    again = install_skill(slide, ws, params, pm=pm, instruction_files=("AGENTS.md",))
    assert again.changes == [] and (ws / "AGENTS.md").read_text() == agents
    # Reused as `pneuma run` does: the fingerprint knows AGENTS.md too.
    (ws / "AGENTS.md").write_text("# My own notes\n")
    fixed = install_skill(slide, ws, params, pm=pm, instruction_files=("AGENTS.md",),
                          reuse_fingerprint=True)
    assert [c.path for c in fixed.changes] == ["AGENTS.md"]
    assert (ws / "AGENTS.md").read_text().count("<!-- pneuma:start -->") == 1


def test_other_backends_leave_agents_md_alone(pm, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    install_skill(get_mode("slide", pm), ws, {}, pm=pm)
    assert not (ws / "AGENTS.md").exists()


def test_skill_install_for_the_codex_backend_writes_agents_md(pm, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    result = CliRunner().invoke(cli, ["skill", "install", "--mode", "slide", "--workspace",
                                      str(ws), "--no-prompt", "--backend", "codex"])
    assert result.exit_code == 0, result.output
    assert "<!-- pneuma:viewer-api:start -->" in (ws / "AGENTS.md").read_text()


def test_mcp_servers_become_codex_overrides(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "pneuma-webgal": {"command": "pneuma", "args": ["mcp", "--mode", "webgal"],
                          "env": {"A": "1"}},
        "remote": {"url": "http://127.0.0.1:9/mcp"},
        "has.dot": {"command": "x"},
    }}))
    assert mcp_overrides(tmp_path) == [
        "-c", 'mcp_servers.pneuma-webgal={"command" = "pneuma", '
              '"args" = ["mcp", "--mode", "webgal"], "env" = {"A" = "1"}}']
    os.remove(tmp_path / ".mcp.json")
    assert mcp_overrides(tmp_path) == []
