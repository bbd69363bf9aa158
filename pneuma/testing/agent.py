"""``FakeAgent``: an agent backend for tests that records what it is asked
and says what the test tells it to.

It is a real ``AgentBackend`` behind a real ``BackendSpec``: the server
builds it through the spec's factory and hands it the session as its sink,
so every message it ``emit``s is numbered, kept for replay and sent to
every tab exactly as a real backend's would be. No CLI, no model.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from pneuma.core.backend import AgentEventSink, BackendOptions, BackendSpec
from pneuma.testing.browser import TIMEOUT

_message_ids = itertools.count(1)


class FakeAgent:
    """An ``AgentBackend`` that records every call; tests make it speak with
    ``emit`` (any browser-protocol message) or ``reply`` (a finished turn)."""

    name = "fake"

    def __init__(self, options: BackendOptions, sink: AgentEventSink):
        self.options = options
        self.sink = sink
        self.calls: list[tuple[Any, ...]] = []
        self.user_messages: list[tuple[str, list[dict[str, str]]]] = []
        self.started = False
        self.stopped = False
        self._changed = asyncio.Event()
        self._handed_out = 0  # user messages already returned by next_user_message

    def _record(self, *call: Any) -> None:
        self.calls.append(call)
        self._changed.set()

    # --- the AgentBackend protocol --------------------------------------------

    async def start(self) -> None:
        self.started = True
        self._record("start")

    async def send_user_message(self, text: str, images: list[dict[str, str]]) -> None:
        self.user_messages.append((text, images))
        self._record("send_user_message", text, images)

    async def answer_permission(self, request_id: str, behavior: str,
                                updated_input: dict[str, Any] | None = None,
                                message: str | None = None) -> None:
        self._record("answer_permission", request_id, behavior, updated_input, message)

    async def interrupt(self) -> None:
        self._record("interrupt")

    async def set_model(self, model: str) -> None:
        self._record("set_model", model)

    async def stop(self) -> None:
        self.stopped = True
        self._record("stop")

    # --- what a test does with it ---------------------------------------------

    def emit(self, message: dict[str, Any]) -> None:
        """Broadcast one browser-protocol message through the session, as a
        real backend reports what its agent does."""
        self.sink.emit(message)

    def reply(self, text: str) -> str:
        """Finish a turn: one assistant message saying ``text``, then the
        turn's ``result``. Returns the assistant message's id."""
        message_id = f"msg_fake_{next(_message_ids)}"
        self.emit({"type": "assistant", "message": {
            "id": message_id, "role": "assistant", "content": [{"type": "text", "text": text}]}})
        self.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
        return message_id

    def calls_named(self, name: str) -> list[tuple[Any, ...]]:
        """The recorded calls of one method, in order (``("set_model", "x")``)."""
        return [c for c in self.calls if c[0] == name]

    async def wait_call(self, name: str, count: int = 1,
                        timeout: float = TIMEOUT) -> list[tuple[Any, ...]]:
        """Wait until ``name`` was called at least ``count`` times."""
        async def until() -> None:
            while len(self.calls_named(name)) < count:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(until(), timeout)
        return self.calls_named(name)

    async def next_user_message(self, timeout: float = TIMEOUT) -> str:
        """The text of the next user message the agent receives (after the
        ones already returned by earlier calls)."""
        await self.wait_call("send_user_message", self._handed_out + 1, timeout)
        self._handed_out += 1
        return self.user_messages[self._handed_out - 1][0]


def fake_agent_spec(created: list[FakeAgent] | None = None) -> BackendSpec:
    """A ``BackendSpec`` named ``fake`` whose factory builds a ``FakeAgent``;
    each one built is appended to ``created`` when given."""

    def factory(options: BackendOptions, sink: AgentEventSink) -> FakeAgent:
        agent = FakeAgent(options, sink)
        if created is not None:
            created.append(agent)
        return agent

    return BackendSpec(name="fake", description="A test agent that records what it is asked.",
                       factory=factory)
