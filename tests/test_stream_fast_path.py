"""The agent → browser hot path: chunked stdout reading and stream_event
lines forwarded without re-encoding must behave exactly like the general
path (parse every line, json.dumps every message)."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from pneuma.agents.claude_code import read_lines
from pneuma.agents.stream_json import AgentLink, StreamJsonBridge
from pneuma.server.session import Session
from tests.fakes.sink import RecordingSink


class _Tab:
    """A subscribed browser connection that keeps what it is sent."""

    subscribed = True
    closed = False

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send(self, text: str) -> None:
        self.sent.append(text)

    def send_many(self, texts: list[str]) -> None:
        self.sent.extend(texts)

    def send_frame(self, data: bytes, count: int) -> None:
        texts = data.decode().split("\n")  # as the browser splits a frame
        assert len(texts) == count
        self.sent.extend(texts)


def _session(tmp_path: Path) -> tuple[Session, _Tab]:
    session = Session("sid", mode="slide", workspace=tmp_path, backend_name="claude-code")
    tab = _Tab()
    session.connections.add(tab)  # type: ignore[arg-type]
    return session, tab


DELTA = {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": "héllo \"quoted\" \\ tab\t ✓ 😀"}}

LINES = [
    # The CLI's own shape and key order (the fast path proper).
    '{"type":"stream_event","event":' + json.dumps(DELTA, separators=(",", ":"), ensure_ascii=False)
    + ',"session_id":"8fcbed9b-d69c","parent_tool_use_id":null,"uuid":"u-1","api_message_id":"m"}',
    # A subagent's stream: parent is a string.
    '{"type":"stream_event","event":{"type":"message_stop"},"session_id":"s",'
    '"parent_tool_use_id":"toolu_01ABC","uuid":"u-2"}',
    # No parent key at all; escapes in the tail; ASCII-escaped event text.
    '{"type":"stream_event","event":{"type":"ping","x":"\\u00e9\\n"},"session_id":"a\\"b"}',
    # Nothing after the event.
    '{"type":"stream_event","event":{"type":"ping"}}',
    # Pretty-printed JSON (another producer): the general path.
    '{"type": "stream_event", "event": {"type": "ping"}, "parent_tool_use_id": null}',
    # A repeated key after the event: the last one wins, as in json.loads.
    '{"type":"stream_event","event":{"type":"ping"},"type":"keep_alive"}',
    '{"type":"stream_event","event":{"type":"ping"},"event":{"type":"other"}}',
    '{"type":"stream_event","event":{"type":"ping"},"parent_tool_use_id":"a",'
    '"parent_tool_use_id":"b"}',
    # Nested values and numbers in the tail.
    '{"type":"stream_event","event":{"type":"ping"},"n":12,"x":1.5,"o":{"a":[1,2]},'
    '"parent_tool_use_id":null}',
    # Broken lines: never forwarded.
    '{"type":"stream_event","event":{"type":"ping"},"session_id":"trunc',
    '{"type":"stream_event","event":{"type":"ping"',
    '{"type":"stream_event","event":{"type":"ping"},"x":"a\x01b"}',
    '{"type":"stream_event","event":{"type":"ping"}} trailing',
    '{"type":"stream_event","event":{"type":"ping"}}\x0b',
    '{"type":"stream_event","event":nul}',
    '{"type":"stream_event","event":{"type":"ping"}, }',
    '{"type":"stream_event","event":{"type":"ping"},}',
    '{"type":"stream_event","event":{"type":"ping"} ,"a":1}',
    # Windows line end.
    '{"type":"stream_event","event":{"type":"ping"},"parent_tool_use_id":null}\r',
    # content_block_delta lines, checked and cut by one pattern (_DELTA_LINE):
    # escapes of every kind, tool input, a subagent's parent, spaces, CR.
    '{"type":"stream_event","event":{"type":"content_block_delta","index":12,"delta":'
    '{"type":"input_json_delta","partial_json":"{\\"a\\": \\"\\u00e9\\/\\b\\f\\n\\r\\t\\"}"}},'
    '"session_id":"s","parent_tool_use_id":"toolu_9","uuid":"u","n":-3,"ok":true,"no":false}',
    '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
    '{"type":"thinking_delta","thinking":"😀 \\ud83d\\ude00"}},"parent_tool_use_id":null} \t\r',
    '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
    '{"type":"text_delta","text":"x"}}}',
    # The last parent_tool_use_id wins; a repeated "type" or "event" too.
    '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
    '{"type":"text_delta","text":"x"}},"parent_tool_use_id":"a","parent_tool_use_id":null}',
    '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
    '{"type":"text_delta","text":"x"}},"parent_tool_use_id":null,"type":"keep_alive"}',
    '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
    '{"type":"text_delta","text":"x"}},"event":{"type":"ping"}}',
    # Other delta shapes: the general stream path.
    '{"type":"stream_event","event":{"type":"content_block_delta","index":-1,"delta":'
    '{"type":"citations_delta","citation":{"a":1}}},"parent_tool_use_id":null}',
    # Broken delta lines: never forwarded.
    '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
    '{"type":"text_delta","text":"bad \\x escape"}},"parent_tool_use_id":null}',
    '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
    '{"type":"text_delta","text":"bad \\u12G4"}},"parent_tool_use_id":null}',
    '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
    '{"type":"text_delta","text":"raw \x01 control"}},"parent_tool_use_id":null}',
    '{"type":"stream_event","event":{"type":"content_block_delta","index":01,"delta":'
    '{"type":"text_delta","text":"x"}},"parent_tool_use_id":null}',
    '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
    '{"type":"text_delta","text":"x"}},"parent_tool_use_id":1\u0663}',  # an Arabic-Indic digit
    '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
    '{"type":"text_delta","text":"x"}},"parent_tool_use_id":null}}',
    '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
    '{"type":"text_delta","text":"unterminated}},"parent_tool_use_id":null}',
]


@pytest.mark.parametrize("line", LINES)
def test_a_stream_line_reaches_the_browser_as_the_general_path_would_send_it(tmp_path, line):
    session, tab = _session(tmp_path)
    fast = StreamJsonBridge(session)
    fast.feed(AgentLink(), line + "\n")

    general_sink = RecordingSink()
    general = StreamJsonBridge(general_sink)  # no emit_stream: every message as a dict
    general.feed(AgentLink(), line + "\n")
    expected = []
    for seq, message in enumerate(general_sink.events, start=1):
        expected.append({**message, "seq": seq})

    assert [json.loads(text) for text in tab.sent] == expected
    # The replay buffer holds exactly what was sent.
    assert [text for _, text in session.replay] == tab.sent
    if tab.sent:
        # Same key order as json.dumps of the general path's message.
        assert list(json.loads(tab.sent[0])) == ["type", "event", "parent_tool_use_id", "seq"] \
            or json.loads(tab.sent[0])["type"] != "stream_event"


def test_a_chunk_of_mixed_lines_gives_what_the_general_path_gives_line_by_line(tmp_path):
    """Delta lines are matched where they start in the chunk; every other
    line (blank, other messages, broken) is cut out and handled in between,
    in order. Also a last line without its newline."""
    chunk = "\n".join(["", "  ", *LINES, LINES[0], "\r", '{"type":"keep_alive"}', LINES[20], ""])
    for data in (chunk, chunk.rstrip("\n")):
        session, tab = _session(tmp_path)
        StreamJsonBridge(session).feed(AgentLink(), data)
        general_sink = RecordingSink()
        StreamJsonBridge(general_sink).feed(AgentLink(), data)
        expected = [{**m, "seq": n} for n, m in enumerate(general_sink.events, start=1)]
        assert [json.loads(text) for text in tab.sent] == expected
        assert len(expected) > 10


def test_bytes_input_and_invalid_utf8_lose_only_the_bad_line(tmp_path, caplog):
    session, tab = _session(tmp_path)
    bridge = StreamJsonBridge(session)
    good = '{"type":"stream_event","event":{"type":"ping","t":"é"},"parent_tool_use_id":null}\n'
    with caplog.at_level(logging.WARNING):
        bridge.feed(AgentLink(), good.encode() + b'{"type":"stream_event","event":{"t":"\xff"}}\n'
                    + good.encode())
    assert [json.loads(t)["event"] for t in tab.sent] == [{"type": "ping", "t": "é"}] * 2
    assert "not JSON" in caplog.text


def test_a_message_start_ends_the_resume_echo_check_on_the_fast_path(tmp_path):
    session, _ = _session(tmp_path)
    bridge = StreamJsonBridge(session)
    bridge.resume_echo = ("msg_old", [{"type": "text", "text": "hi"}])
    bridge.feed(AgentLink(), '{"type":"stream_event","event":{"type":"content_block_delta"},'
                             '"parent_tool_use_id":null}\n')
    assert bridge.resume_echo is not None
    bridge.feed(AgentLink(), '{"type":"stream_event","event":{"type":"message_start",'
                             '"message":{"id":"msg_new"}},"parent_tool_use_id":null}\n')
    assert bridge.resume_echo is None


def test_seq_numbers_are_shared_with_other_broadcasts_and_replay_is_exact(tmp_path):
    session, tab = _session(tmp_path)
    bridge = StreamJsonBridge(session)
    bridge.feed(AgentLink(), '{"type":"stream_event","event":{"type":"ping"}}\n'
                             '{"type":"keep_alive"}\n'
                             '{"type":"system","subtype":"status","status":"requesting"}\n'
                             '{"type":"stream_event","event":{"type":"ping"}}\n')
    seqs = [json.loads(t)["seq"] for t in tab.sent]
    assert seqs == [1, 2, 3]
    late = _Tab()
    session.subscribe(late, 1)  # type: ignore[arg-type]
    assert late.sent[:2] == tab.sent[1:]


# --- reading stdout in chunks ---


async def _read_all(payload: bytes, *, chunk_size: int, pieces: list[int] | None = None,
                    line_limit: int = 64 * 1024 * 1024) -> list[bytes]:
    reader = asyncio.StreamReader(limit=2 * chunk_size)
    fed: list[bytes] = []

    async def produce() -> None:
        position = 0
        for size in pieces or [len(payload)]:
            reader.feed_data(payload[position:position + size])
            position += size
            await asyncio.sleep(0)
        if position < len(payload):
            reader.feed_data(payload[position:])
        reader.feed_eof()

    producer = asyncio.create_task(produce())
    await read_lines(reader, fed.append, chunk_size=chunk_size, line_limit=line_limit)
    await producer
    assert all(piece.endswith(b"\n") for piece in fed[:-1])
    return fed


async def test_a_3_mib_line_split_across_many_chunks_arrives_whole():
    big = b'{"type":"assistant","text":"' + b"x" * (3 * 1024 * 1024) + b'"}\n'
    payload = b'{"a":1}\n' + big + b'{"b":2}\n'
    fed = await _read_all(payload, chunk_size=64 * 1024, pieces=[5, 100_000, 1_000_000, 7])
    lines = b"".join(fed).split(b"\n")
    assert lines == [b'{"a":1}', big[:-1], b'{"b":2}', b""]
    # No line is ever cut: every piece handed over ends at a line end.
    assert all(piece.endswith(b"\n") for piece in fed)


async def test_a_last_line_without_newline_is_still_fed():
    fed = await _read_all(b'{"a":1}\n{"b":2}', chunk_size=4)
    assert b"".join(fed) == b'{"a":1}\n{"b":2}'
    assert fed[-1].endswith(b'{"b":2}')


async def test_many_small_lines_come_in_few_feeds():
    payload = b"".join(b'{"i":%d}\n' % i for i in range(5000))
    fed = await _read_all(payload, chunk_size=64 * 1024)
    assert b"".join(fed) == payload
    assert len(fed) < 10


async def test_a_line_beyond_the_limit_is_skipped_and_the_next_one_read(caplog):
    payload = b'{"a":1}\n' + b"y" * 5000 + b'\n{"b":2}\n'
    with caplog.at_level(logging.WARNING):
        fed = await _read_all(payload, chunk_size=256, line_limit=1000)
    assert b"".join(fed) == b'{"a":1}\n{"b":2}\n'
    assert "longer than 1000 bytes" in caplog.text


async def test_stdout_in_chunks_through_the_bridge_gives_every_event_once(tmp_path):
    session, tab = _session(tmp_path)
    bridge = StreamJsonBridge(session)
    link = AgentLink()
    texts = [f"delta {i} " + "z" * (i % 300) for i in range(3000)]
    payload = "".join(
        '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
        '{"type":"text_delta","text":' + json.dumps(t) + '}},"session_id":"s",'
        '"parent_tool_use_id":null,"uuid":"u"}\n' for t in texts
    ).encode()
    reader = asyncio.StreamReader()
    reader.feed_data(payload)
    reader.feed_eof()
    await read_lines(reader, lambda data: bridge.feed(link, data), chunk_size=1000)
    got: list[Any] = [json.loads(t)["event"]["delta"]["text"] for t in tab.sent]
    assert got == texts
