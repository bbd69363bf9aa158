"""A conversation of the workspace as a shared file holds it: the person's
messages and the agent's answers, each tool call one line, thinking and a
subagent's inner messages left out, every text scrubbed (pneuma.share.scrub).

It reads the conversation log (pneuma.server.conversation_log) read-only,
as ``pneuma conversations list`` does: safe beside a running ``pneuma run``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.core.state_files import check_sqlite_files
from pneuma.server.conversations import LOG_FILE, STATE_DIR, read_conversations
from pneuma.share.model import SharedMessage, ToolCall

SUMMARY_CHARS = 120
# The input field that says best what a tool call did, in this order
# (Claude Code's, Codex's and Pneuma's own tools name them so).
_SUMMARY_FIELDS = ("file_path", "path", "notebook_path", "command", "cmd", "pattern", "url",
                   "query", "description", "prompt", "selector", "name")


def chosen_conversation(workspace: Path, wanted: str | None,
                        preferred: str | None = None) -> tuple[str | None, str]:
    """The id and title of conversation ``wanted`` (None: ``preferred`` if
    the workspace has it, else the most recently updated); (None, "") for a
    workspace without conversations. E_NOT_FOUND for a ``wanted`` id the
    workspace does not have."""
    try:
        found = read_conversations(workspace, previews=False)
    except (sqlite3.Error, OSError) as exc:
        raise ToolError("E_IO", f"cannot read the conversations of {workspace}: {exc}") from exc
    if wanted is None:
        for conversation in found:
            if conversation.id == preferred:
                return conversation.id, conversation.title
        return (found[0].id, found[0].title) if found else (None, "")
    for conversation in found:
        if conversation.id == wanted:
            return conversation.id, conversation.title
    raise ToolError("E_NOT_FOUND", f"{workspace} has no conversation {wanted}",
                    details={"conversation": wanted},
                    hint="`pneuma conversations list -w DIR` shows them.")


def logged_messages(workspace: Path, conversation_id: str) -> list[tuple[str, dict[str, Any]]]:
    """``(kind, message)`` of every row of the conversation, oldest first."""
    path = workspace / STATE_DIR / LOG_FILE
    if not os.path.lexists(path):
        return []
    check_sqlite_files(path, create_dirs=False)  # never a log through a link
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT kind, body FROM messages WHERE session_id = ? AND kind IN"
                          " ('user_message', 'assistant') ORDER BY id",
                          (conversation_id,)).fetchall()
    except sqlite3.Error as exc:
        raise ToolError("E_IO", f"cannot read the conversation log of {workspace}: {exc}") from exc
    finally:
        db.close()
    found = []
    for kind, body in rows:
        try:
            message = json.loads(body)
        except (TypeError, ValueError):
            continue  # a damaged row: the rest of the conversation still goes
        if isinstance(message, dict):
            found.append((kind, message))
    return found


def shared_messages(rows: Iterable[tuple[str, dict[str, Any]]],
                    scrub: Callable[[str], str]) -> list[SharedMessage]:
    """The rows as a shared file's conversation: the agent's messages
    between two of the person's are one message."""
    shared: list[SharedMessage] = []
    last_at: int | None = None
    for kind, message in rows:
        if kind == "user_message":
            last_at = _ms(message.get("timestamp")) or last_at
            shared.append(SharedMessage("user", scrub(str(message.get("content") or "")), last_at))
            continue
        if message.get("parent_tool_use_id"):
            continue  # a subagent's own messages: its call is already one line
        text, tools = _assistant_parts(message, scrub)
        if not text and not tools:
            continue
        if shared and shared[-1].role == "assistant":
            previous = shared[-1]
            previous.text = "\n\n".join(t for t in (previous.text, text) if t)
            previous.tools.extend(tools)
        else:
            shared.append(SharedMessage("assistant", text, last_at, tools))
    return shared


def _assistant_parts(message: dict[str, Any],
                     scrub: Callable[[str], str]) -> tuple[str, list[ToolCall]]:
    inner = message.get("message")
    blocks = inner.get("content") if isinstance(inner, dict) else None
    texts: list[str] = []
    tools: list[ToolCall] = []
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            texts.append(scrub(str(block["text"])))
        elif block.get("type") in ("tool_use", "server_tool_use", "mcp_tool_use"):
            name = str(block.get("name") or "tool")
            tools.append(ToolCall(name, scrub(tool_summary(block.get("input")))))
        # thinking and redacted_thinking blocks stay out of a shared file
    return "\n\n".join(texts), tools


def tool_summary(tool_input: object) -> str:
    """One line saying what a tool call did: its path, command or query."""
    if isinstance(tool_input, dict):
        for key in _SUMMARY_FIELDS:
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                return _one_line(value)
        text = json.dumps(tool_input, ensure_ascii=False, separators=(",", ":"))
    else:
        text = "" if tool_input is None else str(tool_input)
    return _one_line(text)


def _one_line(text: str) -> str:
    words = " ".join(text.split())
    return words if len(words) <= SUMMARY_CHARS else words[:SUMMARY_CHARS - 1].rstrip() + "…"


def _ms(seconds: object) -> int | None:
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
        return int(seconds * 1000)
    return None
