"""Helpers the tool tests import by name.

They live here rather than in conftest.py: ``from conftest import ...``
resolves to whichever conftest module Python imported first (the
repository root has one too), so it breaks depending on what else runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FILE_TOOLS = ["list_files", "read_file", "write_to_file", "replace_in_file", "search_files",
              "list_snapshots", "restore_snapshot"]


def error_code(result: dict[str, Any]) -> str | None:
    error = result.get("error") if isinstance(result, dict) else None
    return error.get("code") if isinstance(error, dict) else None


def write(call: Callable[..., dict[str, Any]], path: str, content: str, **extra: Any) -> dict:
    """Dry run then write, as the contract asks."""
    dry = call("write_to_file", {"path": path, "content": content, "dryRun": True, **extra})
    assert "error" not in dry, dry
    return call("write_to_file", {"path": path, "content": content, "dryRun": False, **extra})
