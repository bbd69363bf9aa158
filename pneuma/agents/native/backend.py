"""``NativeBackend``: the ``AgentBackend`` of ``pneuma run --backend native``.

It owns the runtime's services for one session (store, registry, twins,
scheduler, artifacts, gateway, orchestrator), takes the person's messages
in order (one task at a time), and turns what browser clients report into
messages for the web UI. It needs a model it can call (an Anthropic API
key, or an OpenAI-compatible server through ``provider = "openai"``):
without one it says so at start, in the chat and on stderr, and every
message is answered with the same explanation instead of a crash.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import uuid
from collections.abc import Callable
from typing import Any

from pneuma.api import AgentEventSink, AgentPoint, BackendOptions, LLMGateway

from . import picker
from .artifacts import ArtifactService
from .clients import ExtensionRegistry, TwinStore
from .config import NativeConfig
from .orchestrator import AgentOrchestrator, NotABrowser
from .prompt import build_system_prompt
from .scheduler import ActionRecord, ActionScheduler
from .store import SessionStore
from .tools import build_tools
from .viewers import ViewerRouter

log = logging.getLogger(__name__)

NO_KEY = (
    "The native backend talks to the Anthropic Messages API itself and needs an API key: "
    "set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL for another "
    "Messages-API endpoint) in the environment that starts `pneuma run`, then restart it."
)


class NativeBackend:
    name = "native"

    def __init__(self, options: BackendOptions, sink: AgentEventSink) -> None:
        self.options = options
        self.sink = sink
        self.env = {**os.environ, **options.extra_env}
        workspace = options.workspace
        self.config = NativeConfig.load(workspace, options.model, self.env)
        self.store = SessionStore.for_workspace(workspace)
        self.artifacts = ArtifactService.for_workspace(workspace)
        self.registry = ExtensionRegistry(on_change=self._clients_changed,
                                          on_offline=self._client_offline)
        self.twins = TwinStore(on_change=self._twin_changed)
        self.scheduler = ActionScheduler(self.registry, self.store, self._action_event,
                                         ack_timeout=self.config.ack_timeout,
                                         action_timeout=self.config.action_timeout)
        # The host's one LLM gateway; each call passes config.llm_settings(),
        # so a model switch applies to the next call.
        self.gateway = LLMGateway(self.config.llm_settings(), self.env)
        self.tools = build_tools(options.mode)
        label = options.mode.manifest.display_name
        if isinstance(label, dict):
            label = label.get("en") or next(iter(label.values()), "")
        # With no tab open, the model's viewer actions go where the session's
        # own go (the headless viewer, when it is on).
        self.viewers = ViewerRouter(
            self.registry, options.mode.name, label or options.mode.name,
            no_tab=lambda: getattr(getattr(sink, "viewer_actions", None), "when_no_tab", None))
        # The conversation the model sees, kept by session in the store: the
        # session's own id unless a fork made another (fork_at).
        self.orchestrator = AgentOrchestrator(
            session_id=options.agent_session_id or options.session_id, mode=options.mode, workspace=workspace,
            config=self.config, store=self.store, registry=self.registry,
            scheduler=self.scheduler, artifacts=self.artifacts, gateway=self.gateway,
            emit=self._emit, tools=self.tools,
            system_prompt=lambda: build_system_prompt(options.mode, workspace),
            viewer_actions=self.viewers,
            confirmations=getattr(sink, "confirmations", None),
            api_url=options.api_url, api_token=options.token,
            credentials_problem=self.credentials_problem,
            twin=self.twins.get,
        )
        self._queue: asyncio.Queue[tuple[str, list[dict[str, str]]]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._turn: asyncio.Task[None] | None = None
        self._stopped = False
        self._unsubscribe_picker: Callable[[], None] = lambda: None

    # -- AgentBackend ------------------------------------------------------------

    async def start(self) -> None:
        self._unsubscribe_picker = picker.subscribe(
            self.sink, lambda session: picker.BrowserPicker(session, self.select_browser))
        self.store.ensure_session(self.orchestrator.session_id, self.options.mode.name)
        tasks = self.orchestrator.resume_after_restart()
        state = {"model": self.config.model, "cwd": str(self.options.workspace),
                 "tools": [t.name for t in self.tools], "permission_mode": "native"}
        self.sink.set_agent_state(**state)
        for connection in list(getattr(self.sink, "connections", ())):
            if getattr(connection, "subscribed", False) and not getattr(connection, "closed", False):
                self.viewers.attach(connection)
        self._emit({"type": "session_update", "updates": state})
        if tasks:
            self._emit({"type": "task_list", "tasks": [t.to_json() for t in tasks]})
        problem = self.credentials_problem()
        if problem:
            print(f"[pneuma] native backend: {problem}", file=sys.stderr, flush=True)
            self._emit({"type": "error", "code": "no_api_key", "message": problem})
        self._worker = asyncio.get_running_loop().create_task(self._work())

    async def send_user_message(self, text: str, images: list[dict[str, str]]) -> None:
        await self._queue.put((text, images))

    # -- forks (pneuma.api.ForksConversation) -----------------------------------------

    def conversation_point(self) -> AgentPoint | None:
        """The store's session the model's conversation is kept under, and its newest row."""
        session = self.orchestrator.session_id
        last = self.store.last_message_id(session)
        return AgentPoint(self.name, session, str(last)) if last is not None else None

    async def fork_at(self, point: AgentPoint) -> bool:
        """Go on in a new session of the store holding the conversation up
        to ``point`` (the old session keeps the rest); its id is the agent
        session id the conversation resumes."""
        if (self._turn is not None and not self._turn.done()) or not point.at.isdigit():
            return False
        fork = str(uuid.uuid4())
        self.store.fork_session(point.agent_session_id, fork, int(point.at), self.options.mode.name)
        self.orchestrator.session_id = fork
        self.sink.set_agent_session_id(fork)
        return True

    async def answer_permission(self, request_id: str, behavior: str,
                                updated_input: dict[str, Any] | None = None,
                                message: str | None = None) -> None:
        log.info("the native backend asks no permissions; ignored answer to %s", request_id)

    async def interrupt(self) -> None:
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()

    async def set_model(self, model: str) -> None:
        self.config.model = model

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._unsubscribe_picker()
        self.viewers.cancel_all("the server is shutting down")
        for task in (self._turn, self._worker):
            if task is not None and not task.done():
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass
        try:
            await self.gateway.close()
        except Exception:
            log.exception("closing the model client failed")
        self.store.close()

    # -- the queue ---------------------------------------------------------------

    async def _work(self) -> None:
        while True:
            text, images = await self._queue.get()
            self._turn = asyncio.get_running_loop().create_task(
                self.orchestrator.handle_message(text, images))
            try:
                await self._turn
            except asyncio.CancelledError:
                if self._stopped:
                    raise
            except Exception:
                log.exception("a native turn failed")
            finally:
                self._turn = None

    def credentials_problem(self) -> str | None:
        settings = self.config.llm_settings()
        wrong = settings.problems()
        if wrong:
            return ("The native backend's model settings are wrong: " + "; ".join(wrong)
                    + ". Fix them in .pneuma/native.json (or the PNEUMA_NATIVE_* variables), "
                    "then restart `pneuma run`.")
        if self.gateway.has_credentials(settings):
            return None
        if settings.provider != "anthropic":
            return (f"The native backend cannot call its model: {self.gateway.problem(settings)}; "
                    "then restart `pneuma run`.")
        if self.config.api_key_env:
            return (f"The native backend talks to the Anthropic Messages API itself and needs an "
                    f"API key in {self.config.api_key_env} (apiKeyEnv in .pneuma/native.json); "
                    "set it in the environment that starts `pneuma run`, then restart it.")
        return NO_KEY

    # -- browser clients ---------------------------------------------------------

    def _emit(self, message: dict[str, Any]) -> None:
        if not self._stopped:
            self.sink.emit(message)

    def extension_list(self) -> dict[str, Any]:
        """Browser clients and the shell's viewer tabs (``kind``), online first."""
        return {
            "clients": self.registry.listing(),
            "selectedClientId": self.registry.selected(self.options.session_id),
            "viewers": len(self.viewers.online()),
        }

    # -- the shell's tabs (called by the session) -------------------------------

    def viewer_attached(self, connection: Any) -> None:
        """A tab of the shell subscribed: it is a viewer client from now on."""
        if not self._stopped:
            self.viewers.attach(connection)

    def viewer_detached(self, connection: Any) -> None:
        self.viewers.detach(connection)

    def viewer_action_response(self, request_id: str, result: dict[str, Any]) -> bool:
        """A ``viewer_action_response`` the session's own channel did not expect."""
        return self.viewers.resolve(request_id, result)

    def select_browser(self, client_id: str) -> dict[str, str] | None:
        """The picker's ``select_browser`` message: None, or ``{code, message}``."""
        try:
            self.orchestrator.select_client(client_id)
        except KeyError:
            return {"code": "unknown_client", "message": f"no browser client {client_id!r}"}
        except NotABrowser as exc:
            return {"code": "not_a_browser", "message": str(exc)}
        except ValueError as exc:
            return {"code": "client_offline", "message": str(exc)}
        return None

    def _clients_changed(self, clients: list[dict[str, Any]]) -> None:
        self._emit({"type": "extension_update", **self.extension_list()})

    def _client_offline(self, client_id: str) -> None:
        self.scheduler.client_offline(client_id)

    def _twin_changed(self, client_id: str, twin: dict[str, Any]) -> None:
        self._emit({"type": "twin_update", "clientId": client_id, "twin": twin})

    def _action_event(self, phase: str, record: ActionRecord) -> None:
        action = record.to_json()
        if phase == "start":
            action.pop("result", None)
        self._emit({"type": "browser_action", "phase": phase, "action": action})

    def client_message(self, client_id: str, message: dict[str, Any]) -> None:
        """Something a connected browser client sent."""
        self.registry.seen(client_id)
        kind = message.get("type")
        if kind == "ack":
            self.scheduler.acknowledged(str(message.get("id")))
        elif kind == "browser_action_result":
            self.scheduler.finished(str(message.get("id")), bool(message.get("ok")),
                                    message.get("result"), message.get("error"))
        elif kind == "full_state_sync":
            self.twins.full_state_sync(client_id, message)
        elif kind == "tab_event":
            self.twins.tab_event(client_id, message)
        elif kind == "ping":
            pass
        else:
            log.debug("ignored browser client message %r", kind)
