"""Named ACP agents (docs/backends.md, "ACP agents"): `--backend acp:<name>`
resolves to the agent's command line, or says what is missing and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pneuma.agents.acp.presets import (
    CLAUDE_ACP_VERSION,
    presets,
    project_install_dir,
    resolve,
)
from pneuma.core.errors import ToolError


def program(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_a_preset_on_path_resolves_to_its_acp_command_line(tmp_path: Path) -> None:
    gemini = program(tmp_path / "bin", "gemini")
    env = {"PATH": str(tmp_path / "bin"), "GEMINI_API_KEY": "k"}
    assert resolve("gemini", env) == [str(gemini), "--experimental-acp"]
    kimi = program(tmp_path / "bin", "kimi")
    assert resolve("kimi", env) == [str(kimi), "--acp"]


def test_an_unknown_or_missing_agent_is_a_coded_error_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as unknown:
        resolve("nosuch", {"PATH": ""})
    assert unknown.value.code == "E_BAD_ARGS" and "claude, codex, gemini, kimi" in unknown.value.message
    with pytest.raises(ToolError) as missing:
        resolve("gemini", {"PATH": str(tmp_path)})
    assert missing.value.code == "E_UNAVAILABLE"
    assert "npm install -g @google/gemini-cli" in missing.value.message


def test_an_installed_agent_without_credentials_is_not_usable_and_names_the_variable(
        tmp_path: Path) -> None:
    program(tmp_path / "bin", "codex-acp")
    env = {"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path)}
    codex = next(p for p in presets(env) if p.name == "codex")
    assert not codex.usable and codex.missing == "credentials (OPENAI_API_KEY or CODEX_API_KEY)"
    assert codex.fix == "export OPENAI_API_KEY=… in the shell that starts Pneuma, or run `codex login`"
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "auth.json").write_text("{}")
    assert next(p for p in presets(env) if p.name == "codex").usable


@pytest.mark.skipif(not (project_install_dir() / "node_modules" / ".bin" / "claude-agent-acp").exists(),
                    reason="the Claude Code ACP adapter is not installed (scripts/install)")
def test_the_pinned_claude_adapter_is_found_with_its_version(tmp_path: Path) -> None:
    bare = next(p for p in presets({"PATH": "", "HOME": str(tmp_path)}) if p.name == "claude")
    assert bare.version == CLAUDE_ACP_VERSION and not bare.usable
    assert "ANTHROPIC_API_KEY" in (bare.fix or "")
    keyed = next(p for p in presets({"PATH": "", "HOME": str(tmp_path), "ANTHROPIC_API_KEY": "k"})
                 if p.name == "claude")
    assert keyed.usable and resolve("claude", {"PATH": "", "ANTHROPIC_API_KEY": "k"}) == [
        str(project_install_dir() / "node_modules" / ".bin" / "claude-agent-acp")]


def test_pneuma_backends_lists_each_preset_usable_or_with_its_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from pneuma.cli import cli

    gemini = program(tmp_path / "bin", "gemini")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    result = CliRunner().invoke(cli, ["backends", "--json"], catch_exceptions=False)
    rows = {row["name"]: row for row in json.loads(result.output)["backends"]}
    assert rows["acp:gemini"]["usable"] and rows["acp:gemini"]["found"] == str(gemini)
    assert rows["acp:kimi"]["usable"] is False
    assert rows["acp:kimi"]["fix"] == "uv tool install kimi-cli"
    if (project_install_dir() / "node_modules" / ".bin" / "claude-agent-acp").exists():
        assert rows["acp:claude"]["usable"] and rows["acp:claude"]["version"] == CLAUDE_ACP_VERSION
    table = CliRunner().invoke(cli, ["backends"], catch_exceptions=False).output
    assert any(line.startswith("acp:kimi ") and "not usable" in line and "uv tool install kimi-cli"
               in line for line in table.splitlines()), table
