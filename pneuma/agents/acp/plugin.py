"""The ACP backend as a plugin: ``--backend acp`` (the agent named by
``--agent-command``) and one ``acp:<preset>`` per known ACP agent
(``presets.py``). Offered through ``register_backends`` the way a
third-party backend package would be; the backend and the ``acp`` library
are imported only when a session chooses one."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

from pneuma.api import (
    BackendCheckContext,
    BackendSpec,
    BackendStatus,
    ToolError,
    hookimpl,
)

from .command import COMMAND_ENV, FIX, MISSING, agent_command

if TYPE_CHECKING:
    from pneuma.api import AgentBackend, AgentEventSink, BackendOptions

DESCRIPTION = ("Any agent speaking the Agent Client Protocol over stdio (--agent-command "
               '"CMD ARGS"): streamed replies and thinking, tool and permission cards, '
               "plans, cancel, resume where the agent loads sessions.")


def _acp(options: BackendOptions, sink: AgentEventSink) -> AgentBackend:
    from .backend import AcpBackend

    return AcpBackend(options, sink)


def _check(context: BackendCheckContext) -> BackendStatus:
    try:
        argv = agent_command(context.env, context.workspace)
    except ToolError as exc:
        return BackendStatus(usable=False, missing=exc.message, fix=FIX)
    if argv is None:
        return BackendStatus(usable=False, missing=MISSING, fix=FIX)
    found = shutil.which(argv[0], path=context.env.get("PATH"))
    if found is None:
        return BackendStatus(usable=False, missing=f"the agent's command `{argv[0]}`",
                             fix=f"install it, or give another with --agent-command "
                                 f"(now: {COMMAND_ENV} or the workspace's .pneuma/acp.json)")
    return BackendStatus(usable=True, found=" ".join([found, *argv[1:]]))


def _preset_spec(name: str, title: str) -> BackendSpec:
    def factory(options: BackendOptions, sink: AgentEventSink) -> AgentBackend:
        from .backend import AcpBackend

        return AcpBackend(options, sink, name=f"acp:{name}", preset=name)

    def check(context: BackendCheckContext) -> BackendStatus:
        from . import presets

        preset = next((p for p in presets.presets(context.env) if p.name == name), None)
        if preset is None:
            return BackendStatus(usable=False, missing=f"the ACP preset {name!r}")
        return preset.status()

    return BackendSpec(name=f"acp:{name}", description=f"{title}, over the Agent Client Protocol.",
                       factory=factory, check=check, routes=_routes, browser_module=PAGE_MODULE)


def _preset_specs() -> list[BackendSpec]:
    try:
        from . import presets
    except ImportError:
        return []
    # Titles only: whether each is installed is the check's question.
    return [_preset_spec(p.name, p.title) for p in presets.presets({"PATH": ""})]


def _routes(pneuma: Any) -> list[Any]:
    from .routes import acp_routes

    return acp_routes(pneuma)


PAGE_MODULE = "/backends/acp/agent-modes.js"  # routes.URL, without importing aiohttp here
ACP = BackendSpec(name="acp", description=DESCRIPTION, factory=_acp, check=_check,
                  routes=_routes, browser_module=PAGE_MODULE)


@hookimpl
def register_backends() -> list[BackendSpec]:
    return [ACP, *_preset_specs()]
