"""The Claude Code CLI as an agent backend, driven over stdio stream-json.

One ``claude --print --input-format stream-json --output-format stream-json``
process per session, started on the first message (or for the greeting),
restarted with ``--resume`` after it exits. Its stdout is NDJSON; every line
goes through the ``StreamJsonBridge`` (``pneuma.agents.stream_json``), which
translates it into the browser protocol and encodes what goes back to the
CLI; the socket backend (``pneuma.agents.socket_agent``) shares that bridge.
This module only owns the process: finding the binary, its command line and
environment, starting, restarting, stopping, and telling the person why it
died. Nothing here keeps history or assigns seq numbers: that is the
session's job.

The shapes of the CLI's messages are those of the transcripts in
``reference/claude-code-stream-json/`` (Claude Code 2.1.330).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import re
import shutil
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pneuma.agents.stream_json import (
    AUTH_HINT,
    CONTROL_TIMEOUT,
    AgentLink,
    encode,
    user_line,
)
from pneuma.agents.stream_json import AUTH_PATTERN as _AUTH_PATTERN
from pneuma.agents.stream_json_backend import StreamJsonBackend
from pneuma.core.backend import AgentEventSink, AgentPoint, BackendOptions
from pneuma.llm.claude_credentials import credentials_found

__all__ = [
    "AUTH_HINT",
    "CONTROL_TIMEOUT",
    "INSTALL_HINT",
    "CREDENTIALS_NOTICE",
    "ROOT_HINT",
    "ROOT_NOTICE",
    "ROOT_PERMISSION_MODE",
    "ClaudeCodeBackend",
    "choose_permission_mode",
    "credentials_found",
    "find_claude_binary",
    "running_as_root",
    "sandbox_declared",
    "user_line",
]

log = logging.getLogger(__name__)

# NDJSON lines carry whole file contents and tool results; a line is never
# split, so the reader must accept lines far beyond asyncio's 64 KiB default.
LINE_LIMIT = 64 * 1024 * 1024
READ_CHUNK = 64 * 1024  # stdout is read in chunks of this size, many lines at a time
STDERR_LINES = 50
STOP_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
STALE_RESUME_WINDOW = 3.0  # a --resume start that dies this fast with "not found" is stale

# Variables that make a nested CLI believe it runs inside another Claude Code.
_DROPPED_ENV = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")

INSTALL_HINT = (
    "Claude Code CLI not found. Install it with `pip install claude-agent-sdk==0.2.187` "
    "(it bundles the CLI) or `npm install -g @anthropic-ai/claude-code`, "
    "or point Pneuma at a binary with `--claude-bin PATH` (or PNEUMA_CLAUDE_BIN)."
)
ROOT_HINT = (
    "Claude Code refuses the bypassPermissions mode when run as root. Run Pneuma as a "
    "normal user, set IS_SANDBOX=1 if this machine is a disposable sandbox, or start "
    "with `--permission-mode acceptEdits`."
)
# As root, without a declared sandbox, the agent runs in this mode unless
# told otherwise: Claude Code accepts it for root, file edits need no
# prompt, anything else is asked in the browser.
ROOT_PERMISSION_MODE = "acceptEdits"
ROOT_NOTICE = (
    "running as root: Claude Code refuses bypassPermissions for root, so the agent uses "
    f"--permission-mode {ROOT_PERMISSION_MODE} (commands are asked in the browser); "
    "on a disposable machine set IS_SANDBOX=1 to keep bypassPermissions"
)
CREDENTIALS_NOTICE = (
    "no credentials for Claude Code found (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, "
    "CLAUDE_CODE_OAUTH_TOKEN or a `claude login`): the agent's first turn will fail; "
    "set one in the environment that starts Pneuma, or run `claude login`"
)
_TRUTHY = frozenset({"1", "true", "yes", "y", "on"})


def sandbox_declared(env: Mapping[str, str]) -> bool:
    """Whether IS_SANDBOX says this machine is disposable (any truthy
    spelling: the CLI itself understands only "1", see ``_environment``)."""
    return env.get("IS_SANDBOX", "").strip().lower() in _TRUTHY


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def choose_permission_mode(explicit: str | None, manifest_mode: str | None,
                           env: Mapping[str, str]) -> str:
    """The mode the CLI runs in: ``--permission-mode``, else the mode's
    manifest, else bypassPermissions — except that for root without a
    declared sandbox a default bypassPermissions (one not asked for on the
    command line) becomes ``ROOT_PERMISSION_MODE``, which works there."""
    chosen = explicit or manifest_mode or "bypassPermissions"
    if (chosen == "bypassPermissions" and explicit is None and running_as_root()
            and not sandbox_declared(env)):
        return ROOT_PERMISSION_MODE
    return chosen


_STALE_PATTERN = re.compile(
    # The last: a fork point (--resume-session-at) the session does not hold.
    r"no conversation found|--resume requires a valid session|session .{0,80}not found"
    r"|no message found with message\.uuid",
    re.IGNORECASE,
)
_ROOT_PATTERN = re.compile(r"cannot be used with root", re.IGNORECASE)


def find_claude_binary(explicit: str | None = None,
                       env: Mapping[str, str] | None = None) -> str | None:
    """Where the CLI is: the explicit path, PNEUMA_CLAUDE_BIN, `claude` on
    PATH, then the binary bundled in an installed claude-agent-sdk.
    ``env`` (default ``os.environ``) is where PNEUMA_CLAUDE_BIN and PATH
    are read, so that ``pneuma backends`` can ask about another one."""
    env = os.environ if env is None else env
    search_path = env.get("PATH")
    for candidate in (explicit, env.get("PNEUMA_CLAUDE_BIN")):
        if candidate:
            path = (shutil.which(candidate, path=search_path)
                    or (candidate if os.access(candidate, os.X_OK) else None))
            if path:
                return path
            log.warning("Claude Code binary %r is not an executable file", candidate)
            return None
    on_path = shutil.which("claude", path=search_path)
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


async def read_lines(
    stream: asyncio.StreamReader,
    feed: Callable[[bytes], None],
    *,
    chunk_size: int = READ_CHUNK,
    line_limit: int = LINE_LIMIT,
) -> None:
    """Hand ``feed`` every complete line ``stream`` yields, many at a time.

    Reads big chunks rather than one ``readline()`` per line: a stream of
    small deltas then costs one await and one feed per chunk, not per line.
    ``feed`` gets whole lines only (ending with a newline); a line cut by
    a chunk boundary waits for its end, however long it is (lines of
    several MiB carry file contents), up to ``line_limit`` bytes, beyond
    which it is skipped with a warning. A last line without a newline is
    fed when the stream ends."""
    partial: list[bytes] = []  # the start of a line longer than what was read so far
    size = 0
    skipping = False  # inside a line longer than line_limit
    while True:
        chunk = await stream.read(chunk_size)
        if not chunk:
            break
        end = chunk.rfind(b"\n")
        if end < 0:
            if not skipping:
                partial.append(chunk)
                size += len(chunk)
                if size > line_limit:
                    log.warning("skipped a CLI line longer than %d bytes", line_limit)
                    partial.clear()
                    size = 0
                    skipping = True
            continue
        head = chunk[: end + 1]
        if skipping:
            # The over-long line ends at the first newline of this chunk.
            head = head[head.index(b"\n") + 1 :]
            skipping = False
        elif partial:
            partial.append(head)
            head = b"".join(partial)
            partial.clear()
        size = 0
        if end + 1 < len(chunk):
            partial.append(chunk[end + 1 :])
            size = len(chunk) - end - 1
        if head:
            feed(head)
    if partial and not skipping:
        feed(b"".join(partial))


class _Process(AgentLink):
    """One running CLI and what we learnt about it."""

    def __init__(self, proc: asyncio.subprocess.Process, resumed: str | None) -> None:
        super().__init__(resumed)
        self.proc = proc
        self.started = time.monotonic()
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.reader: asyncio.Task[None] | None = None
        self.stderr_reader: asyncio.Task[None] | None = None
        self.root_refused = False
        self.stopping = False

    transport = "the CLI's stdin"

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and not self.stopping

    @property
    def writable(self) -> bool:
        # A CLI being stopped still reads what reaches it before it exits:
        # only a closed stdin or an exited process refuses the line.
        stdin = self.proc.stdin
        return stdin is not None and not stdin.is_closing() and self.proc.returncode is None

    async def send_text(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode())
        await self.proc.stdin.drain()


class ClaudeCodeBackend(StreamJsonBackend):
    """An ``AgentBackend`` over the Claude Code CLI."""

    name = "claude-code"

    def __init__(self, options: BackendOptions, sink: AgentEventSink) -> None:
        manifest_mode = None
        if options.mode is not None:
            manifest_mode = options.mode.manifest.agent.permission_mode
        self.permission_mode = choose_permission_mode(options.permission_mode, manifest_mode,
                                                      os.environ)
        super().__init__(options, sink, permission_mode=self.permission_mode, logger=log)
        self._binary: str | None = None
        self._process: _Process | None = None
        self._lock = asyncio.Lock()
        self._stopped = False
        self._tasks: set[asyncio.Task[Any]] = set()
        # Where the next CLI continues from, in a session of its own
        # (fork_at): taken by the next start.
        self._fork: AgentPoint | None = None

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
            self.bridge.queue_user_message(self.options.greeting)
            await self._pump()

    async def send_user_message(self, text: str, images: list[dict[str, str]]) -> None:
        self.bridge.queue_user_message(text, images)
        await self._pump()

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
        self.bridge.cancel_tasks()

    # -- forks (pneuma.core.backend.ForksConversation) ------------------------------

    def conversation_point(self) -> AgentPoint | None:
        """The CLI's newest transcript message in its session; the fork
        point still to be taken when no message came since."""
        if self._fork is not None:
            return self._fork
        at, session = self.bridge.last_uuid, self.agent_session_id
        return AgentPoint(self.name, session, at) if at and session else None

    async def fork_at(self, point: AgentPoint) -> bool:
        """The next CLI resumes ``point``'s session cut at its message, as a
        new session (``--resume S --resume-session-at U --fork-session``,
        what the Agent SDK's resumeSessionAt does): the old session keeps
        every later turn."""
        async with self._lock:
            if self._process is not None:
                await self._terminate(self._process)
                self._process = None
            self._fork = point
            self.agent_session_id = None
            self.bridge.last_assistant = None
        return True

    # -- process lifecycle -------------------------------------------------------

    def _command(self, resume: str | None, fork: AgentPoint | None = None) -> list[str]:
        assert self._binary is not None
        command = [
            self._binary,
            "--print",
            "--input-format", "stream-json",
            "--output-format", "stream-json",
            "--include-partial-messages",
            "--verbose",
            "--permission-mode", self.permission_mode,
            # Always, even in bypassPermissions: without it the CLI does not
            # offer AskUserQuestion to the model (stream_json_questions.py).
            "--permission-prompt-tool", "stdio",
        ]  # fmt: skip
        if self.model:
            command += ["--model", self.model]
        if resume:
            command += ["--resume", resume]
        elif fork is not None:
            command += ["--resume", fork.agent_session_id, "--resume-session-at", fork.at,
                        "--fork-session"]
        return command

    def _environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
        env.update(self.options.pneuma_env())
        # The skills tell the agent to run `pneuma …` (tools, coauthor, export):
        # make sure the `pneuma` next to this interpreter is the one it finds.
        scripts = os.path.dirname(sys.executable)
        path = env.get("PATH", "")
        if scripts not in path.split(os.pathsep):
            env["PATH"] = scripts + (os.pathsep + path if path else "")
        env.update(self.options.extra_env)
        if sandbox_declared(env):
            env["IS_SANDBOX"] = "1"  # the only spelling the CLI understands
        return env

    async def _pump(self) -> None:
        """Make sure a CLI runs, then hand it everything queued, in order."""
        async with self._lock:
            if not self.bridge.outbox or self._stopped:
                return
            if self._process is None or not self._process.alive:
                if not await self._spawn():
                    self.sink.emit({"type": "status_change", "status": "idle"})
                    return
            process = self._process
            assert process is not None
            # A line the CLI could not take stays queued: the next message
            # restarts the CLI and sends it again.
            await self.bridge.flush(process)

    async def _spawn(self) -> bool:
        if self._binary is None:
            self._binary = find_claude_binary(self.options.claude_bin)
        if self._binary is None:
            self._not_found()
            return False
        resume = self.agent_session_id
        if resume and self.bridge.last_assistant is not None:
            self.bridge.resume_echo = self.bridge.last_assistant
        fork, self._fork = (None, None) if resume else (self._fork, None)
        command = self._command(resume, fork)
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
        process = _Process(proc, resume or (fork.agent_session_id if fork else None))
        self._process = process
        self.bridge.link = process
        process.reader = asyncio.create_task(self._read_stdout(process))
        process.stderr_reader = asyncio.create_task(self._read_stderr(process))
        self.sink.emit({"type": "cli_connected"})
        await self.bridge.initialize(process)
        return True

    def _background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _not_found(self) -> None:
        wanted = self.options.claude_bin or os.environ.get("PNEUMA_CLAUDE_BIN")
        prefix = f"{wanted} is not an executable file. " if wanted else ""
        self.sink.emit({"type": "error", "code": "agent_not_found", "message": prefix + INSTALL_HINT})

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
        try:
            await read_lines(stream, lambda data: self.bridge.feed(process, data))
        finally:
            await self._exited(process)

    async def _exited(self, process: _Process) -> None:
        code = await process.proc.wait()
        if process.stderr_reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(process.stderr_reader, 1.0)
        bridge = self.bridge
        bridge.drop_link(process, "the CLI exited")
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
            bridge.outbox.extendleft(reversed(process.unacknowledged))
            bridge.resume_echo = None
            if bridge.outbox and not self._stopped:
                self._background(self._pump())
            return
        if process.held_result is not None:
            bridge.emit_result(process.held_result)
        self._after_exit(process, code)
        if process.root_refused:
            bridge.report("root_refused", ROOT_HINT)
        elif code and _AUTH_PATTERN.search(evidence):
            bridge.report_auth("")
        self.sink.emit({"type": "cli_disconnected", "exit_code": code, "stderr": stderr})

    def _after_exit(self, process: _Process, code: int) -> None:
        self.bridge.end_link()
        if process.stopping:
            self.sink.emit({"type": "cli_disconnected", "exit_code": code, "stderr": list(process.stderr)})


# Kept for callers of the earlier module layout.
_encode = encode


def permission_problem(permission_mode: str) -> str | None:
    """``BackendSpec.permission_problem``: as root, an explicit
    bypassPermissions would only fail in the page; refused at start, with
    the fix, unless IS_SANDBOX declares a sandbox."""
    if permission_mode != "bypassPermissions":
        return None
    if running_as_root() and not sandbox_declared(os.environ):
        return ("Claude Code refuses --permission-mode bypassPermissions when run as root; "
                "set IS_SANDBOX=1 if this machine is disposable, or use "
                "--permission-mode acceptEdits")
    return None


def start_notices(mode: Any, permission_mode: str | None,
                  notify: Callable[[str], None]) -> str | None:
    """``BackendSpec.start_notices``: the line for the permission mode chosen
    for root; returns the permission mode to run with (None: the mode's own)."""
    manifest_mode = mode.manifest.agent.permission_mode
    chosen = choose_permission_mode(permission_mode, manifest_mode, os.environ)
    if chosen == ROOT_PERMISSION_MODE and (permission_mode or manifest_mode) != chosen:
        notify(ROOT_NOTICE)
    return permission_mode if chosen == (permission_mode or manifest_mode) else chosen
