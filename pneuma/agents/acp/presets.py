"""Named ACP agents: ``--backend acp:<name>`` and their rows in ``pneuma backends``.

A preset is a command line that starts an agent speaking the Agent Client
Protocol over stdio (docs/backends.md, "ACP agents"), found installed or not,
with the one-line fix when it cannot work now (not installed: the install
command; no credentials: the variable to set).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pneuma.api import BackendStatus, ToolError, claude_credentials_found

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
    version: str | None = None
    found: str | None = None
    missing: str | None = None
    fix: str | None = None
    notes: tuple[str, ...] = field(default=())

    def status(self) -> BackendStatus:
        """The same facts as a backend's check reports them (`pneuma backends`)."""
        return BackendStatus(usable=self.usable, version=self.version, found=self.found,
                             missing=self.missing, fix=self.fix, notes=self.notes)


def project_install_dir() -> Path:
    """Where scripts/install puts npm ACP agents: beside the venv's Python."""
    return Path(sys.prefix) / "acp"


def _pinned_claude_adapter() -> Path | None:
    candidate = project_install_dir() / "node_modules" / ".bin" / CLAUDE_ACP_BIN
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def _package_version(binary: str) -> str | None:
    """The npm package's version beside its bin link (no process started)."""
    manifest = Path(binary).resolve().parent.parent / "package.json"
    try:
        version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        return None
    return version if isinstance(version, str) else None


def _claude(env: Mapping[str, str]) -> Preset:
    title = "Claude Code (ACP adapter)"
    pinned = _pinned_claude_adapter()
    binary = str(pinned) if pinned else shutil.which(CLAUDE_ACP_BIN, path=env.get("PATH"))
    if binary is None:
        return Preset("claude", title, missing=f"the {CLAUDE_ACP_BIN} command",
                      fix=f"scripts/install, or npm install -g {CLAUDE_ACP_PACKAGE}"
                          f"@{CLAUDE_ACP_VERSION}")
    command, version = (binary,), _package_version(binary)
    # The adapter runs Claude Code itself, so it finds the same credentials
    # the claude-code backend looks for (docs/backends.md).
    if not claude_credentials_found(env):
        return Preset("claude", title, command, version=version, found=binary,
                      missing="credentials for Claude Code (ANTHROPIC_API_KEY, "
                              "ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN or a `claude login`)",
                      fix="export ANTHROPIC_API_KEY=… in the shell that starts Pneuma, "
                          "or run `claude login`")
    return Preset("claude", title, command, usable=True, version=version, found=binary)


def _login_file(env: Mapping[str, str], home_variable: str | None, default: str,
                name: str) -> bool:
    """A CLI's saved login (``$CODEX_HOME/auth.json``, ``~/.gemini/oauth_creds.json``)."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    chosen = env.get(home_variable) if home_variable else None
    folder = Path(chosen) if chosen else home / default
    return (folder / name).is_file()


@dataclass(frozen=True)
class _OnPath:
    """An ACP agent found as ``program`` on PATH, started as ``program args``."""

    name: str
    title: str
    program: str
    args: tuple[str, ...]
    install: str
    credentials: tuple[str, ...] = ()  # variables, any one of which will do
    login: Callable[[Mapping[str, str]], bool] | None = None  # a saved login instead
    login_fix: str = ""

    def __call__(self, env: Mapping[str, str]) -> Preset:
        binary = shutil.which(self.program, path=env.get("PATH"))
        if binary is None:
            return Preset(self.name, self.title, missing=f"the {self.program} command",
                          fix=self.install)
        command = (binary, *self.args)
        logged_in = self.login is not None and self.login(env)
        if self.credentials and not logged_in and not any(env.get(v) for v in self.credentials):
            fix = f"export {self.credentials[0]}=… in the shell that starts Pneuma"
            return Preset(self.name, self.title, command, found=binary,
                          missing=f"credentials ({' or '.join(self.credentials)})",
                          fix=f"{fix}, or run `{self.login_fix}`" if self.login_fix else fix)
        return Preset(self.name, self.title, command, usable=True, found=binary)


_PRESETS: tuple[Callable[[Mapping[str, str]], Preset], ...] = (
    _claude,
    _OnPath("codex", "Codex (ACP adapter)", "codex-acp", (),
            "npm install -g @zed-industries/codex-acp", ("OPENAI_API_KEY", "CODEX_API_KEY"),
            lambda env: _login_file(env, "CODEX_HOME", ".codex", "auth.json"), "codex login"),
    _OnPath("gemini", "Gemini CLI", "gemini", ("--experimental-acp",),
            "npm install -g @google/gemini-cli", ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            lambda env: _login_file(env, None, ".gemini", "oauth_creds.json"), "gemini"),
    # Kimi signs in inside its own CLI; there is no variable to look for.
    _OnPath("kimi", "Kimi CLI", "kimi", ("--acp",), "uv tool install kimi-cli"),
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
