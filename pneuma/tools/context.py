"""What a tool handler is given: ``ToolContext`` (docs/tools.md).

A handler is ``def handler(ctx: ToolContext, args: dict) -> dict`` (or
``async def``); everything it may touch on disk goes through ``ctx.sandbox``,
``ctx.state`` and ``ctx.snapshots`` so that a one-shot ``pneuma tool`` call,
the MCP server and ``POST /api/tools/<name>`` behave the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pneuma.core.sandbox import Sandbox
from pneuma.host.modes import LoadedMode
from pneuma.tools.snapshots import SnapshotStore
from pneuma.tools.state import ToolState


@runtime_checkable
class Interaction(Protocol):
    """Talking to the person through the browser (only inside ``pneuma run``)."""

    async def ask(self, question: str, options: list[str] | None = None) -> str:
        """Show ``question`` (with optional choices) and return the answer text."""
        ...

    async def complete(self, summary: str) -> bool:
        """Show the agent's completion summary; True once the browser has it."""
        ...


@dataclass
class ToolContext:
    mode: LoadedMode
    workspace: Path
    sandbox: Sandbox
    policies: dict[str, Any]
    params: dict[str, Any]
    state: ToolState
    snapshots: SnapshotStore
    server_url: str | None = None
    server_token: str | None = None
    interact: Interaction | None = None
    enabled_tools: set[str] = field(default_factory=set)

    @property
    def language(self) -> str:
        """The workspace's ``language`` init param, if the mode has one."""
        return str(self.params.get("language", "en"))
