"""A malformed agent line of any shape is skipped, never fatal (issue 14, item 3).

Over stdio a line like ``{"type":["assistant"]}`` used to kill the CLI's
stdout reader (the session stayed "running" forever, nothing logged); over
``/ws/cli`` it, or a deeply nested line, dropped the agent socket (1006).
Now every line that is not a well-formed message is logged as a warning
with its first characters and skipped; the session's status, seq and
history stay as they were, and the next line is handled as usual.

Both paths are fed hypothesis-generated JSON values and byte strings:
(a) the stream-json bridge, fed by ``read_lines`` exactly as the stdio
backend feeds it, with a real ``Session`` as its sink (and, once, the real
Claude Code backend with a fake CLI that prints the issue's line);
(b) a real server (``--backend socket``) and a real agent WebSocket.
"""

from __future__ import annotations

import asyncio
import json
import logging
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pneuma.agents.claude_code import ClaudeCodeBackend, read_lines
from pneuma.agents.stream_json import PREVIEW_CHARS, AgentLink, StreamJsonBridge
from pneuma.core.backend import BackendOptions
from pneuma.host.registry import get_mode
from pneuma.server.session import Session
from tests.fakes.sink import RecordingSink
from tests.server.harness import seeded_slide_workspace, server_config, start_app_server
from tests.test_ws_cli import Server, backend_spec

# The two lines of the issue.
LISTED_TYPE = b'{"type":["assistant"]}'
DEEP_LINE = b"[" * 100_000 + b"]" * 100_000
DEEP_IN_A_MESSAGE = (b'{"type":"assistant","message":{"id":"m","content":'
                     + b"[" * 5_000 + b"]" * 5_000 + b"}}")

KNOWN_TYPES = ["stream_event", "assistant", "user", "system", "result", "control_request",
               "control_response", "control_cancel_request", "keep_alive", "rate_limit_event"]
# The warning quotes the line's first PREVIEW_CHARS characters with repr,
# which may write one character as up to 10 (\U0001005e): bounded, not whole.
MAX_WARNING = 100 + PREVIEW_CHARS * 10
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

# -- what agents may write ----------------------------------------------------------

# Only surrogates that stay lone: high ones never pair with each other (a
# high one followed by a low one would be a valid character, U+10000 and up).
_lone_surrogates = (st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDBFF),
                            min_size=1, max_size=3)
                    | st.characters(min_codepoint=0xDC00, max_codepoint=0xDFFF))
_scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
            | st.text(max_size=12) | _lone_surrogates)
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=16,
)
# Objects that look like agent messages: a known type, the fields the
# handlers read, each of any JSON value.
_fields = ["message", "event", "parent_tool_use_id", "subtype", "session_id", "model", "cwd",
           "tools", "permissionMode", "slash_commands", "status", "error_status", "error",
           "request_id", "request", "response", "result", "is_error", "usage", "num_turns"]
_inner = st.fixed_dictionaries({}, optional={
    "id": json_values, "content": json_values | st.lists(st.fixed_dictionaries(
        {"type": st.just("tool_result")},
        optional={"tool_use_id": json_values, "content": json_values, "is_error": json_values})),
    "subtype": st.sampled_from(["can_use_tool", "success", "error"]) | json_values,
    "request_id": json_values, "response": json_values, "input": json_values,
})
message_like = st.fixed_dictionaries(
    {"type": st.sampled_from(KNOWN_TYPES)},
    optional={name: json_values | _inner for name in _fields},
)


def _deep(depth: int, kind: str) -> bytes:
    if kind == "list":
        return b"[" * depth + b"]" * depth
    return b'{"type":"assistant","message":' + b'{"a":' * depth + b"1" + b"}" * depth + b"}"


deep_lines = st.builds(_deep, st.integers(101, 20_000), st.sampled_from(["list", "object"]))


def _encode(value: Any, ascii_only: bool) -> bytes:
    """One NDJSON line as an agent could write it: escaped surrogates, or
    raw ones (bytes that are not UTF-8)."""
    if ascii_only:
        return json.dumps(value).encode()
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


any_line = st.one_of(
    st.builds(_encode, json_values | message_like, st.booleans()),
    deep_lines,
    st.binary(max_size=64).map(lambda b: b.replace(b"\n", b" ")),
)

# Lines that are certainly malformed, each for a reason an agent could give.
_not_objects = json_values.filter(lambda v: not isinstance(v, dict))
_not_string_types = json_values.filter(lambda v: not isinstance(v, str))
_wrong_fields = st.one_of(
    st.builds(lambda v: {"type": "assistant", "message": v}, _not_objects.filter(lambda v: v is not None)),
    st.builds(lambda v: {"type": "stream_event", "event": v}, _not_objects),
    st.builds(lambda v: {"type": "stream_event", "event": {}, "parent_tool_use_id": v},
              _not_string_types.filter(lambda v: v is not None)),
    st.builds(lambda v: {"type": "system", "subtype": "status", "status": v},
              _not_string_types.filter(lambda v: v is not None)),
    st.builds(lambda v: {"type": "result", "is_error": v},
              json_values.filter(lambda v: v is not None and not isinstance(v, bool))),
    st.builds(lambda v: {"type": "control_response", "response": {"request_id": v}},
              _not_string_types.filter(lambda v: v is not None)),
    st.builds(lambda v: {"type": "control_request", "request_id": "r", "request": v},
              _not_objects.filter(lambda v: v is not None)),
    st.builds(lambda v: {"type": "system", "subtype": "init", "session_id": v},
              _not_string_types.filter(lambda v: v is not None)),
)
malformed_line = st.one_of(
    st.builds(_encode, _not_objects, st.booleans()),
    st.builds(lambda t, rest: _encode({**rest, "type": t}, True), _not_string_types,
              st.dictionaries(st.text(max_size=8), json_values, max_size=3)),
    st.builds(_encode, _wrong_fields, st.just(True)),
    st.builds(lambda s: _encode({"type": "assistant", "message": {
        "id": "m", "content": [{"type": "text", "text": s}]}}, True), _lone_surrogates),
    deep_lines,
    st.binary(max_size=64).map(lambda b: b"\xff" + b.replace(b"\n", b" ")),  # never UTF-8
)


def result_line(marker: str) -> bytes:
    return json.dumps({"type": "result", "subtype": "success", "is_error": False,
                       "result": marker, "num_turns": 1}).encode() + b"\n"


class Warnings(logging.Handler):
    """The warnings one logger logs (hypothesis examples cannot use caplog)."""

    def __init__(self, logger: str) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self.logger = logging.getLogger(logger)

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def __enter__(self) -> Warnings:
        self.logger.addHandler(self)
        self.logger.setLevel(logging.DEBUG)
        return self

    def __exit__(self, *exc: object) -> None:
        self.logger.removeHandler(self)


def snapshot(session: Session) -> tuple[Any, ...]:
    return session.status, session.seq, json.dumps(session.history), dict(session.agent_state)


def assert_encodable(session: Session) -> None:
    """The session can still send and save everything it holds."""
    json.dumps(session.history, ensure_ascii=False).encode()
    for _, text in session.replay:
        text.encode()
    json.dumps(session.session_info(), ensure_ascii=False).encode()


# -- (a) the stdio path ---------------------------------------------------------------


class StdioFeed:
    """A bridge with a real session behind it, fed as the CLI's stdout reader feeds it."""

    def __init__(self, tmp_path: Path) -> None:
        self.session = Session("sid", mode="doc", workspace=tmp_path, backend_name="claude-code")
        self.bridge = StreamJsonBridge(self.session, logger=logging.getLogger("tests.bad_lines"))
        self.link = AgentLink()
        self.results = 0

    async def feed(self, data: bytes) -> None:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        await read_lines(reader, lambda chunk: self.bridge.feed(self.link, chunk), chunk_size=4096)

    async def still_answers(self) -> None:
        """A valid result after the bad line still ends the turn."""
        self.results += 1
        marker = f"done {self.results}"
        await self.feed(result_line(marker))
        assert self.session.status == "idle"
        assert self.session.history[-1]["type"] == "result"
        assert self.session.history[-1]["data"]["result"] == marker


@pytest.fixture
def stdio(tmp_path: Path) -> StdioFeed:
    return StdioFeed(tmp_path)


@SETTINGS
@given(line=malformed_line)
@example(line=LISTED_TYPE)
@example(line=DEEP_LINE)
@example(line=DEEP_IN_A_MESSAGE)
@example(line=b'{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"\\ud800"}]}}')
async def test_a_malformed_line_on_stdout_is_skipped_with_a_warning(stdio, line):
    await malformed_on_stdout(stdio, line)


async def malformed_on_stdout(stdio: StdioFeed, line: bytes) -> None:
    """Feed one malformed line mid-turn: one bounded warning, the session as
    it was, and the turn still ends (also the stress suite's check)."""
    stdio.bridge.begin_turn()  # a turn runs, as when the person sent a message
    before = snapshot(stdio.session)
    with Warnings("tests.bad_lines") as warnings:
        await stdio.feed(line + b"\n")
    assert snapshot(stdio.session) == before and before[0] == "running"
    (warning,) = warnings.messages
    assert warning.startswith("skipped an agent line that ")
    assert len(warning) < MAX_WARNING  # the first characters, not the whole line
    await stdio.still_answers()


@SETTINGS
@given(line=any_line)
@example(line=LISTED_TYPE)
async def test_any_line_on_stdout_leaves_the_session_working(stdio, line):
    await any_on_stdout(stdio, line)


async def any_on_stdout(stdio: StdioFeed, line: bytes) -> bool:
    """Feed one line of any shape mid-turn: the session stays sendable and
    answers the next turn. Returns whether the line was skipped with a warning."""
    stdio.bridge.begin_turn()
    with Warnings("tests.bad_lines") as warnings:
        await stdio.feed(line + b"\n")
    assert isinstance(stdio.session.status, str)
    assert_encodable(stdio.session)
    await stdio.still_answers()
    return bool(warnings.messages)


FAKE_CLI = """\
import json, sys
BAD = [%r, %r]
for line in sys.stdin:
    message = json.loads(line)
    if message.get("type") != "user":
        continue
    for bad in BAD:
        sys.stdout.write(bad + "\\n")
    sys.stdout.write(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                                 "result": "answered", "num_turns": 1}) + "\\n")
    sys.stdout.flush()
"""


async def test_the_issue_line_from_a_real_cli_process_does_not_wedge_the_turn(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="pneuma.agents.claude_code")
    script = tmp_path / "claude"
    script.write_text(f"#!{sys.executable}\n"
                      + FAKE_CLI % (LISTED_TYPE.decode(), DEEP_LINE.decode()))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    options = BackendOptions(workspace=workspace, mode=get_mode("doc"),
                             api_url="http://127.0.0.1:17007", token="tok", session_id="sess",
                             claude_bin=str(script))  # fmt: skip
    sink = RecordingSink()
    backend = ClaudeCodeBackend(options, sink)
    try:
        await backend.start()
        await backend.send_user_message("hello", [])
        result = await sink.wait_type("result")
        assert result["data"]["result"] == "answered"
        assert sink.of("status_change")[-1]["status"] == "idle"
        assert not sink.of("assistant")
    finally:
        await backend.stop()
    skipped = [r.getMessage() for r in caplog.records if "skipped an agent line" in r.getMessage()]
    assert len(skipped) == 2
    assert '{"type":["assistant"]}' in skipped[0]
    assert "[[[[" in skipped[1] and len(skipped[1]) < MAX_WARNING


# -- (b) the /ws/cli path -------------------------------------------------------------


@pytest.fixture
async def socket_session(pm, aiohttp_client, tmp_path):
    """One served slide session with a connected agent and a tab."""
    mode, workspace = seeded_slide_workspace(tmp_path)
    config = server_config(mode, workspace, backend=backend_spec("socket"))
    server = await start_app_server(aiohttp_client, config, Server)
    tab = await server.tab()
    agent = await server.agent()
    socket_session = SocketSession(server, tab, agent)
    # The greeting's turn ends, or the person's messages would wait behind
    # it in the queue of follow-ups (pneuma/server/follow_ups.py).
    await agent.ws.send_bytes(result_line("greeted"))
    await socket_session.until(
        lambda: any(m["type"] == "result" for m in server.session.history), "the greeting's end")
    return socket_session


class SocketSession:
    def __init__(self, server: Server, tab: Any, agent: Any) -> None:
        self.server, self.tab, self.agent = server, tab, agent
        self.session: Session = server.session
        self.turns = 0

    async def until(self, condition: Any, what: str) -> None:
        for _ in range(500):
            if condition():
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"timed out waiting for {what}")

    async def start_turn(self) -> None:
        """The person sends a message; the agent receives it; the session runs."""
        self.turns += 1
        text = f"message {self.turns}"
        await self.tab.send({"type": "user_message", "content": text})
        # (A line before may have made the server write to the agent: a
        # refused control_request, an interrupt.)
        got = await self.agent.wait_until(lambda m: m.get("type") == "user", 5.0, "the user line")
        assert got["message"]["content"] == text
        await self.until(lambda: self.session.status == "running", "the turn to start")
        # The turn's checkpoint is stored and announced while the agent works
        # (docs/checkpoints.md, "Turns are never held up"): let it land
        # before the bad line, or it would be counted as the line's doing.
        await self.session.settle()

    async def send(self, line: bytes) -> None:
        try:
            text = line.decode()
        except UnicodeDecodeError:
            await self.agent.ws.send_bytes(line + b"\n")  # binary frames are read as UTF-8
        else:
            await self.agent.ws.send_str(text + "\n")

    async def still_answers(self) -> None:
        marker = f"done {self.turns}"
        await self.agent.ws.send_bytes(result_line(marker))

        def answered() -> bool:
            # The newest message but the session's own record of what the
            # turn changed (it follows the result, from a worker thread).
            said = [m for m in self.session.history
                    if m["type"] not in ("turn_changes", "turn_described", "turn_checked")]
            return (self.session.status == "idle" and bool(said) and said[-1]["type"] == "result"
                    and said[-1]["data"]["result"] == marker)

        await self.until(answered, "the result after the bad line")
        # That record lands now, not in the middle of the next example's checks.
        await self.session.settle()
        assert not self.agent.ws.closed and self.session.agent_connected


@SETTINGS
@given(line=malformed_line)
@example(line=LISTED_TYPE)
@example(line=DEEP_LINE)
@example(line=DEEP_IN_A_MESSAGE)
async def test_a_malformed_line_on_the_agent_socket_is_skipped_and_the_socket_stays_open(
        socket_session, line):
    await malformed_on_socket(socket_session, line)


async def malformed_on_socket(socket_session, line: bytes) -> None:
    """The same over ``/ws/cli``: skipped with a warning, the session as it
    was, the socket open and answering (also the stress suite's check)."""
    await socket_session.start_turn()
    before = snapshot(socket_session.session)
    with Warnings("pneuma.agents.socket_agent") as warnings:
        await socket_session.send(line)
        await socket_session.until(lambda: warnings.messages, "the warning")
        assert snapshot(socket_session.session) == before
    assert warnings.messages[0].startswith("skipped an agent line that ")
    assert len(warnings.messages[0]) < MAX_WARNING
    await socket_session.still_answers()


@SETTINGS
@given(line=any_line)
@example(line=LISTED_TYPE)
async def test_any_line_on_the_agent_socket_leaves_the_session_working(socket_session, line):
    await any_on_socket(socket_session, line)


async def any_on_socket(socket_session, line: bytes) -> bool:
    """The same over ``/ws/cli``; returns whether the line was skipped with a warning."""
    await socket_session.start_turn()
    with Warnings("pneuma.agents.socket_agent") as warnings:
        await socket_session.send(line)
        await socket_session.still_answers()
    assert_encodable(socket_session.session)
    return bool(warnings.messages)
