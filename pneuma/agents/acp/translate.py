"""ACP ``session/update`` notifications as the browser protocol's messages.

The page knows Anthropic-shaped messages (docs/protocol.md): text and
thinking stream as ``stream_event`` and settle as an ``assistant`` message;
a tool is an ``assistant`` message with a ``tool_use`` block, later a
``tool_result``. ACP's updates map onto them: ``agent_message_chunk`` is
streamed text, ``agent_thought_chunk`` streamed thinking, ``tool_call`` /
``tool_call_update`` a tool card (the same message id replaces the card as
it changes), and ``plan`` the card Claude Code's ``TodoWrite`` shows.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

# ACP's stop reasons other than end_turn, as the person reads them.
STOP_REASONS = {
    "max_tokens": "The agent stopped: it reached its limit of output tokens.",
    "max_turn_requests": "The agent stopped: it reached its limit of model requests for one turn.",
    "refusal": "The agent refused to go on with this request.",
}
# ACP's plan entry statuses are TodoWrite's own names.
PLAN_STATUSES = ("pending", "in_progress", "completed")


def stream(event: dict[str, Any]) -> dict[str, Any]:
    return {"type": "stream_event", "event": event, "parent_tool_use_id": None}


def assistant(message_id: str, content: list[dict[str, Any]], model: str | None) -> dict[str, Any]:
    return {"type": "assistant", "parent_tool_use_id": None,
            "message": {"id": message_id, "type": "message", "role": "assistant",
                        "model": model, "content": content}}


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def block_text(block: Any) -> str:
    """The text of an ACP content block; a short stand-in for any other kind."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind == "resource_link":
        return f"[{getattr(block, 'name', '') or getattr(block, 'uri', '')}]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        return str(getattr(resource, "text", "") or f"[{getattr(resource, 'uri', '')}]")
    return f"[{kind}]" if kind else ""


def tool_output(content: list[Any] | None, raw_output: Any) -> str:
    """What a tool card shows as the tool's result."""
    parts: list[str] = []
    for item in content or []:
        kind = getattr(item, "type", None)
        if kind == "content":
            parts.append(block_text(item.content))
        elif kind == "diff":
            parts.append(f"edited {item.path}")
        elif kind == "terminal":
            parts.append(f"[terminal {item.terminal_id}]")
    if not parts and raw_output is not None:
        parts.append(raw_output if isinstance(raw_output, str) else str(_dump(raw_output)))
    return "\n".join(parts)


@dataclass
class ToolCard:
    """One tool call as far as the agent has told it."""

    tool_call_id: str
    title: str = ""
    kind: str | None = None
    status: str | None = None
    raw_input: Any = None
    locations: list[str] = field(default_factory=list)
    diffs: list[dict[str, Any]] = field(default_factory=list)

    def absorb(self, update: Any) -> None:
        for name in ("title", "kind", "status"):
            value = getattr(update, name, None)
            if value is not None:
                setattr(self, name, str(value))
        if getattr(update, "raw_input", None) is not None:
            self.raw_input = _dump(update.raw_input)
        if getattr(update, "locations", None) is not None:
            self.locations = [str(loc.path) for loc in update.locations]
        if getattr(update, "content", None) is not None:
            self.diffs = [{"path": c.path, "old_text": c.old_text, "new_text": c.new_text}
                          for c in update.content if getattr(c, "type", None) == "diff"]

    def tool_use(self) -> dict[str, Any]:
        tool_input: dict[str, Any] = dict(self.raw_input) if isinstance(self.raw_input, dict) \
            else ({} if self.raw_input is None else {"input": self.raw_input})
        paths = self.locations or [d["path"] for d in self.diffs]
        if paths and "file_path" not in tool_input:
            tool_input["file_path"] = ", ".join(paths)
        if self.kind:
            tool_input.setdefault("kind", self.kind)
        return {"type": "tool_use", "id": self.tool_call_id,
                "name": self.title or self.kind or "tool", "input": tool_input}


class TurnTranslator:
    """The browser messages for one agent session's updates, turn after turn.

    Text and thinking chunks gather into one open block, closed (and settled
    as an ``assistant`` message) when something else comes or the turn ends."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model
        self.texts: list[str] = []  # the turn's settled text, for its result
        # Message ids unique across runs: the page merges an assistant
        # message into an earlier one of the same id, restored history too.
        self._prefix = f"acp-{uuid.uuid4().hex[:12]}"
        self._ids = itertools.count(1)
        self._open: tuple[str, str] | None = None  # (kind, message id)
        self._open_agent_id: str | None = None  # the agent's messageId of the open block
        self._open_text = ""
        self._tools: dict[str, ToolCard] = {}
        self._plan_id: str | None = None

    def new_turn(self) -> None:
        self.texts = []
        self._plan_id = None

    def _new_id(self, kind: str) -> str:
        return f"{self._prefix}-{kind}-{next(self._ids)}"

    def chunk(self, kind: str, text: str, agent_id: str | None = None) -> list[dict[str, Any]]:
        """``kind`` "text" or "thinking": a streamed piece of either; a new
        ``agent_id`` (the agent's messageId) starts a new message."""
        out: list[dict[str, Any]] = []
        if self._open is None or self._open[0] != kind or (
                agent_id is not None and self._open_agent_id is not None
                and agent_id != self._open_agent_id):
            out += self.close()
            message_id = self._new_id(kind)
            self._open, self._open_text = (kind, message_id), ""
            self._open_agent_id = agent_id
            empty = {"type": "text", "text": ""} if kind == "text" else \
                {"type": "thinking", "thinking": ""}
            out.append(stream({"type": "message_start", "message": {
                "id": message_id, "type": "message", "role": "assistant", "model": self.model,
                "content": []}}))
            out.append(stream({"type": "content_block_start", "index": 0,
                               "content_block": empty}))
        self._open_text += text
        delta = {"type": "text_delta", "text": text} if kind == "text" else \
            {"type": "thinking_delta", "thinking": text}
        out.append(stream({"type": "content_block_delta", "index": 0, "delta": delta}))
        return out

    def close(self) -> list[dict[str, Any]]:
        """Settle the open text or thinking block, if any."""
        if self._open is None:
            return []
        kind, message_id = self._open
        text, self._open, self._open_text = self._open_text, None, ""
        block = {"type": "text", "text": text} if kind == "text" else \
            {"type": "thinking", "thinking": text}
        if kind == "text":
            self.texts.append(text)
        return [stream({"type": "content_block_stop", "index": 0}),
                stream({"type": "message_stop"}),
                assistant(message_id, [block], self.model)]

    def tool(self, update: Any, started: bool) -> list[dict[str, Any]]:
        """A ``tool_call`` (``started``) or ``tool_call_update``."""
        out = self.close()
        call_id = str(update.tool_call_id)
        card = self._tools.get(call_id)
        if card is None:
            card = self._tools[call_id] = ToolCard(call_id)
        card.absorb(update)
        out.append(assistant(f"{self._prefix}-tool-{call_id}", [card.tool_use()], self.model))
        if card.status in ("completed", "failed"):
            self._tools.pop(call_id, None)
            out.append({"type": "tool_result", "tool_use_id": call_id,
                        "content": tool_output(getattr(update, "content", None),
                                               getattr(update, "raw_output", None)),
                        "is_error": card.status == "failed", "parent_tool_use_id": None})
        return out

    def tool_title(self, tool_call_id: str) -> str | None:
        card = self._tools.get(tool_call_id)
        return card.title if card is not None else None

    def plan(self, entries: list[Any]) -> list[dict[str, Any]]:
        """The plan as TodoWrite's card; a newer plan in the same turn replaces it."""
        out = self.close()
        if self._plan_id is None:
            self._plan_id = self._new_id("plan")
        todos = [{"content": str(e.content), "activeForm": str(e.content),
                  "status": e.status if e.status in PLAN_STATUSES else "pending"}
                 for e in entries]
        out.append(assistant(self._plan_id, [{"type": "tool_use", "id": self._plan_id,
                                              "name": "TodoWrite", "input": {"todos": todos}}],
                             self.model))
        return out

    def end_turn(self, stop_reason: str | None, error: str | None = None) -> list[dict[str, Any]]:
        """The turn's ``result``: success for ``end_turn``, else an error
        "during execution" (how the page shows a stopped or failed turn)."""
        out = self.close()
        self._tools.clear()
        ok = stop_reason == "end_turn" and error is None
        # A stopped turn has no text, as Claude Code reports an interrupt:
        # that is how the page tells "Stopped" from "Ended with an error".
        said = error or ("" if stop_reason == "cancelled" else STOP_REASONS.get(stop_reason or "", ""))
        out.append({"type": "result", "data": {
            "subtype": "success" if ok else "error_during_execution",
            "is_error": not ok, "num_turns": 1, "total_cost_usd": None,
            "stop_reason": stop_reason,
            "result": "\n\n".join(self.texts) if ok else said,
        }})
        return out
