"""Random lines from an agent never stop the ACP connection: each is a
message the connection can take, or a problem told and dropped (hypothesis)."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pneuma.agents.acp.transport import CheckedLineTransport, problem_with

GOOD = {"jsonrpc": "2.0", "method": "session/update", "params": {
    "sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",
                                 "content": {"type": "text", "text": "still here"}}}}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error",
                                       "sessionId", "update", "sessionUpdate", "x"]),
                      inner, max_size=5),
    max_leaves=12)
methods = st.sampled_from(["session/update", "session/request_permission", "fs/read_text_file",
                           "fs/write_text_file", "session/x", "_ext", "initialize"])
rpc_like = st.fixed_dictionaries({"jsonrpc": st.just("2.0")}, optional={
    "id": json_values, "method": methods | json_values, "params": json_values,
    "result": json_values, "error": json_values})
lines = st.lists(st.text(max_size=60).map(lambda t: t.replace("\n", " "))
                 | json_values.map(json.dumps) | rpc_like.map(json.dumps), max_size=12)


async def _receive_all(raw: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    here, there = socket.socketpair()
    reader = asyncio.StreamReader(limit=4096)
    for line in [*raw, json.dumps(GOOD)]:
        reader.feed_data(line.encode("utf-8", "surrogatepass") + b"\n")
    reader.feed_eof()
    _r, writer = await asyncio.open_connection(sock=here)
    problems: list[str] = []
    transport = CheckedLineTransport(reader, writer, problems.append, 4096)
    received = []
    while (message := await transport.receive()) is not None:
        received.append(message)
    await transport.close()
    there.close()
    return received, problems


@settings(max_examples=60, deadline=None)
@given(lines)
def test_random_lines_are_messages_or_told_problems(raw: list[str]) -> None:
    received, problems = asyncio.run(_receive_all(raw))
    assert received[-1] == GOOD  # the connection is still reading
    assert all(problem_with(m) is None for m in received)
    assert all(isinstance(m, dict) for m in received)
    non_blank = [line for line in raw if line.strip()]
    assert len(received) - 1 + len(problems) == len(non_blank)
