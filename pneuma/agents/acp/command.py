"""Which ACP agent ``--backend acp`` starts.

``pneuma run --backend acp --agent-command "CMD ARGS"`` puts the command in
the environment agents start with (``PNEUMA_ACP_COMMAND``, which a person
may also export); the backend remembers it in the workspace's
``.pneuma/acp.json``, so a later ``pneuma run --backend acp`` without the
option starts the same agent and resumes its session.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path

from pneuma.api import ToolError, UnsafeStatePath, read_state_bytes, write_state_bytes

COMMAND_ENV = "PNEUMA_ACP_COMMAND"
STATE_FILE = Path(".pneuma") / "acp.json"
MISSING = "an ACP agent command"
FIX = ('pneuma run --backend acp --agent-command "CMD ARGS" (or --backend acp:<preset>: '
       "`pneuma backends` lists them)")


def parse_command(text: str) -> list[str]:
    """``text`` split as a shell would (quotes kept together); E_BAD_ARGS
    for unbalanced quotes or nothing at all."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise ToolError("E_BAD_ARGS", f"--agent-command {text!r} cannot be split: {exc}") \
            from None
    if not argv:
        raise ToolError("E_BAD_ARGS", "--agent-command is empty; give the agent's command line")
    return argv


def take_option(backend: str, text: str | None) -> None:
    """``--agent-command text`` of ``pneuma run --backend backend``: checked,
    then put where the backend and its start check read it. E_BAD_ARGS for
    another backend (a preset brings its own command) or a bad command."""
    if text is None:
        return
    if backend != "acp":
        raise ToolError("E_BAD_ARGS", f"--agent-command is for --backend acp, not --backend {backend}")
    parse_command(text)
    os.environ[COMMAND_ENV] = text


def stored_command(workspace: Path | None) -> list[str] | None:
    """The command the workspace's last ACP run used, if any (a damaged
    file counts as none)."""
    if workspace is None:
        return None
    try:
        data = json.loads(read_state_bytes(workspace / STATE_FILE, 64 * 1024))
    except (OSError, ValueError, UnsafeStatePath):
        return None
    argv = data.get("command") if isinstance(data, dict) else None
    if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
        return list(argv)
    return None


def remember_command(workspace: Path, argv: list[str]) -> None:
    if stored_command(workspace) == argv:
        return
    data = json.dumps({"command": argv}, ensure_ascii=False, indent=2) + "\n"
    write_state_bytes(workspace / STATE_FILE, data.encode("utf-8"))


def agent_command(env: Mapping[str, str], workspace: Path | None) -> list[str] | None:
    """The command to start: the environment's (the option's), else the
    workspace's remembered one, else None."""
    text = env.get(COMMAND_ENV, "").strip()
    if text:
        return parse_command(text)
    return stored_command(workspace)
