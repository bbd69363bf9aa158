"""What an agent backend is, and what a session offers it.

A session owns the browser protocol (seq numbers, replay, history); a
backend only translates between its agent and that protocol. It receives
calls (`send_user_message`, `answer_permission`, ...) and reports what its
agent does through the `AgentEventSink` it was built with.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


class ModeInfo(Protocol):
    """What a backend reads of the mode it serves: a ``pneuma.api.LoadedMode``
    (named here by its shape: this contract sits below the package that
    loads modes)."""

    name: str
    manifest: Any


class AgentEventSink(Protocol):
    """The session side of a backend."""

    def emit(self, message: dict[str, Any]) -> None:
        """Broadcast one browser-protocol message (``{"type": ..., ...}``).

        The session assigns its ``seq``, keeps it for replay, records it in
        the history when it belongs there (``assistant`` messages with the
        same ``message.id`` replace each other) and sends it to every
        browser socket. The dict must not be mutated afterwards.
        """

    def set_agent_session_id(self, agent_session_id: str | None) -> None:
        """Remember the agent's own session id (``--resume``); None forgets a stale one."""

    def set_agent_state(self, **state: Any) -> None:
        """Update what ``session_init`` reports (model, tools, cwd, permission_mode, ...)."""


@dataclass
class BackendOptions:
    """Everything ``pneuma run`` knows that a backend may need."""

    workspace: Path
    mode: ModeInfo
    api_url: str  # PNEUMA_API, e.g. http://127.0.0.1:17007
    token: str  # PNEUMA_TOKEN
    session_id: str  # our session id (PNEUMA_SESSION_ID)
    agent_session_id: str | None = None  # resume this agent session
    model: str | None = None
    permission_mode: str | None = None  # None: the manifest's agent.permissionMode
    claude_bin: str | None = None
    greeting: str | None = None  # hidden first prompt for a fresh session
    extra_env: dict[str, str] = field(default_factory=dict)

    def pneuma_env(self) -> dict[str, str]:
        """The variables through which the agent's ``pneuma`` commands and
        Pneuma's MCP tools reach this session (every backend gives them)."""
        return {"PNEUMA_API": self.api_url, "PNEUMA_TOKEN": self.token,
                "PNEUMA_SESSION_ID": self.session_id,
                "PNEUMA_MODE": self.mode.name if self.mode is not None else ""}


class AgentBackend(Protocol):
    """One agent for one session."""

    name: str

    async def start(self) -> None:
        """Get ready to take messages (a process may start lazily)."""

    async def send_user_message(self, text: str, images: list[dict[str, str]]) -> None:
        """Deliver the person's message (viewer context already prefixed).
        Images are ``{"media_type": ..., "data": <base64>}``. Messages sent
        before the agent is up are queued, never lost."""

    async def answer_permission(
        self,
        request_id: str,
        behavior: str,
        updated_input: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> None:
        """Answer a ``permission_request`` (behavior ``allow`` or ``deny``)."""

    async def interrupt(self) -> None:
        """Stop the current turn."""

    async def set_model(self, model: str) -> None:
        """Switch the model for the next turns."""

    async def stop(self) -> None:
        """Shut the agent down (gracefully, then by force); idempotent."""


@dataclass(frozen=True)
class AgentPoint:
    """A place in an agent's own conversation: its session, and the last
    message there (what ``at`` means is the backend's own: Claude Code's
    message uuid, a Codex turn count, ...). Kept with each of the person's
    messages so the conversation can later be forked just before it
    (docs/conversations.md, "Branches")."""

    backend: str
    agent_session_id: str
    at: str


@runtime_checkable
class ForksConversation(Protocol):
    """A backend whose agent can continue from an earlier point of its own
    conversation while that conversation stays as it was (a fork)."""

    def conversation_point(self) -> AgentPoint | None:
        """Where the agent's conversation stands now (None: not known)."""

    async def fork_at(self, point: AgentPoint) -> bool:
        """Make the agent's next turn continue from ``point`` in a new
        session of its own (the old one untouched); False when it cannot."""


def conversation_point(backend: object) -> AgentPoint | None:
    """``backend``'s ``conversation_point()``; None for one that cannot fork."""
    return backend.conversation_point() if isinstance(backend, ForksConversation) else None


async def fork_at(backend: object, point: AgentPoint) -> bool:
    """``backend.fork_at(point)``; False (unsupported) for a backend without it."""
    if not isinstance(backend, ForksConversation) or point.backend != getattr(backend, "name", None):
        return False
    return await backend.fork_at(point)


@dataclass(frozen=True)
class BackendCheckContext:
    """What a backend's status check may look at: the environment Pneuma
    starts agents with, the launcher's or ``pneuma run``'s ``--claude-bin``,
    and the workspace when one is being opened (None for ``pneuma backends``).

    ``version`` False asks for a quick answer (``pneuma run`` before its
    ready line): do not start a process just to learn a version string."""

    env: Mapping[str, str]
    workspace: Path | None = None
    claude_bin: str | None = None
    version: bool = True


@dataclass(frozen=True)
class BackendStatus:
    """Whether a backend can work now, and if not, what the person does.

    ``usable`` False means a session would start but its agent could not
    answer (no binary, no credentials). ``found`` says what was found
    (a path, the variable holding a key), ``missing`` what is not there,
    ``fix`` the one thing to do about it; ``notes`` are worth telling but
    change nothing (the permission mode chosen for root, for example)."""

    usable: bool
    version: str | None = None
    found: str | None = None
    missing: str | None = None
    fix: str | None = None
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"usable": self.usable, "version": self.version, "found": self.found,
                "missing": self.missing, "fix": self.fix, "notes": list(self.notes)}


BackendCheck = Callable[[BackendCheckContext], BackendStatus]

# The host's own backend without an agent (`--backend none`): a look at the
# workspace. Known by name where no plugin is loaded yet (the quick start's
# early answers, session.json), so a look resumes the conversation it finds
# and changes no backend's own.
NO_AGENT_BACKEND = "none"


def command_to_type(binary: str, name: str, env: Mapping[str, str]) -> str:
    """How the person runs ``binary`` from their shell, for a fix line such
    as "run `claude login`": the bare ``name`` when ``PATH`` in ``env``
    finds that very file, else its full path (a CLI installed inside
    ``.venv/`` is not on ``PATH`` until the venv is activated)."""
    target = os.path.realpath(binary)
    on_path = shutil.which(name, path=env.get("PATH"))
    if on_path and os.path.realpath(on_path) == target:
        return name
    # scripts/install links the pinned CLIs into the venv's bin/: that
    # short path beats the package's deep one.
    in_venv = os.path.join(sys.prefix, "bin", name)
    if os.path.exists(in_venv) and os.path.realpath(in_venv) == target:
        return shlex.quote(in_venv)
    return shlex.quote(binary)


@dataclass(frozen=True)
class BackendSpec:
    """A backend a plugin offers for ``pneuma run --backend NAME``.

    ``factory(options, sink)`` returns an ``AgentBackend``, or None for a
    session without an agent. ``routes``, when given, adds the backend's own
    HTTP routes to the sessions that run it (the native runtime's client
    routes, for example).
    """

    name: str
    description: str
    factory: Callable[[BackendOptions, AgentEventSink], AgentBackend | None]
    routes: Callable[[Any], Iterable[Any]] | None = None
    """HTTP routes this backend adds to a session that runs it: called with
    the session's ``pneuma.api.Pneuma`` while the server is built, returns
    ``aiohttp.web`` route definitions (``web.get(path, handler)``, ...).
    Typed loosely here only to keep this module below the server's."""
    check: BackendCheck | None = None
    """Whether the backend is usable now (``pneuma backends``, the warning
    of ``pneuma run``, the launcher's backend picker). Must be cheap and
    must not raise for an ordinary problem: it returns a ``BackendStatus``
    saying what is missing. Without one the backend counts as usable."""
    instruction_files: tuple[str, ...] = ()
    """Files besides CLAUDE.md that this backend's agent reads its
    instructions from (Codex: ``AGENTS.md``): when a session runs it, the
    skill installer writes the same marker sections there too."""
    permission_problem: Callable[[str], str | None] | None = None
    """Called with the ``--permission-mode`` the person asked for, before
    anything is written: the one line that stops the start when this
    backend's agent would refuse that mode (the Claude Code CLI refuses
    ``bypassPermissions`` as root), else None. Not called without one."""
    start_notices: Callable[[Any, str | None, Callable[[str], None]], str | None] | None = None
    """Called once the mode is loaded, with the mode, the permission mode
    asked for (None: the mode's own) and ``notify`` for terminal lines: it
    says what would otherwise surface only in the page, and returns the
    permission mode the agent runs with (None: the mode's own)."""
    browser_module: str | None = None
    """URL path of an ES module with this backend's own part of the page
    (served by its ``routes``); the shell imports it and shows what its
    ``install()`` returns (pneuma/web/lib/backend-ui.js). None: no UI."""


@runtime_checkable
class TakesAgentSocket(Protocol):
    """A backend an agent connects to over ``/ws/cli/{sid}`` (``--backend
    socket``): the route asks it by this shape, never by its name."""

    def claim(self) -> Any:
        """None when the socket may be taken now; else a refusal with
        ``status``, ``code`` and ``message``."""

    def release(self) -> None:
        """Give the claim back (the upgrade failed)."""

    async def serve(self, ws: Any) -> None:
        """Run the agent socket until it closes."""
