"""A mode, a workspace and its tools, for a test: the real parts, not stand-ins.

``make_workspace`` seeds a directory the way ``pneuma init`` does;
``tool_context`` is the very ``ToolContext`` a tool handler gets from
``pneuma tool``, the MCP server and ``POST /api/tools/<name>`` (built by
the same ``ToolRuntime``); ``call_tool`` goes through that runtime, schema
checks and error model included.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pneuma.host.modes import LoadedMode
from pneuma.tools.context import ToolContext
from pneuma.tools.runtime import ToolRuntime

if TYPE_CHECKING:
    from pneuma.workspace.skill import InstallResult

ModeLike = str | LoadedMode
"""A mode's name (as ``pneuma run --mode`` takes it) or the loaded mode."""


class ServerAddress(Protocol):
    """Where a running server is (a ``RunningServer`` is one)."""

    url: str
    token: str


def load_mode(mode: ModeLike) -> LoadedMode:
    """The installed mode called ``mode``, loaded and validated as ``pneuma
    run`` loads it; raises ``LookupError`` naming the modes that exist (and
    the plugins that failed to load) when there is none."""
    if isinstance(mode, LoadedMode):
        return mode
    from pneuma.host.registry import get_mode

    return get_mode(mode)


def make_workspace(mode: ModeLike, path: Path | str,
                   params: Mapping[str, Any] | None = None) -> Path:
    """Create (or reuse) the workspace ``path`` as ``pneuma init`` does: the
    mode's seed files are copied when it holds no content yet, and
    ``params`` (checked against the manifest's init params, defaults filled
    in) are stored in ``.pneuma/config.toml``. Returns the resolved path."""
    from pneuma.workspace.params import init_workspace

    init_workspace(load_mode(mode), Path(path), dict(params or {}))
    return Path(path).resolve()


def stored_params(mode: ModeLike, workspace: Path | str) -> dict[str, Any]:
    """The workspace's params as ``pneuma run`` would settle them (stored
    values, then the manifest's defaults); nothing is written."""
    from pneuma.workspace.params import resolve_params

    return resolve_params(load_mode(mode), Path(workspace), save=False)


def _runtime(mode: ModeLike, workspace: Path | str, params: Mapping[str, Any] | None,
             policies: Mapping[str, Any] | None,
             server: ServerAddress | None) -> ToolRuntime:
    # Never the server named by PNEUMA_API: a test run inside a live session
    # (an agent running the mode's tests) must not drive that session.
    return ToolRuntime(
        load_mode(mode), workspace,
        params=dict(params) if params is not None else None,
        policy_overrides=dict(policies) if policies is not None else None,
        server_url=server.url if server is not None else "",
        server_token=server.token if server is not None else "",
    )


def tool_context(mode: ModeLike, workspace: Path | str, *,
                 params: Mapping[str, Any] | None = None,
                 policies: Mapping[str, Any] | None = None,
                 server: ServerAddress | None = None) -> ToolContext:
    """The ``ToolContext`` a handler of ``mode`` gets in ``workspace``: the
    real sandbox, tool state and snapshot store under ``.pneuma/``.

    ``params`` replaces the workspace's stored params (default: what
    ``.pneuma/config.toml`` holds, with the manifest's defaults);
    ``policies`` is merged over the mode's effective policies (for example
    ``{"tools": {"enable": ["publish"]}}``); ``server`` (the ``RunningServer``
    of ``serve``) sets ``server_url`` and ``server_token``.
    """
    context = _runtime(mode, workspace, params, policies, server).context()
    if server is None:
        context = dataclasses.replace(context, server_url=None, server_token=None)
    return context


def call_tool(mode: ModeLike, workspace: Path | str, name: str, args: Any, *,
              params: Mapping[str, Any] | None = None,
              policies: Mapping[str, Any] | None = None,
              server: ServerAddress | None = None) -> dict[str, Any]:
    """Call tool ``name`` as the agent does: the tool must be enabled, the
    arguments are checked against its ``inputSchema`` and the answer
    against its ``outputSchema``. Returns the answer, or the error the agent
    would read (``{"error": {"code": "E_…", "message": …}}``); never raises.
    ``params``, ``policies`` and ``server`` as for ``tool_context``."""
    return _runtime(mode, workspace, params, policies, server).call(name, args)


def install_skill(mode: ModeLike, workspace: Path | str,
                  params: Mapping[str, Any] | None = None) -> InstallResult:
    """Install the mode's skill, ``CLAUDE.md`` sections, slash commands and
    MCP servers into ``workspace``, as ``pneuma run`` does at start.
    ``params`` default to the workspace's stored ones. The result has
    ``changed`` (False when everything was up to date), ``changes`` (each
    with ``path`` and ``reason``) and ``warnings``."""
    from pneuma.workspace.skill import install_skill as install

    loaded = load_mode(mode)
    values = dict(params) if params is not None else stored_params(loaded, workspace)
    return install(loaded, Path(workspace), values)
