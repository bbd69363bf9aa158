"""What the backends whose agent speaks Claude Code stream-json share.

The Claude Code CLI over stdio and an agent on the ``/ws/cli`` socket differ
only in how lines reach the agent; permissions, interrupts, model switches
and the agent's session id all go through one ``StreamJsonBridge``.
"""

from __future__ import annotations

import logging

from pneuma.agents.stream_json import StreamJsonBridge
from pneuma.core.backend import AgentEventSink, BackendOptions


class StreamJsonBackend:
    """The part of an ``AgentBackend`` that a ``StreamJsonBridge`` answers."""

    name: str

    def __init__(self, options: BackendOptions, sink: AgentEventSink, *,
                 permission_mode: str | None, logger: logging.Logger) -> None:
        self.options = options
        self.sink = sink
        self.model = options.model
        self.bridge = StreamJsonBridge(
            sink,
            permission_mode=permission_mode,
            agent_session_id=options.agent_session_id,
            logger=logger,
        )
        # Permission answers go to the bridge as they are (it holds the
        # original requests and knows the agent's control protocol).
        self.answer_permission = self.bridge.answer_permission

    @property
    def agent_session_id(self) -> str | None:
        """The agent's own session id (what ``--resume`` takes)."""
        return self.bridge.agent_session_id

    @agent_session_id.setter
    def agent_session_id(self, value: str | None) -> None:
        self.bridge.agent_session_id = value

    async def interrupt(self) -> None:
        await self.bridge.interrupt()

    async def set_model(self, model: str) -> None:
        self.model = model  # also what the next agent (re)started or connected gets
        await self.bridge.set_model(model)
