"""The conversation log after a streamed reply holds exactly what it held
before the replay buffer kept broadcasts by batch: a recorded Claude Code
reply (a streamed tool use, its result, a streamed text answer, the turn's
result) is fed through the stream-json bridge into a session with a log,
and the log's rows are compared with those the code before that change
wrote for the same lines (``log_after_stream.json``, made with commit
ce1ebe3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pneuma.agents.stream_json import AgentLink, StreamJsonBridge
from pneuma.server.conversation_log import ConversationLog
from pneuma.server.session import Session

GOLDEN = Path(__file__).with_name("log_after_stream.json")
SESSION = "0b7e6a52-5f0e-4f6b-9d43-recorded"


def _line(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def _event(event: dict[str, Any]) -> str:
    return _line({"type": "stream_event", "event": event, "session_id": SESSION,
                  "parent_tool_use_id": None, "uuid": "u"})


def _recorded() -> list[str]:
    """The lines of one reply, in the shape and order Claude Code writes."""
    tool_input = {"file_path": "/ws/slides/slide-02.html", "content": "<h1>Plan — é ✓</h1>\n"}
    text = "I rewrote the second slide: the title is shorter, \"quoted\" and ✓."
    lines = [_line({"type": "system", "subtype": "init", "cwd": "/ws", "session_id": SESSION,
                    "tools": ["Write"], "model": "claude-test", "permissionMode": "default"})]
    for message_id, block, pieces in (
            ("msg_01", {"type": "tool_use", "id": "toolu_01", "name": "Write", "input": {}},
             [json.dumps(tool_input)[i:i + 17] for i in range(0, len(json.dumps(tool_input)), 17)]),
            ("msg_02", {"type": "text", "text": ""},
             [text[i:i + 9] for i in range(0, len(text), 9)])):
        lines.append(_event({"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": "claude-test",
            "content": [], "usage": {"input_tokens": 3, "output_tokens": 1}}}))
        lines.append(_event({"type": "content_block_start", "index": 0, "content_block": block}))
        kind = "input_json_delta" if block["type"] == "tool_use" else "text_delta"
        key = "partial_json" if kind == "input_json_delta" else "text"
        lines += [_event({"type": "content_block_delta", "index": 0,
                          "delta": {"type": kind, key: piece}}) for piece in pieces]
        lines.append(_event({"type": "content_block_stop", "index": 0}))
        lines.append(_event({"type": "message_stop"}))
        content = {**block, "input": tool_input} if block["type"] == "tool_use" \
            else {"type": "text", "text": text}
        lines.append(_line({"type": "assistant", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": "claude-test",
            "content": [content], "usage": {"input_tokens": 3, "output_tokens": 9}},
            "parent_tool_use_id": None, "session_id": SESSION, "uuid": "u"}))
        if block["type"] == "tool_use":
            lines.append(_line({"type": "user", "message": {"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": "toolu_01",
                "content": "File created successfully at: /ws/slides/slide-02.html"}]},
                "parent_tool_use_id": None, "session_id": SESSION, "uuid": "u"}))
    lines.append(_line({"type": "result", "subtype": "success", "is_error": False,
                        "duration_ms": 1200, "duration_api_ms": 1100, "num_turns": 2,
                        "result": text, "session_id": SESSION, "total_cost_usd": 0.01,
                        "usage": {"input_tokens": 6, "output_tokens": 18}}))
    return lines


def log_rows(workspace: Path, chunk: int = 5) -> list[list[Any]]:
    """The log's rows (seq, kind, message id, body) after the recorded
    reply, fed in chunks of ``chunk`` lines as stdout reads give them."""
    log = ConversationLog.open(workspace / ".pneuma")
    try:
        session = Session("sid", mode="slide", workspace=workspace, backend_name="claude-code",
                          conversation=log)
        bridge = StreamJsonBridge(session)
        lines = _recorded()
        for start in range(0, len(lines), chunk):
            bridge.feed(AgentLink(), "".join(line + "\n" for line in lines[start:start + chunk]))
        rows = log._db.execute("SELECT seq, kind, message_id, body FROM messages ORDER BY id")
        return [[seq, kind, message_id, json.loads(body)] for seq, kind, message_id, body in rows]
    finally:
        log.close()


def test_the_log_after_a_streamed_reply_holds_what_it_held_before(tmp_path):
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for chunk in (1, 5, 1000):
        workspace = tmp_path / f"chunk-{chunk}"
        workspace.mkdir()
        assert log_rows(workspace, chunk) == expected, chunk
