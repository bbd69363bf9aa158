"""What the gateway needs of a model provider (its internals, not a second
gateway): a client, a request in the provider's own form, and the answer as
Messages-API stream events — the neutral shape every caller already reads
(the browser shows those events as they are; the gateway builds the message
and the tool calls from them).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pneuma.llm.settings import LLMSettings


class CallFailure(Exception):
    """A provider call failed. The gateway retries it when ``retryable`` and
    retries are left, else raises it as a ``GatewayError`` (same message,
    status and kind)."""

    def __init__(self, message: str, *, status: int | None = None, kind: str = "api_error",
                 retryable: bool = False, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass(frozen=True)
class ChatRequest:
    """One call, provider-neutral: the conversation in Messages-API form
    (text, image, tool_use and tool_result blocks), the system prompt, tools
    as ``{name, description, input_schema}``, and the tool to force if any."""

    messages: list[dict[str, Any]]
    system: str
    tools: list[dict[str, Any]]
    force_tool: str | None = None


class Provider(Protocol):
    name: str

    def client_key(self, settings: LLMSettings, env: Mapping[str, str]) -> tuple[Any, ...]:
        """What makes two settings share a client (endpoint and key)."""

    def make_client(self, settings: LLMSettings, env: Mapping[str, str], timeout: float) -> Any:
        """A new SDK client; retries are the gateway's, never the SDK's."""

    def build(self, settings: LLMSettings, env: Mapping[str, str], call: ChatRequest) -> dict[str, Any]:
        """The SDK's keyword arguments for one streamed call."""

    async def open(self, client: Any, request: dict[str, Any], settings: LLMSettings,
                   env: Mapping[str, str], options: dict[str, Any]) -> Any:
        """The open stream; raises ``CallFailure``."""

    def events(self, stream: Any, settings: LLMSettings,
               env: Mapping[str, str]) -> AsyncIterator[dict[str, Any]]:
        """The stream as Messages-API events (``message_start``,
        ``content_block_*``, ``message_delta``, ``message_stop``); raises
        ``CallFailure`` when it breaks off; closes the stream when done."""

    def cost(self, model: str, usage: Mapping[str, int]) -> float:
        """USD for ``usage`` on ``model`` (0.0 when the price is unknown)."""
