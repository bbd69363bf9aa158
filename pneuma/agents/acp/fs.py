"""The ACP client's file methods (``fs/read_text_file``, ``fs/write_text_file``)
served through Pneuma's one sandbox and its atomic writer.

ACP names files by absolute path; the sandbox takes only paths relative to
the workspace. A path is turned into one by its text alone (no link is
followed here: the sandbox walks the real tree by fd and refuses a link
that leads out), and anything not under the workspace is E_DENY_PATH, the
same refusal a tool or an HTTP route gives.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma.api import Sandbox, ToolError, atomic_write_text, read_text


@dataclass
class WorkspaceFiles:
    """What ``read_text`` / ``atomic_write_text`` need: a sandbox and the
    size policies (the defaults: the host's own limits)."""

    sandbox: Sandbox
    policies: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, workspace: Path) -> WorkspaceFiles:
        return cls(Sandbox(workspace))

    def relative(self, path: str) -> str:
        """The workspace-relative form of the agent's ``path`` (absolute, as
        ACP requires, or relative to the workspace), else E_DENY_PATH."""
        if not isinstance(path, str) or not path:
            raise ToolError("E_BAD_ARGS", "path must be a non-empty string")
        if not path.startswith("/"):
            return path  # the sandbox judges it as it judges every relative path
        root = str(self.sandbox.root)
        normal = posixpath.normpath(path)
        if normal == root or not normal.startswith(root.rstrip("/") + "/"):
            raise ToolError("E_DENY_PATH", f"Path {path!r} is outside the workspace {root}",
                            details={"path": path},
                            hint="Read and write only files inside the workspace.")
        return normal[len(root.rstrip("/")) + 1:]

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """The file's text, from 1-based ``line`` for ``limit`` lines when given."""
        text, _hash = read_text(self, self.relative(path))
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        end = len(lines) if limit is None else start + max(limit, 0)
        return "".join(lines[start:end])

    def write(self, path: str, content: str) -> None:
        """Replace (or create) the file atomically; the watcher reports it to
        the page like any change the agent makes."""
        atomic_write_text(self, self.relative(path), content)
