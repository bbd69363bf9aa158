"""How every command names a workspace folder that is not there, so that
`export`, `checkpoints`, `conversations`, `tool`, `mcp` and `skill install
--check` say it in the same words (issue 25, item 16)."""

from __future__ import annotations

from pathlib import Path


def workspace_problem(workspace: Path) -> str | None:
    """Why ``workspace`` cannot be read as a workspace folder, or None."""
    if workspace.is_dir():
        return None
    if workspace.exists():
        return f"workspace {workspace} is not a folder"
    return f"workspace {workspace} does not exist"
