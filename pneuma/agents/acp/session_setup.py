"""Opening the agent's ACP session: ``session/load`` of the one the
workspace ran last, when the agent can load sessions, else ``session/new``;
both in the workspace, with the workspace's MCP servers."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.schema import (
    AcpMcpServer,
    EnvVariable,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
)

if TYPE_CHECKING:
    from acp.client.connection import ClientSideConnection


from .host import AcpHost

log = logging.getLogger(__name__)


# What session/new and session/load take (the library's own union).
McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


def mcp_servers(workspace: Path) -> list[McpServer]:
    """The stdio servers of the workspace's ``.mcp.json`` (what the skill
    installer wrote for the mode: Pneuma's own ``pneuma mcp`` server, the
    one Claude Code is given), as ACP's ``mcpServers``. URL servers are
    left out (not every agent takes them; logged)."""
    try:
        data = json.loads((workspace / ".mcp.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    found: list[McpServer] = []
    for name, entry in (servers.items() if isinstance(servers, dict) else ()):
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            log.info("acp: MCP server %r left out: only stdio servers are passed on", name)
            continue
        args: list[Any] = entry["args"] if isinstance(entry.get("args"), list) else []
        env: dict[str, Any] = entry["env"] if isinstance(entry.get("env"), dict) else {}
        found.append(McpServerStdio(
            name=str(name), command=entry["command"], args=[str(a) for a in args],
            env=[EnvVariable(name=str(k), value=str(v)) for k, v in env.items()]))
    return found


async def open_session(backend: AcpHost, conn: ClientSideConnection) -> str:
    """The ACP session id to prompt, reported to the host as the agent
    session id (what a restart resumes)."""
    workspace = backend.options.workspace
    cwd = str(workspace)
    servers = mcp_servers(workspace)
    stored = backend.agent_session_id
    response: Any = None
    session_id: str | None = None
    if stored and backend.load_session:
        backend.loading = True
        try:
            response = await conn.load_session(cwd=cwd, session_id=stored, mcp_servers=servers)
            session_id = stored
        except RequestError as exc:
            backend.sink.emit({"type": "error", "code": "agent_notice", "message": (
                f"The ACP agent could not load its earlier session ({exc}): a new session "
                "starts, without the agent's memory of the conversation.")})
        finally:
            backend.loading = False
    elif stored:
        backend.sink.emit({"type": "error", "code": "agent_notice", "message": (
            "This ACP agent cannot load sessions (it does not offer loadSession): a new "
            "session starts, without the agent's memory of the conversation.")})
    if session_id is None:
        response = await conn.new_session(cwd=cwd, mcp_servers=servers)
        session_id = str(response.session_id)
    backend.session_id = session_id  # updates may follow the answer at once
    if session_id != backend.agent_session_id:
        backend.agent_session_id = session_id
        backend.sink.set_agent_session_id(session_id)
    backend.updates.session_opened(response)
    mode = backend.updates.mode_to_ask()
    if mode is not None:
        # A session may start in a mode where the agent decides alone
        # (Claude Code's adapter: "auto"); Pneuma's permission mode decides.
        await backend.updates.choose_mode(mode)
    state = {"cwd": cwd, "permission_mode": backend.permission_mode}
    backend.sink.set_agent_state(**state)
    return session_id
