"""The conversation in Messages-API form, rewritten for Chat Completions.

Callers keep one form of conversation (the native runtime stores it that
way; CoAuthor sends one user message), so a session can switch provider
between turns. The rules of the rewrite:

* the system prompt is the first message, role ``system``;
* an assistant message's text blocks become its ``content`` and its
  ``tool_use`` blocks its ``tool_calls`` (arguments as a JSON string);
  thinking blocks are the other provider's and are left out;
* a user message's ``tool_result`` blocks become ``tool`` messages (one per
  call, right after the assistant message that made the calls, as the API
  requires); its text and images become one ``user`` message after them;
* images (base64 or URL) become ``image_url`` parts; an image a tool
  returned goes in a user message after the tool messages, since a
  ``tool`` message carries text only.
"""

from __future__ import annotations

import json
from typing import Any


def chat_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "assistant":
            out.append(_assistant(content))
        else:
            out.extend(_user(content))
    return out


def _assistant(content: Any) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    blocks = [b for b in content or [] if isinstance(b, dict)]
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    calls = [{"id": b.get("id"), "type": "function",
              "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input") or {})}}
             for b in blocks if b.get("type") == "tool_use"]
    message: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
    if calls:
        message["tool_calls"] = calls
    return message


def _user(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            text, images = _tool_result(block)
            out.append({"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": text})
            if images:
                parts.append({"type": "text", "text": f"(images returned by tool call {block.get('tool_use_id')})"})
                parts.extend(images)
        elif kind == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
        elif kind == "image":
            image = _image(block)
            if image:
                parts.append(image)
    if parts:
        if all(p["type"] == "text" for p in parts):
            out.append({"role": "user", "content": "\n\n".join(p["text"] for p in parts)})
        else:
            out.append({"role": "user", "content": parts})
    return out


def _tool_result(block: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    content = block.get("content")
    images: list[dict[str, Any]] = []
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text":
                texts.append(part.get("text", ""))
            elif part.get("type") == "image":
                image = _image(part)
                if image:
                    images.append(image)
        text = "\n".join(texts)
    else:
        text = "" if content is None else str(content)
    if block.get("is_error"):
        # Chat Completions has no error flag on a tool message; say it in words.
        text = "[the tool call failed] " + text
    return text, images


def _image(block: dict[str, Any]) -> dict[str, Any] | None:
    source = block.get("source") or {}
    if source.get("type") == "base64" and source.get("data"):
        url = f"data:{source.get('media_type') or 'image/png'};base64,{source['data']}"
    elif source.get("type") == "url" and source.get("url"):
        url = source["url"]
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


def chat_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A ``{name, description, input_schema}`` tool as a Chat Completions function tool."""
    return {"type": "function", "function": {"name": tool["name"], "description": tool["description"],
                                             "parameters": tool["input_schema"]}}
