"""The backends that ship with the host, except the native runtime, which
registers itself (``pneuma.agents.native.plugin``) the way a third-party
backend would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pneuma import hookimpl
from pneuma.agents.builtin_checks import (
    claude_code_status,
    no_agent_status,
    socket_status,
)
from pneuma.core.backend import (
    AgentBackend,
    AgentEventSink,
    BackendOptions,
    BackendSpec,
)


def _no_agent(options: BackendOptions, sink: AgentEventSink) -> None:
    return None


def _claude_code(options: BackendOptions, sink: AgentEventSink) -> AgentBackend:
    from pneuma.agents.claude_code import ClaudeCodeBackend

    return ClaudeCodeBackend(options, sink)


def _claude_permission_problem(permission_mode: str) -> str | None:
    from pneuma.agents.claude_code import permission_problem

    return permission_problem(permission_mode)


def _claude_start_notices(mode: Any, permission_mode: str | None,
                          notify: Callable[[str], None]) -> str | None:
    from pneuma.agents.claude_code import start_notices

    return start_notices(mode, permission_mode, notify)


def _socket(options: BackendOptions, sink: AgentEventSink) -> AgentBackend:
    from pneuma.agents.socket_agent import SocketAgentBackend

    return SocketAgentBackend(options, sink)


@hookimpl
def register_backends() -> list[BackendSpec]:
    return [
        BackendSpec(
            name="claude-code",
            description="The Claude Code CLI, driven over stdio stream-json.",
            factory=_claude_code,
            check=claude_code_status,
            permission_problem=_claude_permission_problem,
            start_notices=_claude_start_notices,
        ),
        BackendSpec(
            name="socket",
            description=(
                "Wait for an agent to connect to /ws/cli/<session id> and speak "
                "Claude Code stream-json over the WebSocket; messages wait until it does."
            ),
            factory=_socket,
            check=socket_status,
        ),
        BackendSpec(
            name="none",
            description="Serve the viewer without an agent; the chat says why.",
            factory=_no_agent,
            check=no_agent_status,
        ),
    ]

