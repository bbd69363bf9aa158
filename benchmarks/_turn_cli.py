"""A fake Claude Code CLI for ``bench_turnsoak.py``: short turns shaped like
an agent's, each writing one file of the workspace.

A prompt ``turn=N`` is answered as Claude Code answers a small edit:
``system/init``; a streamed ``tool_use`` of ``Write`` (its input as
``input_json_delta`` events) and the ``assistant`` message holding it; the
file written (``assets/notes/turn-<N % 20>.md``, relative to the working
directory, which the backend sets to the workspace; the slide mode watches
``assets/``), so the watcher and the turn's checkpoint see a change; the
``user`` message with its ``tool_result``; then a streamed text reply of a
few hundred bytes, its ``assistant`` message and ``result`` with the text
again. Any other prompt (the mode's greeting) gets
``ok`` in the same shape.
"""

from __future__ import annotations

import json
import os
import re
import sys
import uuid

from _stream_cli import prompts

SESSION = str(uuid.uuid4())
MODEL = "claude-turns"
TURN = re.compile(r"turn=(\d+)")
WORDS = ("slide title layout wording shorter clearer chart colour spacing heading bullet "
         "summary speaker notes contrast font margin image caption table section").split()


def main() -> None:
    out = open(sys.stdout.fileno(), "w", buffering=1 << 16, encoding="utf-8", closefd=False)

    def write(message: dict) -> None:
        out.write(json.dumps(message, separators=(",", ":")) + "\n")

    def event(event: dict) -> None:
        write({"type": "stream_event", "event": event, "session_id": SESSION,
               "parent_tool_use_id": None, "uuid": str(uuid.uuid4())})

    def assistant(message_id: str, content: list[dict]) -> None:
        write({"type": "assistant", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": MODEL,
            "content": content, "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}},
            "parent_tool_use_id": None, "session_id": SESSION, "uuid": str(uuid.uuid4())})

    def start(message_id: str) -> None:
        event({"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": MODEL,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}})

    def stop() -> None:
        event({"type": "content_block_stop", "index": 0})
        event({"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                  "stop_sequence": None},
               "usage": {"output_tokens": 1}})
        event({"type": "message_stop"})

    def tool_write(number: int) -> None:
        message_id = "msg_tool_" + uuid.uuid4().hex[:16]
        tool_id = "toolu_" + uuid.uuid4().hex[:20]
        path = f"assets/notes/turn-{number % 20}.md"
        content = f"# Turn {number}\n\n" + " ".join(WORDS[(number + i) % len(WORDS)]
                                                     for i in range(40)) + "\n"
        tool_input = {"file_path": os.path.join(os.getcwd(), path), "content": content}
        start(message_id)
        event({"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": tool_id, "name": "Write", "input": {}}})
        text = json.dumps(tool_input)
        for i in range(0, len(text), 80):
            event({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "input_json_delta", "partial_json": text[i:i + 80]}})
        stop()
        assistant(message_id, [{"type": "tool_use", "id": tool_id, "name": "Write",
                                "input": tool_input}])
        os.makedirs("assets/notes", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        write({"type": "user", "message": {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": tool_id,
            "content": f"File created successfully at: {tool_input['file_path']}"}]},
            "parent_tool_use_id": None, "session_id": SESSION, "uuid": str(uuid.uuid4())})

    def reply(number: int | None) -> None:
        write({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION,
               "tools": ["Bash", "Read", "Write"], "model": MODEL,
               "permissionMode": "bypassPermissions", "uuid": str(uuid.uuid4())})
        if number is not None:
            tool_write(number)
        words = 1 if number is None else 20 + number % 60
        pieces = ["ok"] if number is None else \
            [WORDS[(number * 7 + i) % len(WORDS)] + " " for i in range(words)]
        message_id = "msg_text_" + uuid.uuid4().hex[:16]
        start(message_id)
        event({"type": "content_block_start", "index": 0,
               "content_block": {"type": "text", "text": ""}})
        for i in range(0, len(pieces), 4):
            event({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": "".join(pieces[i:i + 4])}})
        stop()
        text = "".join(pieces)
        assistant(message_id, [{"type": "text", "text": text}])
        write({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1,
               "duration_api_ms": 1, "num_turns": 2, "result": text, "session_id": SESSION,
               "total_cost_usd": 0, "usage": {"input_tokens": 1, "output_tokens": len(pieces)},
               "uuid": str(uuid.uuid4())})
        out.flush()

    for prompt in prompts(write, out.flush, MODEL):
        found = TURN.search(prompt)
        reply(int(found.group(1)) if found else None)


if __name__ == "__main__":
    main()
