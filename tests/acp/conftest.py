"""A served slide session whose backend is ``acp``, driving the scripted ACP
agent of ``tests/fakes/acp_peer.py`` (a real process speaking the protocol
over stdio), and a tab on its socket.

    acp = await make_acp({"turns": {"hello": [{"text": "Hi"}]}})
    await acp.tab.say("hello")
    result = await acp.result()

``acp.received(method)`` reads what reached the agent (the peer records
every message it receives).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from pneuma.agents.acp.plugin import ACP
from pneuma.host.modes import LoadedMode
from pneuma.server.session import Session
from pneuma.testing.browser import BrowserTab
from tests.server.harness import (
    AppServer,
    seeded_slide_workspace,
    server_config,
    start_app_server,
)

PEER = Path(__file__).resolve().parent.parent / "fakes" / "acp_peer.py"


def peer_command(script_path: Path) -> str:
    return shlex.join([sys.executable, str(PEER), str(script_path)])


@dataclass
class AcpRun:
    server: AppServer
    tab: BrowserTab
    workspace: Path
    record: Path

    def received(self, method: str) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        lines = self.record.read_text(encoding="utf-8").splitlines()
        return [m for m in map(json.loads, lines) if m.get("method") == method]

    async def wait_received(self, method: str, count: int = 1, timeout: float = 10) -> None:
        """Wait until the agent has received ``count`` messages of ``method``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(self.received(method)) < count:
            if loop.time() > deadline:
                raise AssertionError(f"the agent did not receive {method} x{count}")
            await asyncio.sleep(0.02)

    async def result(self, timeout: float = 15) -> dict[str, Any]:
        """The turn's ``result`` data."""
        message = await self.tab.wait_for("result", timeout)
        data: dict[str, Any] = message["data"]
        return data

    async def close(self) -> None:
        await self.server.close()


def without_greeting(mode: LoadedMode) -> LoadedMode:
    """``mode`` with no greeting turn, so a test's tab sees only its own turns."""
    agent = mode.manifest.agent.model_copy(update={"greeting": None})
    return replace(mode, manifest=mode.manifest.model_copy(update={"agent": agent}))


MakeAcp = Callable[..., Awaitable[AcpRun]]


@pytest.fixture
def make_acp(aiohttp_client: Any, tmp_path: Path) -> MakeAcp:
    """``await make_acp(script, workspace=None, session=None, permission_mode=None,
    env=None, command=None, greeting=False, watch=False)``: a served slide session on the
    scripted peer (without the mode's greeting unless asked); ``script``
    gets ``record`` and ``sessions`` filled in."""
    sessions = tmp_path / "peer-sessions"
    sessions.mkdir(exist_ok=True)

    async def make(script: dict[str, Any], *, workspace: Path | None = None,
                   session: Session | None = None, permission_mode: str | None = None,
                   env: dict[str, str] | None = None, command: str | None = None,
                   greeting: bool = False, watch: bool = False) -> AcpRun:
        if workspace is None:
            mode, workspace = seeded_slide_workspace(tmp_path)
        else:
            from pneuma.host.registry import get_mode

            mode = get_mode("slide")
        if not greeting:
            mode = without_greeting(mode)
        record = tmp_path / f"received-{uuid.uuid4().hex[:6]}.jsonl"
        script_path = tmp_path / f"script-{uuid.uuid4().hex[:6]}.json"
        script_path.write_text(json.dumps({"record": str(record), "sessions": str(sessions),
                                           **script}))
        agent_env = {"PNEUMA_ACP_COMMAND": command or peer_command(script_path), **(env or {})}
        if session is None:
            session = Session(str(uuid.uuid4()), mode=mode.name, workspace=workspace,
                              backend_name="acp")
        config = server_config(mode, workspace, backend=ACP, session=session,
                               agent_env=agent_env, permission_mode=permission_mode,
                               watch=watch)
        server = await start_app_server(aiohttp_client, config)
        tab = await server.tab()
        return AcpRun(server, tab, workspace, record)

    return make
