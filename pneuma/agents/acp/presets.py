"""Named ACP agents: ``--backend acp:<name>`` and their rows in ``pneuma backends``.

A preset is a command line that starts an agent speaking the Agent Client
Protocol over stdio (docs/backends.md, "ACP agents"), found installed or not,
with the one-line fix when it cannot work now (not installed: the install
command; no credentials: the variable to set).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pneuma.core.errors import ToolError

# The Claude Code adapter scripts/install puts into .venv/acp (keep in step).
CLAUDE_ACP_PACKAGE = "@agentclientprotocol/claude-agent-acp"
CLAUDE_ACP_VERSION = "0.101.0"
CLAUDE_ACP_BIN = "claude-agent-acp"


@dataclass(frozen=True)
class Preset:
    """One known ACP agent: how it starts and whether it can work now."""

    name: str
    title: str
    command: tuple[str, ...] = ()
    usable: bool = False
    found: str | None = None
    missing: str | None = None
    fix: str | None = None
    notes: tuple[str, ...] = field(default=())


def project_install_dir() -> Path:
    """Where scripts/install puts npm ACP agents: beside the venv's Python."""
    return Path(sys.prefix) / "acp"


def _pinned_claude_adapter() -> Path | None:
    candidate = project_install_dir() / "node_modules" / ".bin" / CLAUDE_ACP_BIN
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def _claude(env: Mapping[str, str]) -> Preset:
    title = "Claude Code (ACP adapter)"
    pinned = _pinned_claude_adapter()
    binary = str(pinned) if pinned else shutil.which(CLAUDE_ACP_BIN, path=env.get("PATH"))
    if binary is None:
        return Preset("claude", title, missing=f"the {CLAUDE_ACP_BIN} command",
                      fix=f"scripts/install, or npm install -g {CLAUDE_ACP_PACKAGE}")
    command = (binary,)
    if not (env.get("ANTHROPIC_API_KEY") or env.get("CLAUDE_CODE_OAUTH_TOKEN")):
        return Preset("claude", title, command, found=binary,
                      missing="Anthropic credentials",
                      fix="set ANTHROPIC_API_KEY (or run `claude login`)")
    return Preset("claude", title, command, usable=True, found=binary)


def _on_path(name: str, title: str, program: str, args: tuple[str, ...], install: str,
             credentials: tuple[str, ...]) -> Callable[[Mapping[str, str]], Preset]:
    def preset(env: Mapping[str, str]) -> Preset:
        binary = shutil.which(program, path=env.get("PATH"))
        if binary is None:
            return Preset(name, title, missing=f"the {program} command", fix=install)
        command = (binary, *args)
        if credentials and not any(env.get(var) for var in credentials):
            return Preset(name, title, command, found=binary,
                          missing="credentials", fix=f"set {' or '.join(credentials)}")
        return Preset(name, title, command, usable=True, found=binary)
    return preset


_PRESETS: tuple[Callable[[Mapping[str, str]], Preset], ...] = (
    _claude,
    _on_path("codex", "Codex (ACP adapter)", "codex-acp", (),
             "npm install -g @zed-industries/codex-acp", ("OPENAI_API_KEY", "CODEX_API_KEY")),
    _on_path("gemini", "Gemini CLI", "gemini", ("--experimental-acp",),
             "npm install -g @google/gemini-cli", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
    _on_path("kimi", "Kimi CLI", "kimi", ("--acp",), "uv tool install kimi-cli", ()),
)


def presets(env: Mapping[str, str] | None = None) -> list[Preset]:
    """Every known ACP agent, usable now or not, in a fixed order."""
    env = os.environ if env is None else env
    return [make(env) for make in _PRESETS]


def preset_names() -> list[str]:
    return [make({"PATH": ""}).name for make in _PRESETS]


def resolve(name: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The command line of preset ``name`` (``--backend acp:<name>``).

    Raises ToolError E_BAD_ARGS for an unknown name and E_UNAVAILABLE when
    the agent is not installed, each with the fix in the message."""
    found = next((p for p in presets(env) if p.name == name), None)
    if found is None:
        raise ToolError("E_BAD_ARGS", f"no ACP agent preset {name!r}; known: "
                        + ", ".join(preset_names()))
    if not found.command:
        raise ToolError("E_UNAVAILABLE", f"the ACP agent {name!r} is not installed: "
                        f"missing {found.missing}; fix: {found.fix}")
    return list(found.command)
