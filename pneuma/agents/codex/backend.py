"""The Codex CLI as an agent backend: one ``codex app-server`` per session.

The process is started on the first message (or for the greeting) and
restarted after it exits; a Codex thread is started once and resumed
(``thread/resume``) with its id, which is what the session stores as the
agent session id, so ``pneuma run`` resumes the same conversation after a
restart. Each user message becomes a ``turn/start``; one turn runs at a
time and later messages wait for it. The app-server's notifications become
browser messages through ``events``; its approval requests become
``permission_request`` cards and their answers go back as decisions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pneuma.api import AgentPoint

from . import events
from .binary import INSTALL_HINT, find_codex_binary, model_endpoint
from .model_errors import LOG_FILTER, ModelTrouble, strip_ansi
from .protocol import LINE_LIMIT, RpcError, RpcPeer
from .questions import USER_INPUT_METHOD, codex_answers, question_input

if TYPE_CHECKING:
    from pneuma.api import AgentEventSink, BackendOptions

log = logging.getLogger(__name__)

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
STOP_GRACE = 2.0
STDERR_LINES = 50
AUTH_HINT = (
    "Codex was refused by its model provider: export OPENAI_API_KEY=… in the shell that "
    "starts Pneuma, or run `codex login` (or fix the key of the provider in Codex's "
    "config.toml), then send the message again."
)
APPROVAL_METHODS = {
    "item/commandExecution/requestApproval": "Bash",
    "item/fileChange/requestApproval": "apply_patch",
}

# Pneuma's permission modes (Claude Code's names) as Codex's approval
# policy and sandbox, so that each asks what Claude Code's mode of that name
# asks (docs/backends.md, "Permission modes"). "untrusted" asks before every
# patch and every command Codex does not know to be read-only; Codex has no
# policy that asks for commands but not for edits, so under acceptEdits the
# backend itself accepts a patch whose every file is inside the workspace
# (EDITS_ACCEPTED). "on-request" with "read-only" asks before a patch and
# lets a shell write fail in the read-only sandbox.
POLICIES: dict[str, tuple[str, str]] = {
    "bypassPermissions": ("never", "workspace-write"),
    "acceptEdits": ("untrusted", "workspace-write"),
    "default": ("untrusted", "workspace-write"),
    "plan": ("on-request", "read-only"),
}
EDITS_ACCEPTED = frozenset({"acceptEdits"})


def _toml(value: Any) -> str:
    """A TOML value for a ``-c key=value`` override (JSON strings are TOML strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def mcp_overrides(workspace: Path) -> list[str]:
    """The workspace's ``.mcp.json`` servers (what the skill installer wrote
    for the mode) as Codex ``mcp_servers`` config overrides."""
    try:
        data = json.loads((workspace / ".mcp.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    overrides: list[str] = []
    for name, entry in (servers or {}).items():
        if not isinstance(entry, dict) or not entry.get("command"):
            continue  # Codex takes stdio servers here; url servers are left out
        table = {"command": entry["command"], "args": list(entry.get("args") or [])}
        if isinstance(entry.get("env"), dict) and entry["env"]:
            table["env"] = {str(k): str(v) for k, v in entry["env"].items()}
        if not _BARE_KEY.fullmatch(str(name)):
            log.warning("codex: MCP server %r left out: its name is not a TOML bare key", name)
            continue  # `-c` splits its key on dots and takes no quoted parts
        overrides += ["-c", f"mcp_servers.{name}={_toml(table)}"]
    return overrides


def inside_workspace(workspace: Path, path: str) -> bool:
    """Whether ``path`` (absolute, or relative to the workspace, as Codex
    names a patch's files) stays inside the workspace once ``..`` and links
    are resolved; an empty path is not."""
    if not path:
        return False
    root = workspace.resolve()
    target = (root / path).resolve()  # an absolute path replaces the root
    return target == root or target.is_relative_to(root)


class CodexBackend:
    """``AgentBackend`` for ``--backend codex``."""

    name = "codex"

    def __init__(self, options: BackendOptions, sink: AgentEventSink) -> None:
        self.options = options
        self.sink = sink
        self.model = options.model
        manifest_mode = None
        if options.mode is not None:
            manifest_mode = options.mode.manifest.agent.permission_mode
        self.permission_mode = options.permission_mode or manifest_mode or "bypassPermissions"
        self.agent_session_id = options.agent_session_id
        self._binary: str | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._peer: RpcPeer | None = None
        self._thread_id: str | None = None
        self._queue: deque[list[dict[str, Any]]] = deque()
        self._turn_id: str | None = None
        self._turn_running = False
        self._interrupt_wanted = False
        self._turn_texts: list[str] = []
        self._usage: dict[str, Any] | None = None
        self._texts: dict[str, str] = {}
        self._file_changes: dict[str, list[dict[str, Any]]] = {}  # item id -> its changes
        self._approvals: dict[str, tuple[Any, str]] = {}  # our id -> (rpc id, item id)
        self._questions: dict[str, dict[str, Any]] = {}  # our id -> the question card's input
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._trouble = ModelTrouble()
        self._turn_error: str | None = None  # the final error told for this turn
        self._told_unreachable = False  # the terminal heard of this outage
        self._lock = asyncio.Lock()
        self._stopped = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last_turn_id: str | None = None  # the thread's newest finished turn
        self._fork: AgentPoint | None = None  # where the next thread is forked from (fork_at)

    # -- AgentBackend ------------------------------------------------------------

    async def start(self) -> None:
        self._stopped = False
        self._binary = find_codex_binary(self._env())
        if self._binary is None:
            self.sink.emit({"type": "error", "code": "agent_not_found", "message": INSTALL_HINT})
            return
        if self.options.greeting and not self.agent_session_id:
            self._queue.append([{"type": "text", "text": self.options.greeting}])
            await self._pump()

    async def send_user_message(self, text: str, images: list[dict[str, str]]) -> None:
        items: list[dict[str, Any]] = [{"type": "text", "text": text}]
        for image in images:
            items.append({"type": "image",
                          "url": f"data:{image['media_type']};base64,{image['data']}"})
        self._queue.append(items)
        await self._pump()

    async def answer_permission(self, request_id: str, behavior: str,
                                updated_input: dict[str, Any] | None = None,
                                message: str | None = None) -> None:
        entry = self._approvals.pop(request_id, None)
        if entry is None or self._peer is None:
            return
        rpc_id, _item = entry
        allowed = behavior == "allow"
        questions = self._questions.pop(request_id, None)
        if questions is not None:
            await self._peer.respond(rpc_id, codex_answers(questions, updated_input if allowed else None))
            return
        await self._peer.respond(rpc_id, {"decision": "accept" if allowed else "decline"})
        if not allowed and message and self._thread_id and self._turn_id:
            # Codex's decision has no room for a note: it reaches the agent as
            # a message steered into the running turn.
            with contextlib.suppress(RpcError, ConnectionError, asyncio.TimeoutError):
                await self._peer.request("turn/steer", {
                    "threadId": self._thread_id, "expectedTurnId": self._turn_id,
                    "input": [{"type": "text", "text": f"The person denied that: {message}"}]})

    async def interrupt(self) -> None:
        # Like Claude Code's: the running turn stops; messages sent after it
        # still come (the person may have typed the correction already).
        if not self._turn_running:
            return
        if self._turn_id is None:
            self._interrupt_wanted = True  # sent as soon as Codex names the turn
            return
        await self._send_interrupt()

    async def _send_interrupt(self) -> None:
        self._interrupt_wanted = False
        if self._peer is None or not self._thread_id or self._turn_id is None:
            return
        with contextlib.suppress(RpcError, ConnectionError, asyncio.TimeoutError):
            await self._peer.request("turn/interrupt",
                                     {"threadId": self._thread_id, "turnId": self._turn_id})

    async def set_model(self, model: str) -> None:
        # Codex takes the model with each turn/start: the next turn uses it.
        self.model = model
        self.sink.set_agent_state(model=model)
        self.sink.emit({"type": "session_update", "updates": {"model": model}})

    async def stop(self) -> None:
        self._stopped = True
        process = self._process
        if process is not None:
            await self._terminate(process)
        self._process = None
        self._peer = None
        for task in list(self._tasks):
            task.cancel()

    # -- forks (pneuma.core.backend.ForksConversation) ------------------------------

    def conversation_point(self) -> AgentPoint | None:
        """The thread and its newest finished turn; the fork still to be
        made when no turn ended since."""
        if self._fork is not None:
            return self._fork
        if self._thread_id and self._last_turn_id:
            return AgentPoint(self.name, self._thread_id, self._last_turn_id)
        return None

    async def fork_at(self, point: AgentPoint) -> bool:
        """The next thread is ``thread/fork`` of ``point``'s thread through
        its turn ``point.at`` (the later turns left out; the old thread
        keeps them)."""
        async with self._lock:
            if self._process is not None:
                await self._terminate(self._process)
            self._process = self._peer = None
            self._thread_id = self.agent_session_id = None
            self._fork = point
        return True

    # -- process and thread ------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.options.extra_env)
        return env

    def _agent_env(self) -> dict[str, str]:
        env = self._env()
        env.update(self.options.pneuma_env())
        # Codex's retries (with their delay) and the status of each model
        # answer are only in its log: asked for on top of the person's filter.
        env["RUST_LOG"] = ",".join(part for part in (env.get("RUST_LOG") or "error", LOG_FILTER))
        return env

    def _command(self) -> list[str]:
        assert self._binary is not None
        return [
            self._binary, "app-server",
            # Nothing but the model provider should be contacted.
            "-c", "check_for_update_on_startup=false",
            "-c", "analytics.enabled=false",
            "-c", "feedback.enabled=false",
            # Plugins sync a curated catalogue from github.com and chatgpt.com
            # at start (measured: tests/codex, through a recording proxy);
            # apps are ChatGPT connectors. A Pneuma agent needs neither.
            "-c", "features.plugins=false",
            "-c", "features.apps=false",
            # Its request_user_input tool (questions to the person, shown on
            # the page's question card: questions.py) in its default mode too.
            "-c", "features.default_mode_request_user_input=true",
            # The viewer API is on 127.0.0.1: commands must reach it, and
            # PNEUMA_TOKEN must survive Codex's default *TOKEN* filter.
            "-c", "sandbox_workspace_write.network_access=true",
            "-c", "shell_environment_policy.ignore_default_excludes=true",
            *mcp_overrides(self.options.workspace),
        ]

    async def _ensure_thread(self) -> bool:
        if self._peer is not None and not self._peer.closed.is_set() and self._thread_id:
            return True
        if self._binary is None:
            self._binary = find_codex_binary(self._env())
            if self._binary is None:
                self.sink.emit({"type": "error", "code": "agent_not_found",
                                "message": INSTALL_HINT})
                return False
        self._stderr.clear()
        process = await asyncio.create_subprocess_exec(
            *self._command(), cwd=str(self.options.workspace), env=self._agent_env(),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, limit=LINE_LIMIT, start_new_session=True)
        assert process.stdout is not None and process.stdin is not None
        peer = RpcPeer(process.stdout, process.stdin, self._on_message)
        self._process, self._peer = process, peer
        self._background(self._read_stderr(process))
        self._background(self._watch(process, peer))
        try:
            await peer.request("initialize", {"clientInfo": {"name": "pneuma", "title": "Pneuma",
                                                             "version": "1"}})
            await peer.notify("initialized")
            await self._open_thread(peer)
        except (RpcError, ConnectionError, asyncio.TimeoutError) as exc:
            self._report_exit(f"Codex did not start: {exc}")
            await self._terminate(process)
            return False
        return True

    async def _open_thread(self, peer: RpcPeer) -> None:
        approval, sandbox = POLICIES.get(self.permission_mode, POLICIES["default"])
        params: dict[str, Any] = {"cwd": str(self.options.workspace), "approvalPolicy": approval,
                                  "sandbox": sandbox}
        if self.model:
            params["model"] = self.model
        result = None
        fork, self._fork = self._fork, None
        if fork is not None and not self.agent_session_id:
            try:
                result = await peer.request("thread/fork", {**params, "threadId": fork.agent_session_id,
                                                            "lastTurnId": fork.at})
            except RpcError as exc:
                log.info("codex: thread %s cannot be forked (%s); starting a new one",
                         fork.agent_session_id, exc)
        if self.agent_session_id:
            try:
                result = await peer.request("thread/resume",
                                            {**params, "threadId": self.agent_session_id})
            except RpcError as exc:
                log.info("codex: thread %s cannot be resumed (%s); starting a new one",
                         self.agent_session_id, exc)
                self.sink.set_agent_session_id(None)
        if result is None:
            result = await peer.request("thread/start", params)
        thread_id = str(result["thread"]["id"])
        self._thread_id = thread_id
        if thread_id != self.agent_session_id:
            self.agent_session_id = thread_id
            self.sink.set_agent_session_id(thread_id)
        updates = {"model": result.get("model"), "cwd": result.get("cwd"),
                   "permission_mode": self.permission_mode}
        updates = {k: v for k, v in updates.items() if v is not None}
        self.sink.set_agent_state(**updates)
        self.sink.emit({"type": "session_update", "updates": updates})
        if self.model is None:
            self.model = result.get("model")

    async def _pump(self) -> None:
        async with self._lock:
            if self._stopped or self._turn_running or not self._queue:
                return
            if not await self._ensure_thread():
                self._queue.clear()
                return
            assert self._peer is not None and self._thread_id is not None
            items = self._queue.popleft()
            self._begin_turn()
            params: dict[str, Any] = {"threadId": self._thread_id, "input": items}
            if self.model:
                params["model"] = self.model
            try:
                result = await self._peer.request("turn/start", params)
            except (RpcError, ConnectionError, asyncio.TimeoutError) as exc:
                self.sink.emit({"type": "error", "code": "agent_error", "message": str(exc)})
                self._end_turn({"id": None, "status": "failed", "error": {"message": str(exc)}})
                return
            turn = (result or {}).get("turn") or {}
            if self._turn_running:  # a very short turn may be over already
                self._turn_id = self._turn_id or turn.get("id")
            if self._interrupt_wanted and self._turn_running:
                self._background(self._send_interrupt())

    def _begin_turn(self) -> None:
        self._turn_running = True
        self._interrupt_wanted = False
        self._turn_id = None
        self._turn_texts = []
        self._usage = None
        self._turn_error = None
        self._trouble.new_turn()
        self.sink.emit({"type": "status_change", "status": "running"})

    def _end_turn(self, turn: dict[str, Any]) -> None:
        if not self._turn_running:
            return
        self._turn_running = False
        self._turn_id = None
        if turn.get("id"):
            self._last_turn_id = str(turn["id"])
        for request_id in list(self._approvals):
            self._approvals.pop(request_id, None)
            self._questions.pop(request_id, None)
            self.sink.emit({"type": "permission_cancelled", "request_id": request_id})
        status = turn.get("status")
        error = turn.get("error") or {}
        self.sink.emit({"type": "result", "data": {
            # As Claude Code reports them: an interrupted turn is an error
            # "during execution", which the page shows as interrupted.
            "subtype": "success" if status == "completed" else "error_during_execution",
            "is_error": status != "completed",
            "duration_ms": turn.get("durationMs"),
            "num_turns": 1,
            "total_cost_usd": None,
            "result": (self._turn_error or error.get("message")) if status == "failed"
            else "\n\n".join(self._turn_texts),
            "usage": self._usage,
        }})
        self.sink.emit({"type": "status_change", "status": "idle"})
        if status == "completed":
            self._told_unreachable = False  # the model was reached: a new outage is told again
        if self._queue and not self._stopped:
            self._background(self._pump())

    # -- what the app-server says -----------------------------------------------

    def _on_message(self, method: str, params: dict[str, Any], rpc_id: Any) -> Any:
        if rpc_id is not None:
            return self._on_request(method, params, rpc_id)
        if method == "turn/started":
            self._turn_id = (params.get("turn") or {}).get("id") or self._turn_id
        elif method == "item/started":
            self._item_started(params.get("item") or {})
        elif method == "item/agentMessage/delta":
            item_id = str(params.get("itemId"))
            self._texts[item_id] = self._texts.get(item_id, "") + str(params.get("delta", ""))
            self.sink.emit(events.text_delta(str(params.get("delta", ""))))
        elif method == "item/completed":
            self._item_completed(params.get("item") or {})
        elif method == "thread/tokenUsage/updated":
            last = (params.get("tokenUsage") or {}).get("last") or {}
            self._usage = {"input_tokens": last.get("inputTokens"),
                           "output_tokens": last.get("outputTokens")}
        elif method == "turn/completed":
            self._end_turn(params.get("turn") or {})
        elif method == "error" and params.get("willRetry"):
            return self._announce_retry(params.get("error") or {})
        elif method == "error":
            return self._report_error(params.get("error") or {})
        elif method == "serverRequest/resolved":
            for request_id, (pending, _item) in list(self._approvals.items()):
                if pending == params.get("requestId"):
                    self._approvals.pop(request_id, None)
                    self._questions.pop(request_id, None)
                    self.sink.emit({"type": "permission_cancelled", "request_id": request_id})
        return None

    async def _announce_retry(self, error: dict[str, Any]) -> None:
        """An ``api_retry`` notice, as the Claude Code backend shows a retry;
        an endpoint that cannot be reached is also one terminal line."""
        delay = await self._trouble.next_delay()
        endpoint = model_endpoint(self._env())
        self.sink.emit({"type": "error", "code": "api_retry",
                        "message": self._trouble.retry_notice(error, delay, endpoint)})
        cause = self._trouble.cause(error)
        if cause.unreachable and not self._told_unreachable:
            self._told_unreachable = True
            log.warning("%s; it keeps trying, and the page shows each try.", cause.said(endpoint))

    async def _report_error(self, error: dict[str, Any]) -> None:
        info = error.get("codexErrorInfo")
        cause = self._trouble.cause(error)
        if cause.status is None and not cause.unreachable and info != "unauthorized":
            # The messages after this one wait (the peer awaits us), so the
            # turn's result still comes after its error.
            await self._trouble.answer_logged()
            cause = self._trouble.cause(error)
        if info == "unauthorized" or cause.status in (401, 403):
            # As the Claude Code backend does: say what to do, not only what failed.
            message = str(error.get("message") or "Codex reported an error")
            self.sink.emit({"type": "error", "code": "auth_failed",
                            "message": f"{message}\n{AUTH_HINT}"})
            return
        if cause.status is None and not cause.unreachable:
            message = str(error.get("message") or "Codex reported an error")
        else:
            message = self._trouble.final_error(error, model_endpoint(self._env()))
        self._turn_error = message
        self.sink.emit({"type": "error", "code": "agent_error", "message": message})

    def _item_started(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "agentMessage":
            self._texts[str(item.get("id"))] = ""
            for message in events.text_started(str(item.get("id")), self.model):
                self.sink.emit(message)
        elif kind in events.TOOL_ITEM_TYPES:
            if kind == "fileChange":
                self._file_changes[str(item.get("id"))] = list(item.get("changes") or [])
            self.sink.emit(events.tool_started(item, self.model))

    def _item_completed(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        item_id = str(item.get("id"))
        if kind == "agentMessage":
            text = str(item.get("text") or self._texts.pop(item_id, ""))
            self._texts.pop(item_id, None)
            self._turn_texts.append(text)
            for message in events.text_done(item_id, text, self.model):
                self.sink.emit(message)
        elif kind in events.TOOL_ITEM_TYPES:
            if kind == "fileChange":
                # The changes are final now (a patch may grow while it streams).
                self._file_changes.pop(item_id, None)
                self.sink.emit(events.tool_started(item, self.model))
            self.sink.emit(events.tool_finished(item))

    async def _on_request(self, method: str, params: dict[str, Any], rpc_id: Any) -> None:
        peer = self._peer
        if peer is None:
            return
        if method == USER_INPUT_METHOD:
            self._ask_the_person(params, rpc_id)
            return
        tool = APPROVAL_METHODS.get(method)
        if tool is None:
            await peer.respond_error(rpc_id, -32601, f"Pneuma does not handle {method}")
            return
        item_id = str(params.get("itemId"))
        request_id = f"codex-{rpc_id}"
        if tool == "Bash":
            tool_input: dict[str, Any] = {"command": params.get("command"), "cwd": params.get("cwd")}
        else:
            # The approval names only the item; its changes came with item/started.
            tool_input = events.tool_input({"type": "fileChange",
                                            "changes": self._file_changes.get(item_id, [])})
        self._approvals[request_id] = (rpc_id, item_id)
        if self.permission_mode == "bypassPermissions" or (
                tool == "apply_patch" and self._edit_accepted(params, tool_input["changes"])):
            await self.answer_permission(request_id, "allow")
            return
        self.sink.emit({"type": "permission_request", "request": {
            "request_id": request_id, "tool_name": tool, "input": tool_input,
            "description": params.get("reason"), "tool_use_id": item_id}})

    def _ask_the_person(self, params: dict[str, Any], rpc_id: Any) -> None:
        """Codex asks the person questions: the question card, whatever the
        permission mode (nobody else can answer them)."""
        request_id = f"codex-{rpc_id}"
        item_id = str(params.get("itemId"))
        tool_input = question_input(params)
        self._approvals[request_id] = (rpc_id, item_id)
        self._questions[request_id] = tool_input
        self.sink.emit({"type": "permission_request", "request": {
            "request_id": request_id, "tool_name": "AskUserQuestion", "input": tool_input,
            "tool_use_id": item_id}})

    def _edit_accepted(self, params: dict[str, Any], changes: list[dict[str, Any]]) -> bool:
        """Whether this mode takes a patch unasked: acceptEdits, every file
        inside the workspace, and no request for a wider write root."""
        if self.permission_mode not in EDITS_ACCEPTED or params.get("grantRoot") or not changes:
            return False
        return all(inside_workspace(self.options.workspace, str(change.get("path") or ""))
                   for change in changes)

    # -- lifecycle ---------------------------------------------------------------

    def _background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        while line := await process.stderr.readline():
            text = strip_ansi(line.decode("utf-8", "replace").rstrip())
            if text and not self._trouble.note_stderr(text):
                self._stderr.append(text)
                log.debug("codex stderr: %s", text)

    async def _watch(self, process: asyncio.subprocess.Process, peer: RpcPeer) -> None:
        await peer.run()
        code = await process.wait()
        if self._process is process:
            self._process, self._peer, self._thread_id = None, None, None
        if not self._stopped:
            tail = "\n".join(list(self._stderr)[-5:])
            self._report_exit(f"Codex exited (status {code})" + (f":\n{tail}" if tail else ""))

    def _report_exit(self, message: str) -> None:
        if self._stopped:
            return
        self.sink.emit({"type": "error", "code": "agent_exited", "message": message})
        self._end_turn({"status": "failed", "error": {"message": message}})

    async def _terminate(self, process: asyncio.subprocess.Process) -> None:
        if process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), STOP_GRACE)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
