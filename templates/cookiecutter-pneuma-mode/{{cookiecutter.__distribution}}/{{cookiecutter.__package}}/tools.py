"""The {{ cookiecutter.name }} mode's tools: the handlers that manifest.json names in
``tools[].handler`` ("{{ cookiecutter.__package }}.tools:outline").

A handler is ``def handler(ctx, args) -> dict`` (``async def`` works too).
Pneuma checks ``args`` against the tool's ``inputSchema`` before the call
(defaults are not filled in: read optional arguments with ``args.get``) and
the returned dict against its ``outputSchema`` after it. The same handler
serves the agent's MCP server, ``pneuma tool --mode {{ cookiecutter.name }} outline '{...}'``
and ``POST /api/tools/outline`` on a running ``pneuma run``.

Raise ``ToolError`` with one of the contract's codes for a failure the agent
should read and act on; any other exception is reported as ``E_INTERNAL``.
Every path comes from the agent, so it goes through ``ctx.sandbox.resolve``,
which refuses absolute paths, ``..``, symlinks leading out of the workspace
and forbidden directories (``.git``, ``.env*``, ``.pneuma``, ...).
"""

from __future__ import annotations

import re
from typing import Any

from pneuma.api import ToolContext, ToolError

MAX_BYTES = 1_000_000

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_WORD = re.compile(r"[^\W_](?:[\w'’-]*[^\W_])?")


def outline(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Tool ``outline``: the headings and size of one Markdown page."""
    rel = args["file"]
    if not rel.endswith(".md"):
        raise ToolError(
            "E_BAD_ARGS",
            f"{rel!r} is not a Markdown page",
            details={"path": rel},
            hint="Pass a .md file relative to the workspace, e.g. welcome.md",
        )
    path = ctx.sandbox.resolve(rel)
    if not path.is_file():
        raise ToolError(
            "E_NOT_FOUND",
            f"No page {rel!r} in the workspace",
            details={"path": rel},
            hint="List the pages with: find . -name '*.md' -not -path './.*'",
        )
    data = path.read_bytes()
    if len(data) > MAX_BYTES:
        raise ToolError(
            "E_TOO_LARGE",
            f"{rel!r} is {len(data)} bytes; outline reads at most {MAX_BYTES}",
            details={"path": rel, "size": len(data), "limit": MAX_BYTES},
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            "E_ENCODING",
            f"{rel!r} is not UTF-8 (byte {exc.start})",
            details={"path": rel},
            hint="Save the page as UTF-8",
        ) from None
    return outline_of(text, rel)


def outline_of(text: str, file: str) -> dict[str, Any]:
    """The outline of Markdown ``text``; headings inside code fences do not count."""
    headings: list[dict[str, Any]] = []
    words = 0
    fence: str | None = None
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            continue
        if fence is not None:
            stripped = line.strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                fence = None
            continue
        heading = _HEADING.match(line)
        if heading:
            heading_text = plain_text(heading.group(2) or "")
            headings.append({"level": len(heading.group(1)), "text": heading_text, "line": number})
            words += len(_WORD.findall(heading_text))
        else:
            words += len(_WORD.findall(plain_text(line)))
    title = next((h["text"] for h in headings if h["level"] == 1), None)
    return {"file": file, "title": title, "headings": headings, "words": words, "lines": len(lines)}


def plain_text(markdown: str) -> str:
    """Inline Markdown as the viewer shows it: link text without targets, no markup."""
    text = _LINK.sub(r"\1", markdown)
    text = re.sub(r"(\*\*|__|\*|`)", "", text)
    return text.strip()
