"""A fake Claude Code CLI that streams text deltas as fast as it can.

Speaks the stdio stream-json protocol enough for pneuma's
``ClaudeCodeBackend``: answers control requests (initialize, interrupt,
set_model) and, for each user message, replies with ``system/init``, then
``stream_event`` lines, then ``result``. A prompt ``bench n=N rate=R``
streams N ``content_block_delta`` events whose text is exactly 64 bytes:
``@`` + the 19-digit ``time.monotonic_ns()`` at which the line was made +
``|`` + filler. ``rate=0`` writes as fast as the pipe takes them; otherwise
one line every 1/R seconds on an absolute schedule, each flushed at once.
Any other prompt gets a one-line reply.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator

SESSION = str(uuid.uuid4())
FILLER = "x" * 43  # 1 + 19 + 1 + 43 = 64 bytes of text


def prompts(write: Callable[[dict], None], flush: Callable[[], None], model: str
            ) -> Iterator[str]:
    """A fake CLI's stdin: control requests answered (``model`` the one it
    offers), the text of each user message yielded."""
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = json.loads(raw)
        kind = message.get("type")
        if kind == "control_request":
            request = message.get("request") or {}
            response: dict = {}
            if request.get("subtype") == "initialize":
                response = {"commands": [], "models": [{"value": model}]}
            write({"type": "control_response", "response": {
                "subtype": "success", "request_id": message["request_id"], "response": response}})
            flush()
            continue
        if kind != "user":
            continue
        content = message["message"]["content"]
        yield content if isinstance(content, str) else " ".join(
            b.get("text", "") for b in content if isinstance(b, dict))


def main() -> None:
    out = open(sys.stdout.fileno(), "w", buffering=1 << 16, encoding="utf-8", closefd=False)

    def write(message: dict) -> None:
        out.write(json.dumps(message, separators=(",", ":")) + "\n")

    def init() -> None:
        write({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION,
               "tools": ["Bash", "Read", "Write"], "model": "claude-bench", "permissionMode":
               "bypassPermissions", "uuid": str(uuid.uuid4())})

    def result(text: str) -> None:
        write({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1,
               "num_turns": 1, "result": text, "session_id": SESSION, "total_cost_usd": 0,
               "usage": {"input_tokens": 1, "output_tokens": 1}, "uuid": str(uuid.uuid4())})
        out.flush()

    prefix = ('{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
              '"delta":{"type":"text_delta","text":"@')
    # Key order and fields as the real CLI writes them (reference transcripts).
    suffix_fmt = ('|' + FILLER + '"}},"session_id":"' + SESSION + '","parent_tool_use_id":null,'
                  '"uuid":"00000000-0000-4000-8000-%012d","api_message_id":"MSGID"}\n')
    clock = time.monotonic_ns

    def stream(count: int, rate: float) -> None:
        message_id = "msg_bench_" + uuid.uuid4().hex[:12]
        write({"type": "stream_event", "event": {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "content": [],
            "model": "claude-bench"}}, "parent_tool_use_id": None, "session_id": SESSION})
        out.flush()
        w = out.write
        suffix = suffix_fmt.replace("MSGID", message_id)
        if rate <= 0:
            for i in range(count):
                w(prefix + "%019d" % clock() + suffix % i)
        else:
            interval = 1e9 / rate
            start = clock() + 5_000_000
            for i in range(count):
                due = start + int(i * interval)
                wait = due - clock()
                if wait > 0:
                    time.sleep(wait / 1e9)
                w(prefix + "%019d" % clock() + suffix % i)
                out.flush()
        out.flush()
        write({"type": "stream_event", "event": {"type": "message_stop"},
               "parent_tool_use_id": None, "session_id": SESSION})

    for prompt in prompts(write, out.flush, "claude-bench"):
        init()
        words = dict(w.split("=", 1) for w in prompt.split() if "=" in w)
        if prompt.startswith("bench") and "n" in words:
            stream(int(words["n"]), float(words.get("rate", "0")))
            result("streamed")
        else:
            result("ok")


if __name__ == "__main__":
    main()
