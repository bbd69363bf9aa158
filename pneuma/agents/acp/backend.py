"""Any agent that speaks the Agent Client Protocol, as a Pneuma backend.

One agent process per session, started on the first message (or for the
greeting) and again after it exits: ``initialize``, then ``session/load``
of the stored agent session when the agent can load sessions, else
``session/new`` in the workspace with the workspace's MCP servers (those
the skill installer wrote in ``.mcp.json``, Pneuma's own among them). Each
person's message is a ``session/prompt``; one turn runs at a time and later
messages wait. The protocol itself (ids, dispatch, the schema) is the
``acp`` library's; this module keeps the session's state (docs/backends.md,
"ACP agents").
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
from collections import deque
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ImageContentBlock,
    Implementation,
    RequestPermissionResponse,
    TextContentBlock,
)
from pydantic import ValidationError

from pneuma.api import ToolError

from .client import AcpClient
from .command import FIX, MISSING, agent_command, remember_command
from .fs import WorkspaceFiles
from .process import AgentProcess
from .session_setup import open_session
from .translate import STOP_REASONS, TurnTranslator
from .transport import CheckedLineTransport, first_error
from .updates import UpdateRouter

if TYPE_CHECKING:
    from acp.schema import PermissionOption, ToolCallUpdate

    from pneuma.api import AgentEventSink, BackendOptions

log = logging.getLogger(__name__)

START_TIMEOUT = 30.0  # initialize + session/new or session/load
CANCEL_NOTICE = 3.0  # seconds after Stop before the page hears the agent has not stopped
CANCEL_KILL = 15.0  # seconds after Stop before the agent is stopped by force
PAGE_WARNINGS = 5  # protocol warnings shown in the page per turn (all are logged)
_request_ids = itertools.count(1)


def _seconds(env: dict[str, str], name: str, default: float) -> float:
    try:
        return float(env.get(name, default))
    except ValueError:
        return default


class AcpBackend:
    """``AgentBackend`` for ``--backend acp`` and ``--backend acp:<preset>``."""

    def __init__(self, options: BackendOptions, sink: AgentEventSink, *,
                 name: str = "acp", preset: str | None = None) -> None:
        self.name = name
        self.options = options
        self.sink = sink
        self.preset = preset
        manifest_mode = options.mode.manifest.agent.permission_mode if options.mode else None
        self.permission_mode = options.permission_mode or manifest_mode or "bypassPermissions"
        self.agent_session_id = options.agent_session_id
        self.files = WorkspaceFiles.of(options.workspace)
        self.translator = TurnTranslator(options.model)
        self.updates = UpdateRouter(self)
        self.agent: AgentProcess | None = None
        self.conn: ClientSideConnection | None = None
        self.session_id: str | None = None  # the ACP session of the running process
        self.loading = False  # session/load replays the old conversation: not shown again
        self.load_session = False
        self.prompt_images = False
        self._queue: deque[list[Any]] = deque()
        self.turn_running = False
        self._turn = 0
        self._permissions: dict[str, tuple[asyncio.Future[str | None], list[Any]]] = {}
        self._warnings = 0
        self._lock = asyncio.Lock()
        self._stopped = False
        self._tasks: set[asyncio.Task[Any]] = set()
        env = self.env()
        self.start_timeout = _seconds(env, "PNEUMA_ACP_START_TIMEOUT", START_TIMEOUT)
        self.cancel_notice = _seconds(env, "PNEUMA_ACP_CANCEL_NOTICE", CANCEL_NOTICE)
        self.cancel_kill = _seconds(env, "PNEUMA_ACP_CANCEL_KILL", CANCEL_KILL)

    # -- AgentBackend ------------------------------------------------------------

    async def start(self) -> None:
        self._stopped = False
        if self.command() is None:
            return
        if self.options.greeting and not self.agent_session_id:
            self._queue.append([TextContentBlock(type="text", text=self.options.greeting)])
            # In the background: the agent may take seconds to start, and
            # the server is ready (and the page connects) meanwhile.
            self.background(self._pump())

    async def send_user_message(self, text: str, images: list[dict[str, str]]) -> None:
        blocks: list[Any] = [TextContentBlock(type="text", text=text)]
        blocks += [ImageContentBlock(type="image", data=image["data"],
                                     mime_type=image["media_type"]) for image in images]
        self._queue.append(blocks)
        # In the background: starting the agent may take long, and the
        # socket that brought the message must not wait for it.
        self.background(self._pump())

    async def answer_permission(self, request_id: str, behavior: str,
                                updated_input: dict[str, Any] | None = None,
                                message: str | None = None) -> None:
        entry = self._permissions.pop(request_id, None)
        if entry is None:
            return
        future, options = entry
        if not future.done():
            future.set_result(choose_option(options, behavior == "allow"))

    async def interrupt(self) -> None:
        if not self.turn_running or self.conn is None or self.session_id is None:
            return
        self._cancel_permissions()
        with contextlib.suppress(ConnectionError, RequestError, OSError):
            await self.conn.cancel(session_id=self.session_id)
        self.background(self._watch_cancel(self._turn))

    async def set_model(self, model: str) -> None:
        await self.updates.choose_model(model)

    async def stop(self) -> None:
        self._stopped = True
        self._cancel_permissions()
        await self._drop_agent()
        for task in list(self._tasks):
            task.cancel()

    # -- the agent process ---------------------------------------------------------

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.options.extra_env)
        return env

    def agent_env(self) -> dict[str, str]:
        env = self.env()
        env.update(self.options.pneuma_env())
        return env

    def command(self) -> list[str] | None:
        """The agent's command line, or None after telling the page why there is none."""
        try:
            if self.preset is not None:
                from . import presets

                return presets.resolve(self.preset, self.env())
            argv = agent_command(self.env(), self.options.workspace)
        except ToolError as exc:
            self.sink.emit({"type": "error", "code": "agent_not_found", "message": exc.message})
            return None
        if argv is None:
            self.sink.emit({"type": "error", "code": "agent_not_found",
                            "message": f"No ACP agent to start: {MISSING} is missing. Fix: {FIX}."})
            return None
        with contextlib.suppress(OSError, ValueError):
            remember_command(self.options.workspace, argv)
        return argv

    async def _ensure_session(self) -> bool:
        if self.conn is not None and self.session_id is not None and self.agent is not None \
                and self.agent.process.returncode is None:
            return True
        argv = self.command()
        if argv is None:
            return False
        try:
            agent = await AgentProcess.spawn(argv, self.options.workspace, self.agent_env())
        except OSError as exc:
            self.sink.emit({"type": "error", "code": "agent_not_found",
                            "message": f"The ACP agent `{argv[0]}` could not be started: "
                                       f"{exc.strerror or exc}. Fix: {FIX}."})
            return False
        if self._stopped:  # stop() came while it was starting: leave nothing behind
            await agent.terminate()
            return False
        transport = CheckedLineTransport(agent.reader, agent.writer, self.protocol_problem,
                                         agent.line_limit)
        # AcpClient serves the methods the client offers (no terminals):
        # the library's Client protocol names them all.
        conn = ClientSideConnection(AcpClient(self), transport)  # type: ignore[arg-type]
        self.agent, self.conn, self.session_id = agent, conn, None
        self.background(self._watch(agent))
        try:
            await asyncio.wait_for(self._open(conn), self.start_timeout)
        except asyncio.TimeoutError:
            await self._drop_agent()
            await self._failed_start(agent, f"The ACP agent `{argv[0]}` did not answer "
                                            f"within {self.start_timeout:g} s of starting")
            return False
        except (RequestError, ConnectionError, ValidationError, OSError) as exc:
            await self._failed_start(agent, f"The ACP agent `{argv[0]}` did not start: "
                                            f"{describe(exc)}")
            return False
        return not self._stopped

    async def _open(self, conn: ClientSideConnection) -> None:
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                terminal=False),
            client_info=Implementation(name="pneuma", title="Pneuma", version="1"))
        capabilities = init.agent_capabilities
        self.load_session = bool(capabilities and capabilities.load_session)
        prompt = capabilities.prompt_capabilities if capabilities else None
        self.prompt_images = bool(prompt and prompt.image)
        self.session_id = await open_session(self, conn)

    async def _failed_start(self, agent: AgentProcess, message: str) -> None:
        # Its stdout closed or it answered wrong: it is likely on its way
        # out, and its last words are what the person needs.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(agent.exited(), 1.0)
        if self.agent is agent:
            await self._drop_agent()
        await agent.terminate()
        if self._stopped:
            return  # stopped on purpose while starting: nothing to tell
        tail = agent.tail()
        self.sink.emit({"type": "error", "code": "agent_exited",
                        "message": message + (f"; its last words:\n{tail}" if tail else ".")})

    async def _watch(self, agent: AgentProcess) -> None:
        code = await agent.exited()
        if self.agent is not agent:
            return  # stopped or replaced on purpose
        self.agent, self.conn, self.session_id = None, None, None
        if self._stopped or not self.turn_running:
            if not self._stopped:
                log.info("acp: the agent exited (status %s) between turns", code)
            return
        tail = agent.tail()
        message = f"The ACP agent exited (status {code})" + (f":\n{tail}" if tail else ".")
        self.sink.emit({"type": "error", "code": "agent_exited", "message": message})
        self._end_turn(None, message)

    async def _drop_agent(self) -> None:
        agent, conn = self.agent, self.conn
        self.agent, self.conn, self.session_id = None, None, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        if agent is not None:
            await agent.terminate()

    # -- turns -------------------------------------------------------------------

    async def _pump(self) -> None:
        async with self._lock:
            if self._stopped or self.turn_running or not self._queue:
                return
            if not await self._ensure_session():
                # The page shows the turn running since the message: end it
                # (the error above says why), so the next message is sent.
                self._queue.clear()
                for message in self.translator.end_turn(None, "The ACP agent is not running."):
                    self.sink.emit(message)
                self.sink.emit({"type": "status_change", "status": "idle"})
                return
            blocks = self._queue.popleft()
            if not self.prompt_images and any(isinstance(b, ImageContentBlock) for b in blocks):
                blocks = [b for b in blocks if not isinstance(b, ImageContentBlock)]
                self.sink.emit({"type": "error", "code": "agent_notice",
                                "message": "This ACP agent takes no images: the message was "
                                           "sent without them."})
            self._begin_turn()
            self.background(self._run_turn(blocks, self._turn))

    def _begin_turn(self) -> None:
        self.turn_running = True
        self._turn += 1
        self._warnings = 0
        self.translator.new_turn()
        self.sink.emit({"type": "status_change", "status": "running"})

    async def _run_turn(self, blocks: list[Any], turn: int) -> None:
        conn, session_id = self.conn, self.session_id
        if conn is None or session_id is None:
            self._end_turn(None, "The ACP agent is gone.")
            return
        try:
            response = await conn.prompt(session_id=session_id, prompt=blocks)
        except RequestError as exc:
            message = f"The ACP agent answered the message with an error: {describe(exc)}"
            self.sink.emit({"type": "error", "code": "agent_error", "message": message})
            self._end_turn_of(turn, None, message)
            return
        except ValidationError as exc:
            self.protocol_problem(f"a session/prompt answer of the wrong shape ({first_error(exc)})")
            self._end_turn_of(turn, None, "The ACP agent's answer could not be read.")
            return
        except ConnectionError:
            return  # the process is gone: _watch ends the turn with its last words
        self._end_turn_of(turn, str(response.stop_reason), None)

    def _end_turn_of(self, turn: int, stop_reason: str | None, error: str | None) -> None:
        if turn == self._turn:
            self._end_turn(stop_reason, error)

    def _end_turn(self, stop_reason: str | None, error: str | None) -> None:
        if not self.turn_running:
            return
        self.turn_running = False
        self._cancel_permissions()
        if stop_reason in ("max_tokens", "max_turn_requests", "refusal"):
            self.sink.emit({"type": "error", "code": "agent_stopped",
                            "message": STOP_REASONS[stop_reason]})
        for message in self.translator.end_turn(stop_reason, error):
            self.sink.emit(message)
        self.sink.emit({"type": "status_change", "status": "idle"})
        if self._queue and not self._stopped:
            self.background(self._pump())

    async def _watch_cancel(self, turn: int) -> None:
        """Stop was pressed: the agent should end the turn as cancelled. Say
        so when it does not, and stop the process when it still does not."""
        await asyncio.sleep(self.cancel_notice)
        if not self.turn_running or self._turn != turn:
            return
        self.sink.emit({"type": "error", "code": "agent_slow_cancel",
                        "message": f"The ACP agent has not stopped {self.cancel_notice:g} s after "
                                   f"Stop; Pneuma stops it at {self.cancel_kill:g} s."})
        await asyncio.sleep(max(self.cancel_kill - self.cancel_notice, 0))
        if not self.turn_running or self._turn != turn:
            return
        await self._drop_agent()
        self.sink.emit({"type": "error", "code": "agent_slow_cancel", "message": (
            f"The ACP agent did not stop its turn within {self.cancel_kill:g} s of Stop, so it "
            "was stopped; the next message starts it again.")})
        self._end_turn("cancelled", None)

    # -- what the agent asks and tells ---------------------------------------------

    def check_session(self, session_id: str) -> None:
        if session_id != self.session_id:
            raise RequestError.invalid_params({"sessionId": session_id,
                                               "details": "not this client's session"})

    def on_update(self, session_id: str, update: Any) -> None:
        if self.loading:
            return  # the replayed conversation is Pneuma's history already
        # Before session/new has answered, its id is not known yet: an
        # agent may announce its commands or modes first.
        if self.session_id is not None and session_id != self.session_id:
            self.protocol_problem(f"an update for the unknown session {session_id!r}")
            return
        self.updates.route(update)

    async def on_permission(self, session_id: str, tool_call: ToolCallUpdate,
                            options: list[PermissionOption]) -> RequestPermissionResponse:
        self.check_session(session_id)
        auto = self.updates.answer_unasked(tool_call)
        if auto is not None:
            return outcome(choose_option(options, auto))
        request_id = f"acp-{next(_request_ids)}"
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._permissions[request_id] = (future, list(options))
        self.sink.emit({"type": "permission_request",
                        "request": self.updates.permission_card(request_id, tool_call, options)})
        return outcome(await future)

    def _cancel_permissions(self) -> None:
        for request_id, (future, _options) in list(self._permissions.items()):
            self._permissions.pop(request_id, None)
            if not future.done():
                future.set_result(None)
            self.sink.emit({"type": "permission_cancelled", "request_id": request_id})

    def protocol_problem(self, what: str) -> None:
        """The agent sent something Pneuma cannot take: logged, and told in
        the page (a few per turn); the session goes on."""
        log.warning("acp: the agent sent %s", what)
        self._warnings += 1
        if self._warnings > PAGE_WARNINGS:
            return
        more = " (further ones of this turn only in the terminal's log)" \
            if self._warnings == PAGE_WARNINGS else ""
        self.sink.emit({"type": "error", "code": "agent_protocol",
                        "message": f"The ACP agent sent {what}; Pneuma ignored it and goes on{more}."})

    def background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def choose_option(options: list[Any], allow: bool) -> str | None:
    """The option id of the person's answer: a one-time choice before an
    "always" one; None (cancelled) when the agent offered none of that kind."""
    wanted = ("allow_once", "allow_always") if allow else ("reject_once", "reject_always")
    for kind in wanted:
        for option in options:
            if getattr(option, "kind", None) == kind:
                return str(option.option_id)
    return None


def outcome(option_id: str | None) -> RequestPermissionResponse:
    if option_id is None:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))


def describe(exc: BaseException) -> str:
    if isinstance(exc, RequestError):
        data = f" ({exc.data})" if exc.data else ""
        return f"{exc} [JSON-RPC {exc.code}]{data}"
    if isinstance(exc, ValidationError):
        return f"an answer of the wrong shape ({first_error(exc)})"
    return str(exc) or type(exc).__name__
