"""The conversation log's format: SQLite (WAL) against JSONL, measured side by side.

    python benchmarks/bench_convlog.py [--turns 2000]

Issue 15 asked for "one durable record per message (SQLite WAL, or JSONL
with fsync batching — measure both and pick)". This measures, on this
machine's disk, for a conversation of ``--turns`` turns (a user message, an
assistant message whose text then grows by a second block, a result):

- the event loop's cost per message written (what a streaming reply pays);
- updating the message being streamed (SQLite: one UPDATE; JSONL: append
  the new version, the reader keeps the last one per id);
- the cost of making it durable against a power loss (SQLite: a checkpoint;
  JSONL: an fsync per batch), off the event loop in both;
- a new tab's first page (the newest 1 MiB) and a page from the middle.

Pneuma uses the SQLite form (``pneuma/server/conversation_log.py``); the
JSONL one here is written for this comparison only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from _common import finish, machine_note, row, temp_dir

from pneuma.server.conversation_log import ConversationLog

PAGE_BYTES = 1024 * 1024


def conversation(turns: int) -> list[tuple[str, str | None, str]]:
    """(kind, message id, text) in the order a session logs them; an
    assistant message appears twice (its first block, then both)."""
    out: list[tuple[str, str | None, str]] = []
    for turn in range(turns):
        words = " ".join(f"word{turn}-{i}" for i in range(60))
        out.append(("user_message", None, json.dumps(
            {"type": "user_message", "content": f"turn {turn}: make the slide better"})))
        first = {"type": "assistant", "message": {"id": f"m{turn}", "role": "assistant",
                                                  "content": [{"type": "text", "text": words}]}}
        out.append(("assistant", f"m{turn}", json.dumps(first)))
        both = {"type": "assistant", "message": {"id": f"m{turn}", "role": "assistant", "content": [
            {"type": "text", "text": words},
            {"type": "tool_use", "id": f"t{turn}", "name": "Edit", "input": {"path": "a.md"}}]}}
        out.append(("assistant", f"m{turn}", json.dumps(both)))
        out.append(("result", None, json.dumps({"type": "result", "data": {
            "subtype": "success", "is_error": False, "result_length": len(words)}})))
    return out


def bench_sqlite(directory: Path, messages: list[tuple[str, str | None, str]]
                 ) -> dict[str, float]:
    log = ConversationLog.open(directory)
    rows: dict[str, int] = {}
    next_id = 1
    start = time.perf_counter()
    for seq, (kind, message_id, text) in enumerate(messages, 1):
        if message_id is not None and message_id in rows:
            log.replace(rows[message_id], seq, text)
            continue
        log.append("s", next_id, seq, kind, message_id, text)
        if message_id is not None:
            rows[message_id] = next_id
        next_id += 1
    per_message = (time.perf_counter() - start) / len(messages) * 1e6
    start = time.perf_counter()
    log.checkpoint()
    durable = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    tail = log.tail("s", PAGE_BYTES)
    first_page = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    log.read_page("s", next_id // 2, PAGE_BYTES // 2, 500)
    middle_page = (time.perf_counter() - start) * 1e3
    assert tail.messages
    log.close()
    size = (directory / "conversation.db").stat().st_size / 2**20
    return {"write_us": per_message, "durable_ms": durable, "first_page_ms": first_page,
            "middle_page_ms": middle_page, "size_mib": size}


def bench_jsonl(directory: Path, messages: list[tuple[str, str | None, str]]
                ) -> dict[str, float]:
    path = directory / "conversation.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    start = time.perf_counter()
    for _kind, _message_id, text in messages:
        # One line per version; the newest version of an id wins on reading.
        os.write(fd, (text + "\n").encode("utf-8"))
    per_message = (time.perf_counter() - start) / len(messages) * 1e6
    start = time.perf_counter()
    os.fsync(fd)
    durable = (time.perf_counter() - start) * 1e3
    os.close(fd)

    def newest_page(end: int, budget: int) -> list[str]:
        """Read backwards from byte ``end`` until ``budget`` bytes of
        distinct messages: what a JSONL log needs without an index."""
        seen: set[str] = set()
        out: list[str] = []
        used = 0
        with open(path, "rb") as f:
            # Start at a line boundary: the last newline at or before ``end``.
            f.seek(max(0, end - 65536))
            head = f.read(end - max(0, end - 65536))
            end = max(0, end - 65536) + head.rfind(b"\n") + 1
            position = end
            carry = b""
            while position > 0 and used < budget:
                step = min(65536, position)
                position -= step
                f.seek(position)
                chunk = f.read(step) + carry
                lines = chunk.split(b"\n")
                carry = lines[0]
                for line in reversed(lines[1:]):
                    if not line:
                        continue
                    message = json.loads(line)
                    key = (message.get("message") or {}).get("id") if message.get(
                        "type") == "assistant" else None
                    if key is not None and key in seen:
                        continue
                    if key is not None:
                        seen.add(key)
                    out.append(line.decode())
                    used += len(line)
        out.reverse()
        return out

    size = path.stat().st_size
    start = time.perf_counter()
    newest_page(size, PAGE_BYTES)
    first_page = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    newest_page(size // 2, PAGE_BYTES // 2)
    middle_page = (time.perf_counter() - start) * 1e3
    return {"write_us": per_message, "durable_ms": durable, "first_page_ms": first_page,
            "middle_page_ms": middle_page, "size_mib": size / 2**20}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args()
    print(machine_note())
    messages = conversation(args.turns)
    tmp = temp_dir("pneuma-bench-convlog-")
    try:
        (tmp / "sqlite").mkdir()
        (tmp / "jsonl").mkdir()
        sqlite = bench_sqlite(tmp / "sqlite", messages)
        jsonl = bench_jsonl(tmp / "jsonl", messages)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(messages)} messages ({args.turns} turns)")
    print(f"{'':28} {'SQLite WAL':>12} {'JSONL':>12}")
    for key, label in (("write_us", "write per message (µs)"),
                       ("durable_ms", "make durable (ms)"),
                       ("first_page_ms", "newest 1 MiB page (ms)"),
                       ("middle_page_ms", "a page mid-log (ms)"),
                       ("size_mib", "file size (MiB)")):
        print(f"{label:28} {sqlite[key]:12.2f} {jsonl[key]:12.2f}")
    rows = [
        row("conversation log: write per message", sqlite["write_us"], None, "µs", "lower",
            jsonl["write_us"], "JSONL", info=True),
        row("conversation log: newest page", sqlite["first_page_ms"], None, "ms", "lower",
            jsonl["first_page_ms"], "JSONL", info=True),
        row("conversation log: page mid-log", sqlite["middle_page_ms"], None, "ms", "lower",
            jsonl["middle_page_ms"], "JSONL", info=True),
    ]
    return finish(rows, "JSONL writes less per message but has no in-place update (its file "
                        "keeps every version of a streamed message) and reads pages by scanning.")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
