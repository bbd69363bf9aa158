"""A fake Claude Code CLI for ``bench_checks.py``: a turn that writes the
files the prompt carries, shaped as Claude Code answers a small edit.

A prompt holding ``EDIT:<base64 of {"path": "content", ...}>`` is answered
with ``system/init``; for each file a ``Write`` tool use (its ``assistant``
message), the file written (relative to the working directory, which the
backend sets to the workspace) and the ``user`` message with its
``tool_result``; then a short text reply and ``result``. Any other prompt
(the mode's greeting) gets ``ok`` in the same shape.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import uuid

from _stream_cli import prompts

SESSION = str(uuid.uuid4())
MODEL = "claude-edits"
EDIT = re.compile(r"EDIT:([A-Za-z0-9+/=]+)")


def main() -> None:
    out = open(sys.stdout.fileno(), "w", buffering=1 << 16, encoding="utf-8", closefd=False)

    def write(message: dict) -> None:
        out.write(json.dumps(message, separators=(",", ":")) + "\n")

    def assistant(content: list[dict]) -> None:
        write({"type": "assistant", "message": {
            "id": "msg_" + uuid.uuid4().hex[:16], "type": "message", "role": "assistant",
            "model": MODEL, "content": content, "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}},
            "parent_tool_use_id": None, "session_id": SESSION, "uuid": str(uuid.uuid4())})

    def write_file(path: str, content: str) -> None:
        tool_id = "toolu_" + uuid.uuid4().hex[:20]
        tool_input = {"file_path": os.path.join(os.getcwd(), path), "content": content}
        assistant([{"type": "tool_use", "id": tool_id, "name": "Write", "input": tool_input}])
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        write({"type": "user", "message": {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": tool_id,
            "content": f"File written: {tool_input['file_path']}"}]},
            "parent_tool_use_id": None, "session_id": SESSION, "uuid": str(uuid.uuid4())})

    def reply(edits: dict[str, str]) -> None:
        write({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION,
               "tools": ["Bash", "Read", "Write"], "model": MODEL,
               "permissionMode": "bypassPermissions", "uuid": str(uuid.uuid4())})
        for path, content in edits.items():
            write_file(path, content)
        text = f"Edited {len(edits)} file(s)." if edits else "ok"
        assistant([{"type": "text", "text": text}])
        write({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1,
               "duration_api_ms": 1, "num_turns": 1 + len(edits), "result": text,
               "session_id": SESSION, "total_cost_usd": 0,
               "usage": {"input_tokens": 1, "output_tokens": 1}, "uuid": str(uuid.uuid4())})
        out.flush()

    for prompt in prompts(write, out.flush, MODEL):
        found = EDIT.search(prompt)
        reply(json.loads(base64.b64decode(found.group(1))) if found else {})


if __name__ == "__main__":
    main()
