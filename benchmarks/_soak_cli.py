"""A fake Claude Code CLI for the memory soak: long replies, sent the way
the real CLI sends them.

Speaks enough of the stdio stream-json protocol for pneuma's
``ClaudeCodeBackend`` (control requests answered; per user message
``system/init``, the reply, ``result``). A prompt ``soak n=N`` streams one
text reply of N ``content_block_delta`` events of 64 bytes of text each,
between ``message_start``/``content_block_start`` and
``content_block_stop``/``message_delta``/``message_stop``; then, as Claude
Code does, the **whole text again** in the ``assistant`` message and a
third time in ``result.result``. Every delta's text is different (its
number is in it), so nothing downstream can share the strings. Any other
prompt (the mode's greeting) gets a one-line reply in the same shape.
"""

from __future__ import annotations

import json
import os
import sys
import uuid

from _stream_cli import prompts

SESSION = str(uuid.uuid4())
MODEL = "claude-soak"
# "%08d " + 55 filler bytes = 64 bytes of text per delta.
FILLER = "lorem ipsum dolor sit amet, consectetur adipiscing elit"


def main() -> None:
    out = open(sys.stdout.fileno(), "w", buffering=1 << 16, encoding="utf-8", closefd=False)

    def write(message: dict) -> None:
        out.write(json.dumps(message, separators=(",", ":")) + "\n")

    def stream_event(event: dict) -> None:
        write({"type": "stream_event", "event": event, "session_id": SESSION,
               "parent_tool_use_id": None, "uuid": str(uuid.uuid4())})

    def reply(pieces: list[str]) -> None:
        message_id = "msg_soak_" + uuid.uuid4().hex[:16]
        write({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION,
               "tools": ["Bash", "Read", "Write"], "model": MODEL,
               "permissionMode": "bypassPermissions", "uuid": str(uuid.uuid4())})
        stream_event({"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": MODEL,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}})
        stream_event({"type": "content_block_start", "index": 0,
                      "content_block": {"type": "text", "text": ""}})
        # The deltas as text: json.dumps per line would make this fake CLI,
        # not the server, the slowest part of a burst.
        head = ('{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
                '"delta":{"type":"text_delta","text":"')
        tail = ('"}},"session_id":"' + SESSION + '","parent_tool_use_id":null,'
                '"uuid":"00000000-0000-4000-8000-%012d"}\n')
        w = out.write
        for i, piece in enumerate(pieces):
            w(head + piece + tail % i)
        stream_event({"type": "content_block_stop", "index": 0})
        stream_event({"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                         "stop_sequence": None},
                      "usage": {"output_tokens": len(pieces)}})
        stream_event({"type": "message_stop"})
        text = "".join(pieces)
        write({"type": "assistant", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": MODEL,
            "content": [{"type": "text", "text": text}], "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": len(pieces)}},
            "parent_tool_use_id": None, "session_id": SESSION, "uuid": str(uuid.uuid4())})
        write({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1,
               "duration_api_ms": 1, "num_turns": 1, "result": text, "session_id": SESSION,
               "total_cost_usd": 0, "usage": {"input_tokens": 1, "output_tokens": len(pieces)},
               "uuid": str(uuid.uuid4())})
        out.flush()

    for prompt in prompts(write, out.flush, MODEL):
        words = dict(w.split("=", 1) for w in prompt.split() if "=" in w)
        if "soak" in prompt.split() and "n" in words:
            reply(["%08d %s" % (i, FILLER) for i in range(int(words["n"]))])
        else:
            reply(["ok"])


if __name__ == "__main__":
    main()
