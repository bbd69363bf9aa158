"""Claude Code's stream-json protocol, both ways, whatever carries the lines.

The Claude Code CLI speaks NDJSON ("stream-json"): one JSON object per
line. ``StreamJsonBridge`` is the one place that knows that protocol:

* agent → browser: ``feed()`` takes what the agent wrote (one line or many,
  str or bytes), parses every line and reports it to the session's sink as
  browser-protocol messages (``session_update``, ``stream_event``,
  ``assistant``, ``tool_result``, ``permission_request``, ``result``,
  ``status_change``, ``error``, ...);
* browser → agent: user turns (queued in ``outbox`` until ``flush()``),
  permission answers (``control_response``), ``interrupt`` and
  ``set_model`` (``control_request``), the ``initialize`` handshake.

It does not know how lines travel. The stdio backend
(``pneuma.agents.claude_code``) feeds it a process's stdout; the socket
backend (``pneuma.agents.socket_agent``) the frames of a WebSocket. Each
connection to an agent is an ``AgentLink``: the transport subclasses it
with ``alive`` and ``write_line``; the bridge keeps on it what it learns
about that one connection (its ``system/init``, the user lines it has not
acknowledged yet, a result held back). Requests go to the current link
(``bridge.link``); the answer to a request goes to the link it came from.

Nothing here keeps history or assigns seq numbers: that is the session's
job. The shapes are those of the transcripts in
``reference/claude-code-stream-json/`` (Claude Code 2.1.330).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

from pneuma.agents.stream_json_lines import (
    DELTA_LINE,
    FLAT_TAIL,
    JSON_SPACE,
    NOT_JSON,
    PARENT,
    PREVIEW_CHARS,
    STREAM_PREFIX,
    encode,
    line_text,
    parse_line,
    preview,
    raw_decode,
    text_of,
    user_line,
    wrong_field,
)
from pneuma.agents.stream_json_questions import asks_the_person
from pneuma.core.backend import AgentEventSink

log = logging.getLogger(__name__)
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

CONTROL_TIMEOUT = 10.0  # seconds an agent has to answer a control_request
NOISE_LINES = 50  # non-JSON lines kept per link, as evidence for error reports

AUTH_HINT = (
    "Claude Code could not authenticate with the Anthropic API{detail}. "
    "Set ANTHROPIC_API_KEY in the environment that starts Pneuma, or run `claude login`, "
    "then send your message again (restart Pneuma if you changed the environment)."
)

AUTH_PATTERN = re.compile(
    r"invalid api key|invalid x-api-key|authentication[ _]?(error|failed)|not logged in"
    r"|please run /login|\b401\b|unauthorized|oauth token (has )?expired",
    re.IGNORECASE,
)


class AgentLink:
    """One connection to an agent: a CLI process, a WebSocket.

    Transports override ``alive`` and ``send_text``; the rest is state the
    bridge keeps about this connection."""

    transport = "the agent"  # how a closed link is named in the log

    def __init__(self, resumed: str | None = None) -> None:
        self._write_lock = asyncio.Lock()  # lines never interleave
        self.resumed = resumed  # the agent session it was asked to resume
        self.saw_init = False
        self.unacknowledged: list[str] = []  # user lines written before its first init
        self.noise: deque[str] = deque(maxlen=NOISE_LINES)  # lines that were not JSON
        # A --resume start answers a stale id with an error result before it
        # exits; the result waits here until we know whether the id was stale.
        self.held_result: dict[str, Any] | None = None

    @property
    def alive(self) -> bool:
        return True

    @property
    def writable(self) -> bool:
        """Whether a line may be written now (by default: while alive)."""
        return self.alive

    async def send_text(self, line: str) -> None:
        """Write one encoded line to the transport (it may raise when closed)."""
        raise NotImplementedError

    async def write_line(self, line: str) -> bool:
        """Send one encoded line; False when the agent can no longer read."""
        async with self._write_lock:
            if not self.writable:
                return False
            try:
                await self.send_text(line)
            except (ConnectionError, RuntimeError) as exc:  # BrokenPipeError included
                log.info("%s is closed: %s", self.transport, exc)
                return False
        return True


Handler = Callable[[AgentLink, dict[str, Any]], None]


class StreamJsonBridge:
    """Translates between one session's agent (stream-json) and its sink.

    ``permission_mode`` is the mode the agent was told to run in:
    ``bypassPermissions`` answers any ``can_use_tool`` itself (the person
    chose not to be asked); anything else, or None, asks the person.
    """

    def __init__(
        self,
        sink: AgentEventSink,
        *,
        permission_mode: str | None = None,
        agent_session_id: str | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.sink = sink
        # A sink that takes a stream event as JSON text (the session's
        # ``emit_stream``) spares every delta a json.dumps; any other sink
        # gets dicts through ``emit``.
        self._emit_stream: Callable[[str, str], None] | None = getattr(sink, "emit_stream", None)
        # A sink that can batch (the session) hears where a chunk of lines
        # begins and ends; see feed().
        self._begin_batch: Callable[[], None] | None = getattr(sink, "begin_batch", None)
        self._end_batch: Callable[[], None] | None = getattr(sink, "end_batch", None)
        if self._begin_batch is None:
            self._end_batch = None
        self.log = logger or log  # the transport's logger: warnings name where lines came from
        self.permission_mode = permission_mode
        self.agent_session_id = agent_session_id
        self.link: AgentLink | None = None  # where requests go
        self.outbox: deque[str] = deque()  # user lines waiting for an agent
        self.last_assistant: tuple[str, list[Any]] | None = None  # (id, content)
        self.resume_echo: tuple[str, list[Any]] | None = None  # what a resumed agent may repeat
        self.last_uuid: str | None = None  # the agent's newest transcript message (a fork point)
        self.turn_running = False
        self._turn_reported: set[str] = set()  # error codes already shown this turn
        self._controls: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._permissions: dict[str, dict[str, Any]] = {}  # request_id -> tool input
        self._tasks: set[asyncio.Task[Any]] = set()
        self._handlers: dict[str, Handler] = {
            "stream_event": self._on_stream_event,
            "assistant": self._on_assistant,
            "user": self._on_user,
            "system": self._on_system,
            "result": self._on_result,
            "control_request": self._on_control_request,
            "control_response": self._on_control_response,
            "control_cancel_request": self._on_control_cancel,
            "keep_alive": _ignore, "rate_limit_event": _ignore,
        }

    # -- browser -> agent --------------------------------------------------------

    def queue_user_message(self, text: str, images: list[dict[str, str]] | None = None) -> None:
        self.outbox.append(encode(user_line(text, images)))

    async def flush(self, link: AgentLink) -> bool:
        """Write every queued user line to ``link``, in order; each starts a
        turn. False if the link stopped reading (the rest stays queued)."""
        while self.outbox:
            line = self.outbox.popleft()
            if not await link.write_line(line):
                self.outbox.appendleft(line)
                return False
            if not link.saw_init:
                link.unacknowledged.append(line)
            self.begin_turn()
        return True

    def drop_link(self, link: AgentLink, reason: str) -> None:
        """``link`` is gone: controls waiting on an answer fail with ``reason``
        and it stops being the current link."""
        self.fail_controls(reason)
        if self.link is link:
            self.link = None

    async def send(self, message: dict[str, Any]) -> bool:
        """Write one message to the current agent, if there is one."""
        link = self.link
        if link is None or not link.alive:
            self.log.info("no connected agent for %s", message.get("type"))
            return False
        return await link.write_line(encode(message))

    async def answer_permission(
        self,
        request_id: str,
        behavior: str,
        updated_input: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> None:
        original = self._permissions.pop(request_id, None)
        if original is None:
            self.log.warning("permission answer for unknown or expired request %s", request_id)
            return
        if behavior == "allow":
            response: dict[str, Any] = {
                "behavior": "allow",
                "updatedInput": updated_input if updated_input is not None else original,
            }
        else:
            response = {"behavior": "deny", "message": message or "The user denied this action."}
        await self.send(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": response},
            }
        )

    async def interrupt(self) -> None:
        if self.link is None or not self.link.alive:
            return
        try:
            await self.control({"subtype": "interrupt"})
        except (TimeoutError, RuntimeError) as exc:
            self.log.warning("the agent did not acknowledge the interrupt: %s", exc)

    async def set_model(self, model: str, *, wait: bool = True) -> None:
        """Switch the agent's model; ``wait=False`` returns once the request
        is written (its answer is awaited in the background)."""
        if self.link is None or not self.link.alive:
            return
        if not wait:
            try:
                request_id, future = await self._request({"subtype": "set_model", "model": model})
            except RuntimeError as exc:
                self.log.warning("the agent did not switch the model: %s", exc)
                return
            self.background(self._settle(request_id, future, "switch the model"))
            return
        try:
            await self.control({"subtype": "set_model", "model": model})
        except (TimeoutError, RuntimeError) as exc:
            self.log.warning("the agent did not switch the model: %s", exc)

    async def control(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send a control_request and wait for its control_response."""
        request_id, future = await self._request(request)
        try:
            return await asyncio.wait_for(future, CONTROL_TIMEOUT)
        finally:
            self._controls.pop(request_id, None)

    async def _request(self, request: dict[str, Any]) -> tuple[str, asyncio.Future[dict[str, Any]]]:
        request_id = str(uuid.uuid4())
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._controls[request_id] = future
        message = {"type": "control_request", "request_id": request_id, "request": request}
        if not await self.send(message):
            self._controls.pop(request_id, None)
            raise RuntimeError("no agent is connected")
        return request_id, future

    async def _settle(self, request_id: str, future: asyncio.Future[dict[str, Any]], what: str) -> None:
        try:
            await asyncio.wait_for(future, CONTROL_TIMEOUT)
        except (TimeoutError, RuntimeError) as exc:
            self.log.warning("the agent did not %s: %s", what, exc)
        finally:
            self._controls.pop(request_id, None)

    async def initialize(self, link: AgentLink) -> None:
        """The handshake the SDKs make; its answer lists commands and models.
        Nobody waits for it: an agent that never answers loses nothing."""
        request_id = "init_" + uuid.uuid4().hex[:12]
        message = {"type": "control_request", "request_id": request_id,
                   "request": {"subtype": "initialize", "hooks": None}}  # fmt: skip
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        future.add_done_callback(self._on_initialized)
        self._controls[request_id] = future
        await link.write_line(encode(message))

    def _on_initialized(self, future: asyncio.Future[dict[str, Any]]) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        answer = future.result()
        commands = answer.get("commands")
        state: dict[str, Any] = {}
        if isinstance(commands, list):
            state["commands"] = [c.get("name") for c in commands if isinstance(c, dict)]
        models = answer.get("models")
        if isinstance(models, list):
            state["models"] = models
        if state:
            self.sink.set_agent_state(**state)

    # -- agent -> browser --------------------------------------------------------

    def feed(self, link: AgentLink, data: str | bytes) -> None:
        """Handle what the agent wrote: any number of newline-separated
        lines. Empty lines are skipped; a line that is not a well-formed
        message, of any shape, is logged and skipped, never fatal (see
        ``_feed_line``).

        A sink with ``begin_batch``/``end_batch`` (the session) is told
        that the messages of this chunk belong together: it sends them to
        each browser as one frame when the chunk is done, at once, without
        waiting for the next event-loop turn."""
        end_batch = self._end_batch
        if end_batch is None:
            self._feed(link, data)
            return
        self._begin_batch()  # type: ignore[misc]
        try:
            self._feed(link, data)
        finally:
            end_batch()

    def _feed(self, link: AgentLink, data: str | bytes) -> None:
        if isinstance(data, bytes):
            try:
                # One decode for the whole chunk: json.loads(bytes) would
                # detect the encoding and decode again for every line.
                data = data.decode()
            except UnicodeDecodeError:
                # Not UTF-8 somewhere: line by line, so only the bad line is lost.
                for raw in data.split(b"\n"):
                    if raw and not raw.isspace():
                        self._feed_line(link, raw)
                return
        emit_stream = self._emit_stream
        if emit_stream is None:
            for line in data.split("\n"):
                # Readers hand over whole lines with their newline, so every
                # split yields an empty last piece: skip it before json.loads,
                # whose exception would cost more than parsing a real line.
                if line and not line.isspace():
                    self._feed_line(link, line)
            return
        # The chunk is walked rather than split: a content_block_delta line
        # (nearly every line of a streaming reply) is checked and cut by
        # one match of DELTA_LINE where it starts; any other line is cut
        # out and takes _feed_line's path, in order.
        size = len(data)
        match = DELTA_LINE.scanner(data).match  # each match starts where the last ended
        last = None
        pos = 0
        while True:
            found = match()
            if found is not None:
                last = found
                event, parent = found.groups()
                emit_stream(event, parent or "null")
                continue
            if last is not None:
                pos = last.end()
                last = None
            if pos >= size:
                return
            end = data.find("\n", pos)
            if end < 0:
                end = size
            line = data[pos:end]
            # Readers hand over whole lines with their newline; blank
            # lines are skipped before json.loads, whose exception would
            # cost more than parsing a real line.
            if line and not line.isspace():
                self._feed_line(link, line)
            pos = end + 1
            if pos >= size:
                return
            match = DELTA_LINE.scanner(data, pos).match

    def _feed_line(self, link: AgentLink, raw: str | bytes) -> None:
        """One line of any shape: handled if it is a well-formed message,
        else logged as a warning with its first characters and skipped,
        the session's state untouched. Nothing escapes to the reader (the
        CLI's stdout reader or the agent socket), whose end would wedge or
        drop the agent."""
        try:
            if (
                self._emit_stream is not None
                and isinstance(raw, str)
                and raw.startswith(STREAM_PREFIX)
                and self._stream_line(raw)
            ):
                return
            message, reason = parse_line(raw)
            if message is None:
                if reason.startswith(NOT_JSON):  # kept: maybe the CLI saying why it failed
                    link.noise.append(line_text(raw).strip()[:PREVIEW_CHARS * 10])
                self._skip(raw, reason)
                return
            self.dispatch(link, message, raw)
        except Exception as exc:  # a last resort: a reader must never die of a line
            self._skip(raw, f"could not be handled ({type(exc).__name__})")
            self.log.debug("the skipped line failed here", exc_info=True)

    def _skip(self, raw: str | bytes, reason: str) -> None:
        self.log.warning("skipped an agent line that %s: %s", reason, preview(raw))

    def _stream_line(self, line: str) -> bool:
        """The hot path: a ``stream_event`` line in the CLI's own key order
        (``{"type":"stream_event","event":{...},...}``), by far the most
        frequent line. The event's JSON text is cut out of the line and
        handed to the session as it is, so a delta is never re-encoded.
        The line is still parsed completely (the event with raw_decode,
        which tells where it ends, then the small tail), so a broken line
        is never forwarded. False: not in that shape; the caller takes the
        general path, which behaves exactly as for any other line."""
        start = len(STREAM_PREFIX)
        try:
            event, end = raw_decode(line, start)
        except (ValueError, RecursionError):  # the general path says why
            return False
        if not isinstance(event, dict):
            return False  # malformed: the general path skips it with a warning
        rest = line[end:]
        if FLAT_TAIL.fullmatch(rest) is not None:
            # The usual tail (session_id, parent_tool_use_id, uuid, ...):
            # flat, compact, no escapes, so checking its syntax with one
            # regex and finding a key by plain search is exact, and cheaper
            # than parsing it. No value can hold a quote, so these
            # substrings can only be keys.
            if ',"type":' in rest or ',"event":' in rest:
                return False  # a repeated key: json.loads would let the last one win
            at = rest.rfind(',"parent_tool_use_id":')  # the last one wins, as in json.loads
            parent = "null" if at < 0 else PARENT.match(rest, at).group(1)  # type: ignore[union-attr]
            if parent[0] not in 'n"':
                return False  # not a string or null: malformed, the general path skips it
        else:
            try:
                rest = rest.lstrip(JSON_SPACE)  # JSON's whitespace, not str.strip()'s
                if rest[:1] == "," and rest[1:].lstrip(JSON_SPACE)[:1] == '"':
                    # (the quote check: "{" + "}" would accept a trailing comma)
                    tail = json.loads("{" + rest[1:])
                elif rest.rstrip(JSON_SPACE) == "}":
                    tail = {}
                else:
                    return False
            except ValueError:
                return False
            if "type" in tail or "event" in tail:
                return False
            parent_id = tail.get("parent_tool_use_id")
            if parent_id is not None and not isinstance(parent_id, str):
                return False  # malformed: the general path skips it
            parent = _dumps(parent_id)
        if self.resume_echo is not None and event.get("type") == "message_start":
            self.resume_echo = None  # a fresh reply began; nothing more to de-duplicate
        self._emit_stream(line[start:end], parent)  # type: ignore[misc]
        return True

    def dispatch(self, link: AgentLink, message: dict[str, Any], raw: str | bytes | None = None) -> None:
        """Hand a decoded message to its handler; a message whose ``type``
        or fields have the wrong shape is skipped with a warning."""
        kind = message.get("type")
        if not isinstance(kind, str):
            self._skip(raw if raw is not None else repr(message), "has no string \"type\"")
            return
        handler = self._handlers.get(kind)
        if handler is None:
            self.log.debug("ignored agent message type %r", kind)
            return
        wrong = wrong_field(kind, message)
        if wrong is not None:
            self._skip(raw if raw is not None else repr(message), f"has a malformed {wrong!r}")
            return
        try:
            handler(link, message)
        except Exception as exc:
            self._skip(raw if raw is not None else repr(message),
                       f"could not be handled ({type(exc).__name__})")  # fmt: skip
            self.log.debug("the skipped %s message failed here", kind, exc_info=True)

    def begin_turn(self) -> None:
        self._turn_reported.clear()
        self.turn_running = True
        self.sink.emit({"type": "status_change", "status": "running"})

    def report(self, code: str, message: str) -> bool:
        """Show an error once per turn; True if it was shown now."""
        if code in self._turn_reported:
            return False
        self._turn_reported.add(code)
        self.sink.emit({"type": "error", "code": code, "message": message})
        return True

    def report_auth(self, detail: str) -> bool:
        return self.report("auth_failed", AUTH_HINT.format(detail=f" ({detail})" if detail else ""))

    def _on_stream_event(self, link: AgentLink, msg: dict[str, Any]) -> None:
        event = msg.get("event")
        if self.resume_echo is not None and isinstance(event, dict) and event.get("type") == "message_start":
            self.resume_echo = None  # a fresh reply began; nothing more to de-duplicate
        self.sink.emit(
            {"type": "stream_event", "event": event, "parent_tool_use_id": msg.get("parent_tool_use_id")}
        )

    def _on_assistant(self, link: AgentLink, msg: dict[str, Any]) -> None:
        message = msg.get("message")
        if not isinstance(message, dict):
            return
        if msg.get("error") == "authentication_failed":
            self.report_auth(text_of(message))
        content = message.get("content") or []
        self.last_uuid = (msg.get("parent_tool_use_id") is None and msg.get("uuid")) or self.last_uuid
        echo = self.resume_echo
        if echo is not None:
            self.resume_echo = None
            if message.get("id") != echo[0] and content == echo[1]:
                self.log.debug("dropped the assistant message a resumed agent repeated")
                return
        self.last_assistant = (message.get("id", ""), content)
        self.sink.emit(
            {"type": "assistant", "message": message, "parent_tool_use_id": msg.get("parent_tool_use_id")}
        )

    def _on_user(self, link: AgentLink, msg: dict[str, Any]) -> None:
        message = msg.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        parent = msg.get("parent_tool_use_id")
        self.last_uuid = (parent is None and msg.get("uuid")) or self.last_uuid  # a main-thread row
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self.sink.emit(
                    {
                        "type": "tool_result",
                        "tool_use_id": block.get("tool_use_id"),
                        "content": block.get("content"),
                        "is_error": bool(block.get("is_error", False)),
                        "parent_tool_use_id": parent,
                    }
                )

    def _on_system(self, link: AgentLink, msg: dict[str, Any]) -> None:
        subtype = msg.get("subtype")
        if subtype == "init":
            link.saw_init = True
            link.unacknowledged.clear()
            session_id = msg.get("session_id")
            if session_id and session_id != self.agent_session_id:
                self.agent_session_id = session_id
                self.sink.set_agent_session_id(session_id)
            updates = {
                "model": msg.get("model"),
                "cwd": msg.get("cwd"),
                "tools": msg.get("tools"),
                "permission_mode": msg.get("permissionMode"),
                "slash_commands": msg.get("slash_commands"),
                "claude_code_version": msg.get("claude_code_version"),
            }
            updates = {k: v for k, v in updates.items() if v is not None}
            self.sink.set_agent_state(**updates)
            self.sink.emit({"type": "session_update", "updates": updates})
        elif subtype == "status":
            # Only sent mid-turn ("requesting", "compacting", or null when
            # that ends); the turn itself ends with the result.
            self.sink.emit({"type": "status_change", "status": msg.get("status") or "running"})
        elif subtype == "api_retry":
            status = msg.get("error_status")
            if status in (401, 403) or msg.get("error") == "authentication_failed":
                if self.report_auth(f"HTTP {status}" if status else ""):
                    # The CLI would retry a bad key for minutes; end the turn now.
                    self.background(self.interrupt())
            else:
                self.report(
                    "api_retry",
                    f"The Anthropic API answered {status or 'an error'} ({msg.get('error')}); "
                    f"Claude Code retries (attempt {msg.get('attempt')} of {msg.get('max_retries')}).",
                )
        else:
            self.log.debug("agent system message %r", subtype)

    def _on_result(self, link: AgentLink, msg: dict[str, Any]) -> None:
        if link.resumed and not link.saw_init:
            link.held_result = msg
            return
        self.emit_result(msg)

    def emit_result(self, msg: dict[str, Any]) -> None:
        """Report a ``result`` line (also one held back earlier): the turn ends."""
        if msg.get("is_error") and isinstance(msg.get("result"), str) and AUTH_PATTERN.search(msg["result"]):
            self.report_auth(msg["result"])
        self.sink.emit(
            {
                "type": "result",
                "data": {
                    "subtype": msg.get("subtype"),
                    "is_error": bool(msg.get("is_error", False)),
                    "duration_ms": msg.get("duration_ms"),
                    "num_turns": msg.get("num_turns"),
                    "total_cost_usd": msg.get("total_cost_usd"),
                    "result": msg.get("result"),
                    "usage": msg.get("usage"),
                },
            }
        )
        self.turn_running = False
        self.sink.emit({"type": "status_change", "status": "idle"})

    def _on_control_request(self, link: AgentLink, msg: dict[str, Any]) -> None:
        request_id = msg.get("request_id")
        request = msg.get("request") or {}
        if request.get("subtype") != "can_use_tool" or not request_id:
            self.log.debug("declined agent control request %r", request.get("subtype"))
            reply = {
                "type": "control_response",
                "response": {
                    "subtype": "error",
                    "request_id": request_id,
                    "error": f"Pneuma does not handle {request.get('subtype')!r}",
                },
            }
            self.background(link.write_line(encode(reply)))
            return
        tool_input = request.get("input") or {}
        self._permissions[request_id] = tool_input
        if self.permission_mode == "bypassPermissions" and not asks_the_person(request):
            self.background(self.answer_permission(request_id, "allow"))
            return
        self.sink.emit(
            {
                "type": "permission_request",
                "request": {
                    "request_id": request_id,
                    "tool_name": request.get("tool_name"),
                    "input": tool_input,
                    "description": request.get("description"),
                    "tool_use_id": request.get("tool_use_id"),
                },
            }
        )

    def _on_control_response(self, link: AgentLink, msg: dict[str, Any]) -> None:
        response = msg.get("response") or {}
        future = self._controls.pop(response.get("request_id"), None)
        if future is None or future.done():
            return
        if response.get("subtype") == "success":
            future.set_result(response.get("response") or {})
        else:
            future.set_exception(RuntimeError(response.get("error") or "control request failed"))

    def _on_control_cancel(self, link: AgentLink, msg: dict[str, Any]) -> None:
        request_id = msg.get("request_id")
        if self._permissions.pop(request_id, None) is not None:
            self.sink.emit({"type": "permission_cancelled", "request_id": request_id})

    # -- lifecycle ---------------------------------------------------------------

    def fail_controls(self, reason: str) -> None:
        """The agent went away: nobody will answer the open control requests."""
        for request_id, future in list(self._controls.items()):
            if not future.done():
                future.set_exception(RuntimeError(reason))
            self._controls.pop(request_id, None)

    def end_link(self) -> None:
        """After an agent went away: its permission prompts are void and a
        running turn is over."""
        for request_id in list(self._permissions):
            self._permissions.pop(request_id, None)
            self.sink.emit({"type": "permission_cancelled", "request_id": request_id})
        if self.turn_running:
            self.turn_running = False
            self.sink.emit({"type": "status_change", "status": "idle"})

    def background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def cancel_tasks(self) -> None:
        for task in list(self._tasks):
            task.cancel()


def _ignore(link: AgentLink, msg: dict[str, Any]) -> None:
    return None


