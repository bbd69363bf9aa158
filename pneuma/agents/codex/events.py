"""Codex thread items as the browser protocol shows a Claude Code turn.

The browser knows Anthropic-shaped messages: text streams as
``stream_event`` (message_start, content_block_delta, ...) and settles as an
``assistant`` message; a tool shows as an ``assistant`` message with a
``tool_use`` block and later a ``tool_result``. Codex items map onto them:
an ``agentMessage`` is text, a ``commandExecution`` is the ``Bash`` tool, a
``fileChange`` is the ``apply_patch`` tool (its paths in ``file_path`` so the
card names the file), an ``mcpToolCall`` is ``mcp__SERVER__TOOL``.
"""

from __future__ import annotations

from typing import Any

TOOL_ITEM_TYPES = ("commandExecution", "fileChange", "mcpToolCall", "dynamicToolCall",
                   "webSearch")


def stream(event: dict[str, Any]) -> dict[str, Any]:
    return {"type": "stream_event", "event": event, "parent_tool_use_id": None}


def text_started(item_id: str, model: str | None) -> list[dict[str, Any]]:
    return [
        stream({"type": "message_start",
                "message": {"id": item_id, "type": "message", "role": "assistant",
                            "model": model, "content": []}}),
        stream({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
    ]


def text_delta(delta: str) -> dict[str, Any]:
    return stream({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": delta}})


def text_done(item_id: str, text: str, model: str | None) -> list[dict[str, Any]]:
    return [
        stream({"type": "content_block_stop", "index": 0}),
        stream({"type": "message_stop"}),
        assistant(item_id, [{"type": "text", "text": text}], model),
    ]


def assistant(message_id: str, content: list[dict[str, Any]], model: str | None) -> dict[str, Any]:
    return {"type": "assistant", "parent_tool_use_id": None,
            "message": {"id": message_id, "type": "message", "role": "assistant",
                        "model": model, "content": content}}


def tool_name(item: dict[str, Any]) -> str:
    kind = item.get("type")
    if kind == "commandExecution":
        return "Bash"
    if kind == "fileChange":
        return "apply_patch"
    if kind == "mcpToolCall":
        return f"mcp__{item.get('server')}__{item.get('tool')}"
    return str(item.get("tool") or kind)


def tool_input(item: dict[str, Any]) -> dict[str, Any]:
    kind = item.get("type")
    if kind == "commandExecution":
        return {"command": item.get("command"), "cwd": item.get("cwd")}
    if kind == "fileChange":
        changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
        paths = [str(c.get("path")) for c in changes]
        return {"file_path": ", ".join(paths), "changes": changes}
    if kind == "webSearch":
        return {"query": item.get("query")}
    arguments = item.get("arguments")
    return arguments if isinstance(arguments, dict) else {"arguments": arguments}


def tool_started(item: dict[str, Any], model: str | None) -> dict[str, Any]:
    item_id = str(item.get("id"))
    return assistant(f"tool-{item_id}", [{"type": "tool_use", "id": item_id,
                                          "name": tool_name(item), "input": tool_input(item)}],
                     model)


def tool_finished(item: dict[str, Any]) -> dict[str, Any]:
    kind = item.get("type")
    status = item.get("status")
    if kind == "commandExecution":
        content: Any = item.get("aggregatedOutput") or ""
        failed = status in ("failed", "declined") or (item.get("exitCode") not in (None, 0))
    elif kind == "fileChange":
        paths = ", ".join(str(c.get("path")) for c in item.get("changes") or [] if isinstance(c, dict))
        content = f"{status}: {paths}"
        failed = status in ("failed", "declined")
    else:
        result = item.get("result") or item.get("contentItems") or item.get("error") or ""
        content = result if isinstance(result, str) else str(result)
        failed = bool(item.get("error")) or status in ("failed", "declined")
    return {"type": "tool_result", "tool_use_id": str(item.get("id")), "content": content,
            "is_error": bool(failed), "parent_tool_use_id": None}
