"""A fake OpenAI Responses API for driving the real Codex CLI offline.

Codex posts ``/v1/responses`` with ``stream: true`` and reads Server-Sent
Events (``response.created``, ``response.output_item.added``,
``response.output_text.delta``, ``response.output_item.done``,
``response.completed``). The model's turn is chosen by words in the
latest user message, like ``tests/fakes/fake_claude.py``:

- ``[shell: CMD]``      a shell tool call running CMD, then a text reply
                        that quotes the command's output
- ``[patch: PATH]``     an ``apply_patch`` edit adding PATH (text after
                        ``[content: ...]`` or ``SCRIPTED_CONTENT``), then "patched"
- ``[slow]``            a long text streamed slowly (interrupt tests)
- ``[call: NAME JSON]`` a call of the function tool NAME with JSON arguments
- ``[status: N]``       an HTTP error N with an OpenAI-shaped error body
- ``[status: N TEXT]``  the same, with TEXT as the error's message
- anything else         ``TEXT_REPLY`` streamed in small deltas

After a tool call the next request carries its output; the fake answers it
with a text reply naming the output, so a test sees a whole round trip.
Every request body is kept (``requests``) so a test can check what the CLI
sent, and which tools it offered.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from aiohttp import web

from tests.fakes.fake_server import (
    FakeModelServer,
    chunks,
    open_event_stream,
    sse,
    text_of_content,
)

TEXT_REPLY = "Hello from the fake Responses API, streamed in pieces."
SLOW_REPLY = " ".join(f"word{i}" for i in range(400))
SCRIPTED_CONTENT = "# Scripted slide\n\nWritten by the fake model.\n"
SHELL_TOOL_NAMES = ("shell_command", "shell", "exec_command", "local_shell")

_SHELL = re.compile(r"\[shell:\s*(.+?)\]", re.S)
_PATCH = re.compile(r"\[patch:\s*([^\]\s]+)\s*\]")
_CONTENT = re.compile(r"\[content:\s*(.+?)\]", re.S)
_STATUS = re.compile(r"\[status:\s*(\d{3})(?:\s+([^\]]+?))?\s*\]")
_CALL = re.compile(r"\[call:\s*(\S+)\s+(\{.*\})\]", re.S)


def _sse(data: dict[str, Any]) -> bytes:
    """A Responses event: its SSE event name is the data's ``type``."""
    return sse(data, data["type"])


def _text_of(item: dict[str, Any]) -> str:
    return text_of_content(item.get("content"))


class FakeResponsesAPI(FakeModelServer):
    """``await api.start()`` → ``api.base_url`` (``http://127.0.0.1:PORT/v1``)."""

    api_root = "/v1"

    def __init__(self, model: str = "gpt-fake-1") -> None:
        super().__init__(model)
        self.other_requests: list[str] = []  # anything but POST /v1/responses
        self.delay = 0.01  # seconds between text deltas

    # -- what tests read -----------------------------------------------------

    def last_user_text(self, body: dict[str, Any]) -> str:
        for item in reversed(body.get("input") or []):
            if item.get("type", "message") == "message" and item.get("role") == "user":
                text = _text_of(item)
                # Codex adds its own user-role context (AGENTS.md, the
                # environment); the person's words are the last other one.
                if not text.lstrip().startswith(("<environment_context>", "# AGENTS.md",
                                                 "<user_instructions>", "<permissions")):
                    return text
        return ""

    def tool_names(self, body: dict[str, Any]) -> list[str]:
        names = []
        for tool in body.get("tools") or []:
            names.append(str(tool.get("name") or tool.get("type")))
        return names

    def tool_outputs(self) -> list[str]:
        """The outputs of tool calls the CLI sent back, oldest first."""
        seen: list[str] = []
        for body in self.requests:
            for item in body.get("input") or []:
                if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                    output = item.get("output")
                    text = output if isinstance(output, str) else json.dumps(output)
                    if text not in seen:
                        seen.append(text)
        return seen

    def instructions_seen(self) -> str:
        """Everything the CLI told the model besides the person's words
        (instructions and its own context messages): AGENTS.md lands here."""
        parts = []
        for body in self.requests:
            parts.append(str(body.get("instructions") or ""))
            for item in body.get("input") or []:
                if item.get("type", "message") == "message":
                    parts.append(_text_of(item))
        return "\n".join(parts)

    # -- server ----------------------------------------------------------------

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_route("*", "/{tail:.*}", self._other)

    async def _other(self, request: web.Request) -> web.Response:
        self.other_requests.append(f"{request.method} {request.path}")
        if request.path.endswith("/models"):
            return web.json_response({"object": "list", "data": [], "models": []})
        return web.json_response({"error": {"message": "not faked"}}, status=404)

    # -- turns -----------------------------------------------------------------

    def _plan(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The output items of this response (text items carry ``_chunk``)."""
        last = (body.get("input") or [{}])[-1]
        if last.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = last.get("output")
            text = output if isinstance(output, str) else json.dumps(output)
            return [self._message(f"Tool said: {text[:200]}")]
        prompt = self.last_user_text(body)
        if (match := _SHELL.search(prompt)):
            return [self._shell_call(body, match.group(1).strip())]
        if (match := _PATCH.search(prompt)):
            content_match = _CONTENT.search(prompt)
            content = content_match.group(1) if content_match else SCRIPTED_CONTENT
            return [self._patch_call(body, match.group(1), content)]
        if (match := _CALL.search(prompt)):
            return [{"type": "function_call", "id": f"fc_{next(self._ids)}", "status": "completed",
                     "call_id": f"call_{next(self._ids)}", "name": match.group(1),
                     "arguments": match.group(2)}]
        if "[slow]" in prompt:
            return [self._message(SLOW_REPLY, slow=True)]
        return [self._message(TEXT_REPLY)]

    def _message(self, text: str, slow: bool = False) -> dict[str, Any]:
        return {"type": "message", "role": "assistant", "id": f"msg_{next(self._ids)}",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
                "_slow": slow}

    def _shell_call(self, body: dict[str, Any], command: str) -> dict[str, Any]:
        offered = self.tool_names(body)
        name = next((n for n in SHELL_TOOL_NAMES if n in offered), "shell")
        if name == "shell":
            arguments: dict[str, Any] = {"command": ["bash", "-lc", command]}
        elif name == "exec_command":
            arguments = {"cmd": command}
        else:
            arguments = {"command": command}
        return {"type": "function_call", "id": f"fc_{next(self._ids)}", "status": "completed",
                "call_id": f"call_{next(self._ids)}", "name": name,
                "arguments": json.dumps(arguments)}

    def _patch_call(self, body: dict[str, Any], path: str, content: str) -> dict[str, Any]:
        lines = "".join(f"+{line}\n" for line in content.splitlines())
        patch = f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"
        call_id = f"call_{next(self._ids)}"
        for tool in body.get("tools") or []:
            if tool.get("name") == "apply_patch" and tool.get("type") == "custom":
                return {"type": "custom_tool_call", "id": f"ctc_{next(self._ids)}",
                        "status": "completed", "call_id": call_id, "name": "apply_patch",
                        "input": patch}
        if "apply_patch" in self.tool_names(body):
            return {"type": "function_call", "id": f"fc_{next(self._ids)}", "status": "completed",
                    "call_id": call_id, "name": "apply_patch",
                    "arguments": json.dumps({"input": patch})}
        # No patch tool offered: write through the shell instead.
        body_text = content if content.endswith("\n") else content + "\n"
        return self._shell_call(body, f"mkdir -p \"$(dirname {path})\" && "
                                      f"cat > {path} <<'EOF'\n{body_text}EOF")

    async def _responses(self, request: web.Request) -> web.StreamResponse | web.Response:
        body = await self.read_body(request)
        if (match := _STATUS.search(self.last_user_text(body))):
            status = int(match.group(1))
            return web.json_response({"error": {
                "message": match.group(2) or ("Incorrect API key provided (scripted)" if status == 401
                                              else f"scripted error {status}"),
                "type": "invalid_request_error", "code": "invalid_api_key" if status == 401
                else None}}, status=status)
        items = self._plan(body)
        response_id = f"resp_{next(self._ids)}"
        stream = await open_event_stream(request)
        base = {"id": response_id, "object": "response", "model": body.get("model", self.model),
                "status": "in_progress", "output": []}
        await stream.write(_sse({"type": "response.created", "response": base}))
        done_items = []
        for index, item in enumerate(items):
            slow = item.pop("_slow", False)
            if item["type"] == "message":
                text = item["content"][0]["text"]
                await stream.write(_sse({"type": "response.output_item.added", "output_index": index,
                                         "item": {**item, "status": "in_progress", "content": []}}))
                for piece in chunks(text, 6 if slow else 8):
                    await stream.write(_sse({"type": "response.output_text.delta",
                                             "item_id": item["id"], "output_index": index,
                                             "content_index": 0, "delta": piece}))
                    await asyncio.sleep(0.05 if slow else self.delay)
            else:
                await stream.write(_sse({"type": "response.output_item.added", "output_index": index,
                                         "item": item}))
            await stream.write(_sse({"type": "response.output_item.done", "output_index": index,
                                     "item": item}))
            done_items.append(item)
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 15}
        await stream.write(_sse({"type": "response.completed",
                                 "response": {**base, "status": "completed", "output": done_items,
                                              "usage": usage}}))
        await stream.write_eof()
        return stream
