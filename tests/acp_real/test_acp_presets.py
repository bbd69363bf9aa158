"""Named ACP agents (docs/backends.md, "ACP agents"): `--backend acp:<name>`
resolves to the agent's command line, or says what is missing and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from pneuma.agents.acp.presets import presets, resolve
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
    codex = next(p for p in presets({"PATH": str(tmp_path / "bin")}) if p.name == "codex")
    assert not codex.usable and codex.fix == "set OPENAI_API_KEY or CODEX_API_KEY"
