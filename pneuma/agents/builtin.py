"""The backends that ship with the host."""

from __future__ import annotations

from pneuma import hookimpl
from pneuma.agents.base import AgentBackend, AgentEventSink, BackendOptions, BackendSpec


def _no_agent(options: BackendOptions, sink: AgentEventSink) -> None:
    return None


def _claude_code(options: BackendOptions, sink: AgentEventSink) -> AgentBackend:
    from pneuma.agents.claude_code import ClaudeCodeBackend

    return ClaudeCodeBackend(options, sink)


@hookimpl
def register_backends() -> list[BackendSpec]:
    return [
        BackendSpec(
            name="claude-code",
            description="The Claude Code CLI, driven over stdio stream-json.",
            factory=_claude_code,
        ),
        BackendSpec(
            name="none",
            description="Serve the viewer without an agent; the chat says why.",
            factory=_no_agent,
        ),
    ]
