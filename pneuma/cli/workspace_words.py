"""How every command names a workspace folder that is not there, so that
`export`, `checkpoints`, `conversations`, `tool`, `mcp` and `skill install
--check` say it in the same words (issue 25, item 16)."""

from __future__ import annotations

import sys
from pathlib import Path

import click


def workspace_problem(workspace: Path) -> str | None:
    """Why ``workspace`` cannot be read as a workspace folder, or None."""
    if workspace.is_dir():
        return None
    if workspace.exists():
        return f"the workspace folder {workspace} is a file"
    return f"workspace {workspace} does not exist"


def _fail(message: str, code: int) -> None:
    click.echo(f"pneuma: error: {message}", err=True)
    sys.exit(code)


def refuse_missing_workspace(workspace: Path, code: int = 2) -> None:
    """End the command when the workspace folder is not there."""
    problem = workspace_problem(workspace)
    if problem is not None:
        _fail(problem, code)


def refuse_other_mode(workspace: Path, mode_name: str) -> None:
    """End the command on another mode's workspace, as `pneuma run` does."""
    from pneuma.workspace.mode_switch import switch_refusal

    refusal = switch_refusal(workspace, mode_name)
    if refusal is not None:
        _fail(refusal, 2)
