"""The Claude Code CLI as an agent backend, driven over stdio stream-json.

One ``claude --print --input-format stream-json --output-format stream-json``
process per session, started on the first message (or for the greeting),
restarted with ``--resume`` after it exits. Its stdout is NDJSON; each line
is translated into the browser protocol and handed to the session's sink.
Nothing here keeps history or assigns seq numbers: that is the session's job.

The shapes of the CLI's messages are those of the transcripts in
``reference/claude-code-stream-json/`` (Claude Code 2.1.330).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import logging
import os
import re
import shutil
import signal
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any

from pneuma.agents.base import AgentEventSink, BackendOptions

log = logging.getLogger(__name__)

# NDJSON lines carry whole file contents and tool results; a line is never
# split, so the reader must accept lines far beyond asyncio's 64 KiB default.
LINE_LIMIT = 64 * 1024 * 1024
STDERR_LINES = 50
STOP_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
STALE_RESUME_WINDOW = 3.0  # a --resume start that dies this fast with "not found" is stale
CONTROL_TIMEOUT = 10.0

# Variables that make a nested CLI believe it runs inside another Claude Code.
_DROPPED_ENV = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")

INSTALL_HINT = (
    "Claude Code CLI not found. Install it with `pip install claude-agent-sdk==0.2.187` "
    "(it bundles the CLI) or `npm install -g @anthropic-ai/claude-code`, "
    "or point Pneuma at a binary with `--claude-bin PATH` (or PNEUMA_CLAUDE_BIN)."
)
AUTH_HINT = (
    "Claude Code could not authenticate with the Anthropic API{detail}. "
    "Set ANTHROPIC_API_KEY in the environment that starts Pneuma, or run `claude login`, "
    "then send your message again (restart Pneuma if you changed the environment)."
)
ROOT_HINT = (
    "Claude Code refuses the bypassPermissions mode when run as root. Run Pneuma as a "
    "normal user, set IS_SANDBOX=1 if this machine is a disposable sandbox, or start "
    "with `--permission-mode acceptEdits`."
)

_AUTH_PATTERN = re.compile(
    r"invalid api key|invalid x-api-key|authentication[ _]?(error|failed)|not logged in"
    r"|please run /login|\b401\b|unauthorized|oauth token (has )?expired",
    re.IGNORECASE,
)
_STALE_PATTERN = re.compile(
    r"no conversation found|--resume requires a valid session|session .{0,80}not found",
    re.IGNORECASE,
)
_ROOT_PATTERN = re.compile(r"cannot be used with root", re.IGNORECASE)


def find_claude_binary(explicit: str | None = None) -> str | None:
    """Where the CLI is: the explicit path, PNEUMA_CLAUDE_BIN, `claude` on
    PATH, then the binary bundled in an installed claude-agent-sdk."""
    for candidate in (explicit, os.environ.get("PNEUMA_CLAUDE_BIN")):
        if candidate:
            path = shutil.which(candidate) or (candidate if os.access(candidate, os.X_OK) else None)
            if path:
                return path
            log.warning("Claude Code binary %r is not an executable file", candidate)
            return None
    on_path = shutil.which("claude")
    if on_path:
        return on_path
    return _bundled_binary()


def _bundled_binary() -> str | None:
    # find_spec on the top-level package reads no module code: importing
    # claude_agent_sdk itself would pull in mcp, anyio and friends.
    try:
        spec = importlib.util.find_spec("claude_agent_sdk")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        binary = Path(location) / "_bundled" / "claude"
        if binary.is_file() and os.access(binary, os.X_OK):
            return str(binary)
    return None


def user_line(text: str, images: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """The stdin message for one user turn."""
    content: str | list[dict[str, Any]] = text
    if images:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for image in images:
            blocks.append(
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": image["media_type"],
                        "data": image["data"],
                    },
                }
            )
        content = blocks
    return {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": None,
        "session_id": "",
    }


def _encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


class _Process:
    """One running CLI and what we learnt about it."""

    def __init__(self, proc: asyncio.subprocess.Process, resumed: str | None) -> None:
        self.proc = proc
        self.resumed = resumed  # the --resume id it was started with
        self.started = time.monotonic()
        self.saw_init = False
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.noise: deque[str] = deque(maxlen=STDERR_LINES)  # non-JSON stdout lines
        self.unacknowledged: list[bytes] = []  # user lines sent before its first init
        self.reader: asyncio.Task[None] | None = None
        self.stderr_reader: asyncio.Task[None] | None = None
        self.root_refused = False
        self.stopping = False
        # A --resume start answers a stale id with an error result before it
        # exits; hold that result until we know whether the id was stale.
        self.held_result: dict[str, Any] | None = None

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and not self.stopping


class ClaudeCodeBackend:
    """An ``AgentBackend`` over the Claude Code CLI."""

    name = "claude-code"

    def __init__(self, options: BackendOptions, sink: AgentEventSink) -> None:
        self.options = options
        self.sink = sink
        manifest_mode = None
        if options.mode is not None:
            manifest_mode = options.mode.manifest.agent.permission_mode
        self.permission_mode = options.permission_mode or manifest_mode or "bypassPermissions"
        self.model = options.model
        self.agent_session_id = options.agent_session_id
        self._binary: str | None = None
        self._process: _Process | None = None
        self._outbox: deque[bytes] = deque()  # stdin lines waiting for a process
        self._lock = asyncio.Lock()
        self._controls: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._permissions: dict[str, dict[str, Any]] = {}  # request_id -> tool input
        self._last_assistant: tuple[str, list[Any]] | None = None  # (id, content)
        self._resume_echo: tuple[str, list[Any]] | None = None  # what a resumed CLI may repeat
        self._turn_running = False
        self._turn_reported: set[str] = set()  # error codes already shown this turn
        self._stopped = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._handlers = {
            "stream_event": self._on_stream_event,
            "assistant": self._on_assistant,
            "user": self._on_user,
            "system": self._on_system,
            "result": self._on_result,
            "control_request": self._on_control_request,
            "control_response": self._on_control_response,
            "control_cancel_request": self._on_control_cancel,
            "keep_alive": _ignore,
            "rate_limit_event": _ignore,
        }

    # -- AgentBackend ------------------------------------------------------------

    async def start(self) -> None:
        self._stopped = False
        self._binary = find_claude_binary(self.options.claude_bin)
        if self._binary is None:
            self._not_found()
            return
        if self.options.greeting and not self.agent_session_id:
            # The greeting is a prompt from Pneuma, not from the person: it
            # goes to the CLI but is never echoed as a user message.
            self._outbox.append(_encode(user_line(self.options.greeting)))
            await self._pump()

    async def send_user_message(self, text: str, images: list[dict[str, str]]) -> None:
        self._outbox.append(_encode(user_line(text, images)))
        await self._pump()

    async def answer_permission(
        self,
        request_id: str,
        behavior: str,
        updated_input: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> None:
        original = self._permissions.pop(request_id, None)
        if original is None:
            log.warning("permission answer for unknown or expired request %s", request_id)
            return
        if behavior == "allow":
            response: dict[str, Any] = {
                "behavior": "allow",
                "updatedInput": updated_input if updated_input is not None else original,
            }
        else:
            response = {"behavior": "deny", "message": message or "The user denied this action."}
        await self._write_now(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": response},
            }
        )

    async def interrupt(self) -> None:
        if self._process is None or not self._process.alive:
            return
        try:
            await self._control({"subtype": "interrupt"})
        except (TimeoutError, RuntimeError) as exc:
            log.warning("the CLI did not acknowledge the interrupt: %s", exc)

    async def set_model(self, model: str) -> None:
        self.model = model  # used by the next start as --model
        if self._process is None or not self._process.alive:
            return
        try:
            await self._control({"subtype": "set_model", "model": model})
        except (TimeoutError, RuntimeError) as exc:
            log.warning("the CLI did not switch the model: %s", exc)

    async def stop(self) -> None:
        self._stopped = True
        # Not under the lock first: a write blocked on a CLI that stopped
        # reading holds it, and terminating the CLI is what frees it.
        if self._process is not None:
            await self._terminate(self._process)
        async with self._lock:
            if self._process is not None:  # started while we were stopping
                await self._terminate(self._process)
            self._process = None
        for task in list(self._tasks):
            task.cancel()

    # -- process lifecycle -------------------------------------------------------

    def _command(self, resume: str | None) -> list[str]:
        assert self._binary is not None
        command = [
            self._binary,
            "--print",
            "--input-format", "stream-json",
            "--output-format", "stream-json",
            "--include-partial-messages",
            "--verbose",
            "--permission-mode", self.permission_mode,
        ]  # fmt: skip
        if self.permission_mode != "bypassPermissions":
            command += ["--permission-prompt-tool", "stdio"]
        if self.model:
            command += ["--model", self.model]
        if resume:
            command += ["--resume", resume]
        return command

    def _environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
        env.update(
            PNEUMA_API=self.options.api_url,
            PNEUMA_TOKEN=self.options.token,
            PNEUMA_SESSION_ID=self.options.session_id,
            PNEUMA_MODE=self.options.mode.name if self.options.mode is not None else "",
        )
        env.update(self.options.extra_env)
        return env

    async def _pump(self) -> None:
        """Make sure a CLI runs, then hand it everything queued, in order."""
        async with self._lock:
            if not self._outbox or self._stopped:
                return
            if self._process is None or not self._process.alive:
                if not await self._spawn():
                    self.sink.emit({"type": "status_change", "status": "idle"})
                    return
            process = self._process
            assert process is not None
            while self._outbox:
                line = self._outbox.popleft()
                if not await self._write(process, line):
                    self._outbox.appendleft(line)  # the next message restarts the CLI
                    return
                if not process.saw_init:
                    process.unacknowledged.append(line)
                self._begin_turn()

    async def _spawn(self) -> bool:
        if self._binary is None:
            self._binary = find_claude_binary(self.options.claude_bin)
        if self._binary is None:
            self._not_found()
            return False
        resume = self.agent_session_id
        if resume and self._last_assistant is not None:
            self._resume_echo = self._last_assistant
        command = self._command(resume)
        log.info("starting Claude Code: %s", " ".join(command))
        try:
            proc = await asyncio.create_subprocess_exec(
                *command,
                cwd=str(self.options.workspace),
                env=self._environment(),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=LINE_LIMIT,
                # Its own process group: stop() signals the CLI and the
                # shells it started, and a Ctrl-C in our terminal reaches
                # only us, so shutdown stays in our hands.
                start_new_session=True,
            )
        except OSError as exc:
            self.sink.emit(
                {
                    "type": "error",
                    "code": "agent_not_found",
                    "message": f"Could not start {self._binary}: {exc}. {INSTALL_HINT}",
                }
            )
            self._binary = None
            return False
        process = _Process(proc, resume)
        self._process = process
        process.reader = asyncio.create_task(self._read_stdout(process))
        process.stderr_reader = asyncio.create_task(self._read_stderr(process))
        self.sink.emit({"type": "cli_connected"})
        # The handshake the SDKs make; its answer lists commands and models.
        initialize = {"type": "control_request", "request_id": "init_" + uuid.uuid4().hex[:12],
                      "request": {"subtype": "initialize", "hooks": None}}  # fmt: skip
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        future.add_done_callback(self._on_initialized)
        self._controls[initialize["request_id"]] = future
        await self._write(process, _encode(initialize))
        return True

    def _background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _not_found(self) -> None:
        wanted = self.options.claude_bin or os.environ.get("PNEUMA_CLAUDE_BIN")
        prefix = f"{wanted} is not an executable file. " if wanted else ""
        self.sink.emit({"type": "error", "code": "agent_not_found", "message": prefix + INSTALL_HINT})

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

    async def _write(self, process: _Process, line: bytes) -> bool:
        stdin = process.proc.stdin
        if stdin is None or stdin.is_closing() or process.proc.returncode is not None:
            return False
        try:
            stdin.write(line)
            await stdin.drain()
        except (ConnectionError, BrokenPipeError, RuntimeError) as exc:
            log.info("the CLI's stdin is closed: %s", exc)
            return False
        return True

    async def _write_now(self, message: dict[str, Any]) -> bool:
        process = self._process
        if process is None or not process.alive:
            log.info("no running CLI for %s", message.get("type"))
            return False
        return await self._write(process, _encode(message))

    async def _control(self, request: dict[str, Any]) -> dict[str, Any]:
        request_id = str(uuid.uuid4())
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._controls[request_id] = future
        message = {"type": "control_request", "request_id": request_id, "request": request}
        if not await self._write_now(message):
            self._controls.pop(request_id, None)
            raise RuntimeError("the CLI is not running")
        try:
            return await asyncio.wait_for(future, CONTROL_TIMEOUT)
        finally:
            self._controls.pop(request_id, None)

    async def _terminate(self, process: _Process) -> None:
        process.stopping = True
        proc = process.proc
        if proc.stdin is not None and not proc.stdin.is_closing():
            with contextlib.suppress(Exception):
                proc.stdin.close()
        if proc.returncode is None:
            self._signal(proc, signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), STOP_GRACE)
            except TimeoutError:
                log.warning("the CLI ignored SIGTERM for %.0f s; killing it", STOP_GRACE)
                self._signal(proc, signal.SIGKILL)
                await proc.wait()
        else:
            # The group may still hold shells the CLI started.
            self._signal(proc, signal.SIGKILL)
        for task in (process.reader, process.stderr_reader):
            if task is not None and task is not asyncio.current_task():
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(task, 1.0)

    @staticmethod
    def _signal(proc: asyncio.subprocess.Process, sig: int) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                if proc.returncode is None:
                    proc.send_signal(sig)

    # -- reading -----------------------------------------------------------------

    async def _read_stderr(self, process: _Process) -> None:
        stream = process.proc.stderr
        assert stream is not None
        while True:
            try:
                raw = await stream.readline()
            except ValueError:  # an endless line; keep what fits
                continue
            if not raw:
                return
            line = raw.decode(errors="replace").rstrip()
            if line:
                process.stderr.append(line)
                log.debug("claude stderr: %s", line)
                if _ROOT_PATTERN.search(line):
                    process.root_refused = True

    async def _read_stdout(self, process: _Process) -> None:
        stream = process.proc.stdout
        assert stream is not None
        handlers = self._handlers
        try:
            while True:
                try:
                    raw = await stream.readline()
                except ValueError:
                    log.warning("skipped a CLI line longer than %d bytes", LINE_LIMIT)
                    continue
                if not raw:
                    break
                try:
                    message = json.loads(raw)
                except ValueError:
                    text = raw.decode(errors="replace").strip()
                    if text:
                        process.noise.append(text)
                        log.warning("skipped a CLI line that is not JSON: %.200s", text)
                    continue
                if not isinstance(message, dict):
                    log.warning("skipped a CLI line that is not an object: %.200s", raw)
                    continue
                handler = handlers.get(message.get("type"))  # type: ignore[arg-type]
                if handler is None:
                    log.debug("ignored CLI message type %r", message.get("type"))
                    continue
                try:
                    handler(process, message)
                except Exception:
                    log.exception("could not handle a CLI %s message", message.get("type"))
        finally:
            await self._exited(process)

    async def _exited(self, process: _Process) -> None:
        code = await process.proc.wait()
        if process.stderr_reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(process.stderr_reader, 1.0)
        for request_id, future in list(self._controls.items()):
            if not future.done():
                future.set_exception(RuntimeError("the CLI exited"))
            self._controls.pop(request_id, None)
        if self._process is process:
            self._process = None
        if process.stopping:
            self._after_exit(process, code)
            return
        stderr = list(process.stderr)
        evidence = "\n".join(stderr + list(process.noise))
        log.info("Claude Code exited with %s", code)
        if (
            process.resumed
            and not process.saw_init
            and _STALE_PATTERN.search(evidence)
            and time.monotonic() - process.started < STALE_RESUME_WINDOW
        ):
            # A session id the CLI no longer knows (another machine, a wiped
            # ~/.claude): forget it and replay what it never saw, fresh.
            log.warning("Claude Code has no session %s; starting a new one", process.resumed)
            self.agent_session_id = None
            self.sink.set_agent_session_id(None)
            self._outbox.extendleft(reversed(process.unacknowledged))
            self._resume_echo = None
            if self._outbox and not self._stopped:
                self._background(self._pump())
            return
        if process.held_result is not None:
            self._on_result(process, process.held_result, held=False)
        self._after_exit(process, code)
        if process.root_refused:
            self._report("root_refused", ROOT_HINT)
        elif code and _AUTH_PATTERN.search(evidence):
            self._report_auth("")
        self.sink.emit({"type": "cli_disconnected", "exit_code": code, "stderr": stderr})

    def _after_exit(self, process: _Process, code: int) -> None:
        for request_id in list(self._permissions):
            self._permissions.pop(request_id, None)
            self.sink.emit({"type": "permission_cancelled", "request_id": request_id})
        if self._turn_running:
            self._turn_running = False
            self.sink.emit({"type": "status_change", "status": "idle"})
        if process.stopping:
            self.sink.emit({"type": "cli_disconnected", "exit_code": code, "stderr": list(process.stderr)})

    # -- CLI -> browser ----------------------------------------------------------

    def _begin_turn(self) -> None:
        self._turn_reported.clear()
        self._turn_running = True
        self.sink.emit({"type": "status_change", "status": "running"})

    def _report(self, code: str, message: str) -> bool:
        """Show an error once per turn; True if it was shown now."""
        if code in self._turn_reported:
            return False
        self._turn_reported.add(code)
        self.sink.emit({"type": "error", "code": code, "message": message})
        return True

    def _report_auth(self, detail: str) -> bool:
        return self._report("auth_failed", AUTH_HINT.format(detail=f" ({detail})" if detail else ""))

    def _on_stream_event(self, process: _Process, msg: dict[str, Any]) -> None:
        event = msg.get("event")
        if self._resume_echo is not None and isinstance(event, dict) and event.get("type") == "message_start":
            self._resume_echo = None  # a fresh reply began; nothing more to de-duplicate
        self.sink.emit(
            {"type": "stream_event", "event": event, "parent_tool_use_id": msg.get("parent_tool_use_id")}
        )

    def _on_assistant(self, process: _Process, msg: dict[str, Any]) -> None:
        message = msg.get("message")
        if not isinstance(message, dict):
            return
        if msg.get("error") == "authentication_failed":
            self._report_auth(_text_of(message))
        content = message.get("content") or []
        echo = self._resume_echo
        if echo is not None:
            self._resume_echo = None
            if message.get("id") != echo[0] and content == echo[1]:
                log.debug("dropped the assistant message a resumed CLI repeated")
                return
        self._last_assistant = (message.get("id", ""), content)
        self.sink.emit(
            {"type": "assistant", "message": message, "parent_tool_use_id": msg.get("parent_tool_use_id")}
        )

    def _on_user(self, process: _Process, msg: dict[str, Any]) -> None:
        message = msg.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        parent = msg.get("parent_tool_use_id")
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

    def _on_system(self, process: _Process, msg: dict[str, Any]) -> None:
        subtype = msg.get("subtype")
        if subtype == "init":
            process.saw_init = True
            process.unacknowledged.clear()
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
                if self._report_auth(f"HTTP {status}" if status else ""):
                    # The CLI would retry a bad key for minutes; end the turn now.
                    self._background(self.interrupt())
            else:
                self._report(
                    "api_retry",
                    f"The Anthropic API answered {status or 'an error'} ({msg.get('error')}); "
                    f"Claude Code retries (attempt {msg.get('attempt')} of {msg.get('max_retries')}).",
                )
        else:
            log.debug("CLI system message %r", subtype)

    def _on_result(self, process: _Process, msg: dict[str, Any], held: bool = True) -> None:
        if held and process.resumed and not process.saw_init:
            process.held_result = msg
            return
        if msg.get("is_error") and isinstance(msg.get("result"), str) and _AUTH_PATTERN.search(msg["result"]):
            self._report_auth(msg["result"])
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
        self._turn_running = False
        self.sink.emit({"type": "status_change", "status": "idle"})

    def _on_control_request(self, process: _Process, msg: dict[str, Any]) -> None:
        request_id = msg.get("request_id")
        request = msg.get("request") or {}
        if request.get("subtype") != "can_use_tool" or not request_id:
            log.debug("declined CLI control request %r", request.get("subtype"))
            reply = {
                "type": "control_response",
                "response": {
                    "subtype": "error",
                    "request_id": request_id,
                    "error": f"Pneuma does not handle {request.get('subtype')!r}",
                },
            }
            self._background(self._write(process, _encode(reply)))
            return
        tool_input = request.get("input") or {}
        self._permissions[request_id] = tool_input
        if self.permission_mode == "bypassPermissions":
            self._background(self.answer_permission(request_id, "allow"))
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

    def _on_control_response(self, process: _Process, msg: dict[str, Any]) -> None:
        response = msg.get("response") or {}
        future = self._controls.pop(response.get("request_id"), None)
        if future is None or future.done():
            return
        if response.get("subtype") == "success":
            future.set_result(response.get("response") or {})
        else:
            future.set_exception(RuntimeError(response.get("error") or "control request failed"))

    def _on_control_cancel(self, process: _Process, msg: dict[str, Any]) -> None:
        request_id = msg.get("request_id")
        if self._permissions.pop(request_id, None) is not None:
            self.sink.emit({"type": "permission_cancelled", "request_id": request_id})


def _ignore(process: _Process, msg: dict[str, Any]) -> None:
    return None


def _text_of(message: dict[str, Any]) -> str:
    return " ".join(
        block.get("text", "")
        for block in message.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text"
    ).strip()
