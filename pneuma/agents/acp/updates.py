"""What the agent tells about its session, routed: ``session/update`` kinds
to the translator or the session's state, the agent's own modes and model
choice, and how a permission request becomes the page's card."""

from __future__ import annotations

import logging
from typing import Any

from acp import RequestError

from .host import AcpHost
from .translate import ToolCard, block_text

log = logging.getLogger(__name__)

# Updates that change nothing on the page (the person's own message echoed,
# the session's title, the context window's use).
_QUIET = frozenset({"user_message_chunk", "session_info_update", "usage_update",
                    "plan_update", "plan_removed"})


def _model_option(options: list[Any]) -> Any:
    """The session config option that chooses the model, if the agent offers one."""
    for option in options:
        if getattr(option, "type", None) == "select" and (
                getattr(option, "category", None) == "model" or option.id == "model"):
            return option
    return None


class UpdateRouter:
    """One backend's view of its agent's session: modes, model, commands."""

    def __init__(self, backend: AcpHost) -> None:
        self.backend = backend
        self.modes: list[dict[str, str]] = []
        self.current_mode: str | None = None
        self.config_options: list[Any] = []
        self.commands: list[str] = []

    def route(self, update: Any) -> None:
        kind = getattr(update, "session_update", None)
        translator = self.backend.translator
        emit = self.backend.sink.emit
        messages: list[dict[str, Any]] = []
        if kind == "agent_message_chunk":
            messages = translator.chunk("text", block_text(update.content), update.message_id)
        elif kind == "agent_thought_chunk":
            messages = translator.chunk("thinking", block_text(update.content), update.message_id)
        elif kind in ("tool_call", "tool_call_update"):
            messages = translator.tool(update, started=kind == "tool_call")
        elif kind == "plan":
            messages = translator.plan(list(update.entries))
        elif kind == "available_commands_update":
            self.commands = [f"/{c.name}" for c in update.available_commands]
            self._tell({"slash_commands": self.commands})
        elif kind == "current_mode_update":
            self.current_mode = str(update.current_mode_id)
            self._tell({"agent_mode": self.current_mode})
        elif kind == "config_option_update":
            self.config_options = list(update.config_options or [])
            self._tell(self._model_state())
        elif kind not in _QUIET:
            self.backend.protocol_problem(f"a session/update of kind {kind!r}")
        for message in messages:
            emit(message)

    def session_opened(self, response: Any) -> None:
        modes = getattr(response, "modes", None)
        if modes is not None:
            self.modes = [{"id": m.id, "name": m.name} for m in modes.available_modes]
            self.current_mode = modes.current_mode_id
        self.config_options = list(getattr(response, "config_options", None) or [])
        updates: dict[str, Any] = {"agent_modes": self.modes, "agent_mode": self.current_mode}
        updates.update(self._model_state())
        self._tell(updates)

    def _model_state(self) -> dict[str, Any]:
        option = _model_option(self.config_options)
        if option is None:
            return {}
        values = [getattr(o, "value", None) for o in option.options]
        self.backend.translator.model = str(option.current_value)
        return {"model": str(option.current_value),
                "models": [str(v) for v in values if v is not None]}

    def _tell(self, updates: dict[str, Any]) -> None:
        updates = {k: v for k, v in updates.items() if v is not None}
        if not updates:
            return
        self.backend.sink.set_agent_state(**updates)
        self.backend.sink.emit({"type": "session_update", "updates": updates})

    def mode_to_ask(self) -> str | None:
        """The agent mode to switch to after the session opens, so that the
        agent asks what Pneuma's permission mode says to ask: the agent's
        mode of the same name (Claude Code's adapter offers them), else its
        "default" (ask before changes; Pneuma then answers what its mode
        allows unasked). None: keep the agent's (it offers neither)."""
        ids = [m["id"] for m in self.modes]
        wanted = self.backend.permission_mode
        choice = wanted if wanted in ids else ("default" if "default" in ids else None)
        return None if choice == self.current_mode else choice

    async def choose_model(self, model: str) -> None:
        backend = self.backend
        option = _model_option(self.config_options)
        if option is None or backend.conn is None or backend.session_id is None:
            backend.sink.emit({"type": "error", "code": "agent_notice", "message": (
                "This ACP agent offers no choice of model (or has not started yet): "
                f"{model!r} was not set.")})
            return
        try:
            response = await backend.conn.set_config_option(
                config_id=option.id, session_id=backend.session_id, value=model)
        except (RequestError, ConnectionError) as exc:
            backend.sink.emit({"type": "error", "code": "agent_error",
                               "message": f"The ACP agent refused the model {model!r}: {exc}"})
            return
        if response is not None and response.config_options:
            self.config_options = list(response.config_options)
        else:
            option.current_value = model
        self._tell(self._model_state())

    async def choose_mode(self, mode_id: str) -> bool:
        """``session/set_mode``: one of the modes the agent offered."""
        backend = self.backend
        if backend.conn is None or backend.session_id is None:
            return False
        try:
            await backend.conn.set_session_mode(session_id=backend.session_id, mode_id=mode_id)
        except (RequestError, ConnectionError) as exc:
            log.warning("acp: the agent refused its mode %r: %s", mode_id, exc)
            return False
        self.current_mode = mode_id
        self._tell({"agent_mode": mode_id})
        return True

    # -- permissions ---------------------------------------------------------------

    def answer_unasked(self, tool_call: Any) -> bool | None:
        """The answer Pneuma's permission mode gives without asking, else
        None: bypassPermissions allows all; acceptEdits allows an edit
        whose every file is inside the workspace (as for Codex:
        docs/backends.md, "Permission modes")."""
        mode = self.backend.permission_mode
        if mode == "bypassPermissions":
            return True
        if mode == "acceptEdits" and getattr(tool_call, "kind", None) == "edit":
            paths = [loc.path for loc in getattr(tool_call, "locations", None) or []]
            files = self.backend.files
            try:
                inside = bool(paths) and all(files.sandbox.resolve(files.relative(p)) for p in paths)
            except Exception:  # a refusal of any kind: ask the person
                inside = False
            return True if inside else None
        return None

    def permission_card(self, request_id: str, tool_call: Any, options: list[Any]) -> dict[str, Any]:
        known = self.backend.translator.tool_title(str(tool_call.tool_call_id))
        card = ToolCard(str(tool_call.tool_call_id), title=known or "")
        card.absorb(tool_call)
        tool_use = card.tool_use()
        choices = ", ".join(f"{o.name} ({o.kind})" for o in options)
        return {"request_id": request_id, "tool_name": tool_use["name"],
                "input": tool_use["input"], "tool_use_id": card.tool_call_id,
                "description": f"The agent offers: {choices}" if choices else None}
