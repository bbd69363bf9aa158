"""The notes mode's own tool, offered beside the host's ones."""

from __future__ import annotations

from typing import Any

from pneuma.api import ToolContext


def find_note(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """The Markdown notes whose first line is ``# <title>``, or which have a
    ``Mood: <mood>`` line (the manifest's oneOf asks for exactly one of them)."""

    def wanted(lines: list[str]) -> bool:
        if "title" in args:
            return bool(lines) and lines[0] == f"# {args['title']}"
        return f"Mood: {args['mood']}" in lines

    paths = []
    for path in sorted(ctx.workspace.rglob("*.md")):
        rel = path.relative_to(ctx.workspace).as_posix()
        # The sandbox decides, as for the host's tools: no forbidden folder,
        # no symlink out of the workspace.
        if ctx.sandbox.is_allowed(rel):
            text = ctx.sandbox.resolve(rel).read_text(encoding="utf-8")
            if wanted(text.splitlines()):
                paths.append(rel)
    return {"paths": paths}
