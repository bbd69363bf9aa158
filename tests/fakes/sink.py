"""A recording AgentEventSink for backend tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any


class RecordingSink:
    """Keeps everything a backend reports, and waits for what a test expects."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.agent_session_ids: list[str | None] = []
        self.state: dict[str, Any] = {}

    def emit(self, message: dict[str, Any]) -> None:
        self.events.append(message)

    def set_agent_session_id(self, agent_session_id: str | None) -> None:
        self.agent_session_ids.append(agent_session_id)

    def set_agent_state(self, **state: Any) -> None:
        self.state.update(state)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 5.0, count: int = 1
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            hits = [e for e in self.events if predicate(e)]
            if len(hits) >= count:
                return hits[count - 1]
            if time.monotonic() > deadline:
                kinds = [e["type"] for e in self.events]
                raise AssertionError(f"timed out after {timeout} s; events so far: {kinds}")
            await asyncio.sleep(0.01)

    async def wait_type(self, kind: str, count: int = 1, timeout: float = 5.0) -> dict[str, Any]:
        return await self.wait_for(lambda e: e["type"] == kind, timeout, count)

    def text_deltas(self) -> str:
        return "".join(
            e["event"]["delta"]["text"]
            for e in self.of("stream_event")
            if e["event"].get("type") == "content_block_delta"
            and e["event"]["delta"].get("type") == "text_delta"
        )
