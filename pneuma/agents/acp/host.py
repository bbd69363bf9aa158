"""What the connection's parts (client.py, session_setup.py, updates.py)
ask of the backend that owns them, so that none of them imports backend.py
(which imports each of them)."""

from __future__ import annotations

from typing import Any, Protocol

from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallUpdate

from pneuma.api import AgentEventSink, BackendOptions

from .fs import WorkspaceFiles


class AcpHost(Protocol):
    """AcpBackend, as its parts see it."""

    options: BackendOptions
    sink: AgentEventSink
    files: WorkspaceFiles
    permission_mode: str
    agent_session_id: str | None
    session_id: str | None  # the ACP session of the running process
    loading: bool  # session/load is replaying the old conversation
    load_session: bool  # the agent said it can load sessions
    # the running connection (acp's ClientSideConnection), the session's
    # update router (updates.UpdateRouter) and the turn's translator
    conn: Any
    updates: Any
    translator: Any

    def check_session(self, session_id: str) -> None: ...

    def on_update(self, session_id: str, update: Any) -> None: ...

    async def on_permission(self, session_id: str, tool_call: ToolCallUpdate,
                            options: list[PermissionOption]) -> RequestPermissionResponse: ...

    def protocol_problem(self, what: str) -> None: ...
