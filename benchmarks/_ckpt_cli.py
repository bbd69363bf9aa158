"""A fake Claude Code CLI for ``bench_checkpoints.py``: an agent whose every
turn changes a few files of the workspace.

A prompt ``ckpt turn=N edit=A,B bin=C`` is answered so:

1. the moment its stdin line was read is taken (``time.monotonic_ns()``;
   one clock for the whole machine on Linux, so the benchmark subtracts the
   moment it sent the message over the socket: the agent's wait);
2. each text file of ``edit=`` gets a new line of words inserted at a
   random place (an agent's text edit), each file of ``bin=`` is rewritten
   whole with new random bytes of the same size (a regenerated asset),
   written in place as an agent's tools write;
3. the reply is ``ckpt-turn=N recv=<ns>`` as one assistant message, then the
   ``result`` with the same text.

Any other prompt (a greeting) gets ``ok``. Paths are relative to the
working directory, which the backend sets to the workspace.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import time
import uuid

from _stream_cli import prompts

SESSION = str(uuid.uuid4())
MODEL = "claude-ckpt"
TURN = re.compile(r"ckpt turn=(\d+) edit=(\S*) bin=(\S*)")
WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
         "rho sigma tau upsilon phi chi psi omega").split()


def edit_text(path: str, rng: random.Random) -> None:
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    line = " ".join(rng.choice(WORDS) for _ in range(12))
    lines.insert(rng.randrange(len(lines) + 1), line)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def rewrite_binary(path: str) -> None:
    size = os.path.getsize(path)
    with open(path, "wb") as f:
        f.write(os.urandom(size))


def main() -> None:
    out = open(sys.stdout.fileno(), "w", buffering=1 << 16, encoding="utf-8", closefd=False)
    rng = random.Random(27)

    def write(message: dict) -> None:
        out.write(json.dumps(message, separators=(",", ":")) + "\n")

    def reply(text: str) -> None:
        write({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION,
               "tools": ["Bash", "Read", "Write"], "model": MODEL,
               "permissionMode": "bypassPermissions", "uuid": str(uuid.uuid4())})
        write({"type": "assistant", "message": {
            "id": "msg_ckpt_" + uuid.uuid4().hex[:16], "type": "message", "role": "assistant",
            "model": MODEL, "content": [{"type": "text", "text": text}], "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}},
            "parent_tool_use_id": None, "session_id": SESSION, "uuid": str(uuid.uuid4())})
        write({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1,
               "duration_api_ms": 1, "num_turns": 1, "result": text, "session_id": SESSION,
               "total_cost_usd": 0, "usage": {"input_tokens": 1, "output_tokens": 1},
               "uuid": str(uuid.uuid4())})
        out.flush()

    for prompt in prompts(write, out.flush, MODEL):
        received = time.monotonic_ns()
        turn = TURN.search(prompt)
        if turn is None:
            reply("ok")
            continue
        for path in filter(None, turn.group(2).split(",")):
            edit_text(path, rng)
        for path in filter(None, turn.group(3).split(",")):
            rewrite_binary(path)
        reply(f"ckpt-turn={turn.group(1)} recv={received}")


if __name__ == "__main__":
    main()
