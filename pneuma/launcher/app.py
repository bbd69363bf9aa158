"""The launcher's aiohttp application: its page and JSON routes.

Guarded like every Pneuma server (pneuma.server.security: its own token,
this server's Host and Origin only) and answering failures in the one
error shape (pneuma.server.errors). The routes:

    GET  /                         the page (pneuma/web/launcher.html)
    GET  /static/…                 the shell's static files
    GET  /api/launcher             version, where the list lives, the agent backends and their state
    GET  /api/modes                the gallery: installed modes, plugins that failed
    GET  /api/workspaces?q=…       recent workspaces with their live details
    POST /api/workspaces/open      {path[, mode]}: serve an existing workspace
    POST /api/workspaces/new       {mode, path, params[, backend][, confirm]}: make one and serve it
    POST /api/workspaces/forget    {path}: drop it from the list (files untouched)
    GET  /api/sessions             the sessions this process serves
    POST /api/sessions/stop        {path}: stop one (agent stopped, state saved)
    GET|POST /api/modes/install    the "Add a mode" box (pneuma/launcher/mode_install.py)
    GET /api/modes/checks, POST /api/modes/{name}/check  a mode's check report on its card
                                   (pneuma/launcher/mode_check_routes.py)

An open or new answers ``{"url", "servedBy": "launcher"|"other", …}``: the
session's page with its own token (``other``: the URL of the `pneuma run`
already serving that folder). Which folders are accepted, and when a new
workspace needs the person's confirmation: pneuma.launcher.folders and
pneuma.launcher.plan (docs/launcher.md, "Open and new").
"""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma import __version__
from pneuma.core.errors import ToolError
from pneuma.host.manifest import InitParam
from pneuma.host.modes import LoadedMode
from pneuma.host.paths import web_dir
from pneuma.host.registry import load_modes
from pneuma.launcher.details import served_elsewhere, workspace_details
from pneuma.launcher.folders import (
    checked_path_text,
    folder_from_request,
    is_workspace,
    refuse_foreign_folder,
)
from pneuma.launcher.hosting import WorkspaceHost
from pneuma.launcher.mode_check_routes import add_routes as add_mode_check_routes
from pneuma.launcher.mode_install import add_routes as add_mode_install_routes
from pneuma.launcher.plan import plan_writes
from pneuma.mode_sources import installed_mode
from pneuma.server import csp
from pneuma.server.errors import error_middleware, json_text
from pneuma.server.preferences import add_routes as add_preference_routes
from pneuma.server.security import allowed_hosts, make_security_middleware
from pneuma.startup.backends import backend_states, check_context, installed_backends
from pneuma.startup.recent import RecentWorkspaces, UnusableList
from pneuma.startup.start_checks import (
    StartProblem,
    agent_environment,
    backend_instruction_files,
    mode_allows_backend,
)
from pneuma.startup.workspace_lock import held_flocks
from pneuma.workspace.claude_md import MarkerError
from pneuma.workspace.mode_switch import workspace_mode
from pneuma.workspace.params import coerce_param
from pneuma.workspace.skill import SkillInstallError

WORKSPACES_FOLDER = "Pneuma"  # under the home folder: where new workspaces are suggested


@dataclass
class LauncherState:
    token: str
    host: str
    port: int  # set once bound
    recent: RecentWorkspaces
    hosting: WorkspaceHost


LAUNCHER = web.AppKey("launcher", LauncherState)


# Each handler is routed where it is defined; the order of definition is the
# order of registration.
ROUTES = web.RouteTableDef()


def create_launcher_app(state: LauncherState) -> web.Application:
    def hosts() -> set[str]:
        return allowed_hosts(state.host, state.port)

    app = web.Application(middlewares=[make_security_middleware(state.token, hosts),
                                       error_middleware], client_max_size=1024 * 1024)
    app[LAUNCHER] = state
    csp.setup(app)
    app.router.add_routes(ROUTES)
    add_preference_routes(app, None)  # the language chosen here follows into workspaces
    add_mode_install_routes(app)  # the "Add a mode" box (pneuma/launcher/mode_install.py)
    add_mode_check_routes(app)  # a mode's check report on its card (pneuma/launcher/mode_check_routes.py)
    return app


def _json(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=json_text)


@ROUTES.get("/")
async def launcher_page(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(web_dir() / "launcher.html", headers={"Cache-Control": "no-cache"})


@ROUTES.get("/static/{path:.+}")
async def static_file(request: web.Request) -> web.StreamResponse:
    root = web_dir().resolve()
    rel = request.match_info["path"]
    try:
        target = (root / rel).resolve()
        found = root in target.parents and target.is_file()
    except (OSError, ValueError):  # a NUL byte, a name longer than Linux allows
        found = False
    if not found:
        raise ToolError("E_NOT_FOUND", f"no static file {rel}", details={"path": rel})
    return web.FileResponse(target, headers={"Cache-Control": "no-cache"})


@ROUTES.get("/api/launcher")
async def launcher_info(request: web.Request) -> web.Response:
    state = request.app[LAUNCHER]
    # A check may start a process (`claude --version`): not in the event loop.
    defaults = state.hosting.defaults
    backends = await asyncio.get_running_loop().run_in_executor(
        None, backend_states_json, defaults.claude_bin, defaults.agent_env)
    return _json({"version": __version__, "listFile": str(state.recent.path),
                  "backend": state.hosting.defaults.backend, "backends": backends,
                  "workspacesFolder": str(Path.home() / WORKSPACES_FOLDER)})


def backend_states_json(claude_bin: str | None,
                        agent_env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Every installed backend and whether it works now (`pneuma backends
    --json`), with the environment the workspaces' agents would get."""
    context = check_context(agent_environment(agent_env), claude_bin=claude_bin)
    return [state.to_json() for state in backend_states(context)]


def supported_backends(mode: LoadedMode, installed: list[str] | None = None) -> list[str]:
    """The installed backends this mode allows (its ``supportedBackends``)."""
    if installed is None:
        installed = [spec.name for spec, _plugin in installed_backends()]
    return [name for name in installed if mode_allows_backend(mode, name)]


# --- the gallery ---


ICON_COLOR = "#7b6cf6"  # currentColor in an icon: the accent, readable on light and dark


def icon_url(svg: str | None) -> str | None:
    """The manifest's inline SVG as a data: URL for an <img>: an image
    cannot run script or reach the page, live SVG markup could. Icons
    drawn in ``currentColor`` get the accent (an image has no page colour)."""
    if not svg or not svg.lstrip().startswith("<"):
        return None
    # As a document of its own an SVG needs its namespace (inline SVG does not).
    namespace = "" if "xmlns=" in svg.split(">", 1)[0] else ' xmlns="http://www.w3.org/2000/svg"'
    svg = re.sub(r"<svg\b", f'<svg{namespace} color="{ICON_COLOR}"', svg, count=1)
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def mode_source(mode: LoadedMode) -> dict[str, Any]:
    found = installed_mode(mode)  # where it came from (pneuma.mode_sources)
    return {"builtIn": mode.built_in, "distribution": mode.distribution,
            "version": mode.distribution_version, "plugin": mode.plugin_name,
            "from": found.source, "commit": found.commit, "editable": found.editable}


def param_json(param: InitParam) -> dict[str, Any]:
    return {"name": param.name, "label": param.label, "description": param.description,
            "type": param.type, "options": list(param.options),
            "default": param.default_value, "sensitive": param.sensitive,
            "required": param.default_value is None}


def suggested_folder(mode_name: str, home: Path | None = None) -> str:
    """``~/Pneuma/<mode>``, or ``<mode>-2``, ``-3``… when that exists
    (written with ``~``: shorter to read, and the routes expand it)."""
    base = Path(WORKSPACES_FOLDER)
    home = home or Path.home()
    candidate = base / mode_name
    n = 2
    while (home / candidate).exists() and n < 1000:
        candidate = base / f"{mode_name}-{n}"
        n += 1
    return f"~/{candidate.as_posix()}"


@ROUTES.get("/api/modes")
async def gallery(request: web.Request) -> web.Response:
    # The first call imports every plugin: not in the event loop.
    registry = await asyncio.get_running_loop().run_in_executor(None, load_modes)
    modes = []
    installed = [spec.name for spec, _plugin in installed_backends()]
    for mode in sorted(registry.modes.values(), key=lambda m: m.name):
        manifest = mode.manifest
        if manifest.hidden:
            continue
        modes.append({
            "name": mode.name,
            "displayName": manifest.display_name,
            "description": manifest.description,
            "icon": icon_url(manifest.icon),
            "version": manifest.version,
            "source": mode_source(mode),
            "params": [param_json(p) for p in manifest.init.params],
            "suggestedFolder": suggested_folder(mode.name),
            "supportedBackends": supported_backends(mode, installed),
        })
    errors = [{"plugin": e.plugin, "distribution": e.distribution, "error": e.error}
              for e in registry.errors]
    return _json({"modes": modes, "errors": errors})


# --- recent workspaces ---


def _served(state: LauncherState, path: Path,
            held: set[tuple[int, int, int]] | None = None) -> dict[str, Any] | None:
    hosted = state.hosting.get(path)
    if hosted is not None:
        return {"by": "launcher", "url": hosted.url}
    other = served_elsewhere(path, held)
    if other is not None:
        return {"by": "other", **other}
    return None


def _listing(state: LauncherState, query: str) -> list[dict[str, Any]]:
    names = {name: mode.manifest.display_name for name, mode in load_modes().modes.items()}
    words = query.casefold().split()
    rows = []
    held = held_flocks()  # once for the whole list
    for entry in state.recent.entries():
        row = {**entry.to_json(), **workspace_details(entry.path, entry.mode)}
        row["served"] = _served(state, Path(entry.path), held) if not row["missing"] else None
        if words:
            display = names.get(row["mode"], "")
            haystack = " ".join([
                entry.path, row["mode"],
                *(display.values() if isinstance(display, dict) else [display]),
                (row["lastMessage"] or {}).get("text", "")]).casefold()
            if not all(word in haystack for word in words):
                continue
        rows.append(row)
    return rows


def _list_refused(exc: UnusableList) -> ToolError:
    return ToolError("E_CONFLICT", str(exc), details={"reason": "list_file", "file": exc.path})


@ROUTES.get("/api/workspaces")
async def recent_workspaces(request: web.Request) -> web.Response:
    state = request.app[LAUNCHER]
    query = request.query.get("q", "")[:200]
    try:
        rows = await asyncio.get_running_loop().run_in_executor(None, _listing, state, query)
    except UnusableList as exc:
        raise _list_refused(exc) from None
    return _json({"workspaces": rows, "query": query})


# --- opening, creating, forgetting ---


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise ToolError("E_BAD_ARGS", "the body must be a JSON object",
                        details={"field": "(root)"}) from None
    if not isinstance(body, dict):
        raise ToolError("E_BAD_ARGS", "the body must be a JSON object", details={"field": "(root)"})
    return body


def _folder(body: dict[str, Any]) -> Path:
    return folder_from_request(body.get("path"))


def _mode(name: Any) -> LoadedMode:
    modes = load_modes().modes
    if not isinstance(name, str) or name not in modes:
        known = ", ".join(sorted(modes)) or "none"
        raise ToolError("E_NOT_FOUND", f"no mode named {name!r} is installed (installed: {known})",
                        details={"field": "mode", "reason": "unknown_mode"})
    return modes[name]


def check_params(mode: LoadedMode, given: Any) -> dict[str, Any]:
    """The init params of a new workspace, checked against the manifest:
    known names, the declared type, a select's options, a value for every
    param without a default (an empty text counts as not given)."""
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise ToolError("E_BAD_ARGS", "'params' must be an object", details={"field": "params"})
    declared = {p.name: p for p in mode.manifest.init.params}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise ToolError("E_BAD_ARGS",
                        f"unknown param {', '.join(unknown)} for the {mode.name} mode "
                        f"(its params: {', '.join(declared) or 'none'})",
                        details={"field": f"params.{unknown[0]}", "reason": "unknown_param"})
    values: dict[str, Any] = {}
    for name, param in declared.items():
        value = given.get(name)
        if isinstance(value, str) and not value.strip() and param.type != "string":
            value = None
        if value is None or value == "":
            if param.default_value is None:
                raise ToolError("E_BAD_ARGS", f"'{name}' is required",
                                details={"field": f"params.{name}", "reason": "required"})
            value = param.default_value
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ToolError("E_BAD_ARGS", f"'{name}' must be a {param.type}",
                            details={"field": f"params.{name}", "reason": "type"})
        try:
            values[name] = coerce_param(param, value)
        except ValueError as exc:
            raise ToolError("E_BAD_ARGS", str(exc),
                            details={"field": f"params.{name}", "reason": "type"}) from None
    return values


def _elsewhere_answer(path: Path) -> dict[str, Any] | None:
    other = served_elsewhere(path)
    if other is None:
        return None
    if not other["url"]:
        raise ToolError("E_CONFLICT", f"{path} is being started by another `pneuma run` "
                        f"(pid {other['pid']}); try again in a moment",
                        details={"reason": "served_elsewhere", "pid": other["pid"]})
    return {"url": other["url"], "servedBy": "other", "path": str(path), "pid": other["pid"]}


async def _serve(state: LauncherState, path: Path, mode: LoadedMode,
                 params: dict[str, Any] | None, backend: str | None = None) -> web.Response:
    elsewhere = _elsewhere_answer(path) if state.hosting.get(path) is None else None
    if elsewhere is not None:
        return _json(elsewhere)
    try:
        hosted = await state.hosting.open(path, mode.name, params, backend)
    except StartProblem as exc:
        raise ToolError("E_CONFLICT", exc.message, details={"reason": "start_refused"},
                        hint="`pneuma run` would refuse this folder for the same reason") from None
    return _json({**hosted.to_json(), "servedBy": "launcher"})


@ROUTES.post("/api/workspaces/open")
async def open_workspace(request: web.Request) -> web.Response:
    state = request.app[LAUNCHER]
    body = await _body(request)
    path = _folder(body)
    if not path.is_dir():
        raise ToolError("E_NOT_FOUND", f"{path} does not exist (or is not a folder)",
                        details={"field": "path", "reason": "missing"},
                        hint="forget it, or start a new workspace there")
    refuse_foreign_folder(path)
    # Open serves a workspace, never makes one: a folder without Pneuma's
    # state is "new", where the person sees what will be written first.
    if not is_workspace(path):
        raise ToolError("E_BAD_ARGS", f"{path} is not a Pneuma workspace yet; start a new "
                        "workspace there from a mode", details={"field": "path",
                                                                "reason": "not_a_workspace"})
    name = body.get("mode") or workspace_mode(path)
    return await _serve(state, path, _mode(name), None)


@ROUTES.post("/api/workspaces/new")
async def new_workspace(request: web.Request) -> web.Response:
    state = request.app[LAUNCHER]
    body = await _body(request)
    mode = _mode(body.get("mode"))
    params = check_params(mode, body.get("params"))
    backend = _backend(mode, body.get("backend"))
    path = _folder(body)
    refuse_foreign_folder(path)
    if path.exists() and not path.is_dir():
        raise ToolError("E_CONFLICT", f"{path} is a file, not a folder",
                        details={"field": "path", "reason": "not_a_folder"})
    if path.is_dir() and any(path.iterdir()):
        current = workspace_mode(path) if is_workspace(path) else None
        if current is not None and current != mode.name:
            raise ToolError("E_CONFLICT", f"{path} is a {current} workspace; choose an empty or "
                            f"new folder for a {mode.name} workspace",
                            details={"field": "path", "reason": "not_empty", "mode": current})
        if current is None:
            await _confirmed(state, path, mode, params, backend, body.get("confirm"))
    return await _serve(state, path, mode, params, backend)


async def _confirmed(state: LauncherState, path: Path, mode: LoadedMode,
                     params: dict[str, Any], backend: str | None, confirm: Any) -> None:
    """A folder with the person's files becomes a workspace only once they
    have seen what will be written there and said yes: ``confirm`` must be
    the digest of that list as it stands now (docs/launcher.md)."""
    instruction_files = backend_instruction_files(backend or state.hosting.defaults.backend)
    try:
        plan = await asyncio.get_running_loop().run_in_executor(
            None, plan_writes, mode, path, params, instruction_files)
    except (MarkerError, SkillInstallError, OSError, UnicodeDecodeError) as exc:
        raise ToolError("E_CONFLICT", f"{path} cannot be made a {mode.name} workspace: {exc}",
                        details={"field": "path", "reason": "cannot_install"}) from None
    if confirm == plan.digest:
        return
    listed = ", ".join(w.path for w in plan.writes)
    raise ToolError("E_CONFLICT", f"{path} is not empty; making it a {mode.name} workspace "
                    f"writes {listed}. Confirm to go ahead",
                    details={"field": "path", "reason": "needs_confirmation",
                             "writes": plan.to_json(), "confirm": plan.digest})


def _backend(mode: LoadedMode, name: Any) -> str | None:
    """The backend the dialog chose (None: the launcher's ``--backend``);
    one the mode does not allow is refused here, before any folder is made."""
    if name is None:
        return None
    allowed = supported_backends(mode)
    if not isinstance(name, str) or name not in allowed:
        raise ToolError("E_BAD_ARGS", f"the {mode.name} mode cannot run with the backend "
                        f"{name!r} (it can with: {', '.join(allowed)})",
                        details={"field": "backend", "allowed": allowed})
    return name


async def _path_field(request: web.Request, what: str) -> str:
    """The body's ``path``: a non-empty text, else E_BAD_ARGS saying it
    must be ``what`` ("a listed folder")."""
    raw = (await _body(request)).get("path")
    if not isinstance(raw, str) or not raw:
        raise ToolError("E_BAD_ARGS", f"'path' must be {what}", details={"field": "path"})
    return raw


@ROUTES.post("/api/workspaces/from-share")
async def workspace_from_share(request: web.Request) -> web.Response:
    """A shared file dropped on the page, made a new workspace and served
    (pneuma/launcher/shared_file.py)."""
    from pneuma.launcher.shared_file import dropped_share_folder, read_dropped_share
    from pneuma.share.open import open_share_data

    state = request.app[LAUNCHER]
    data, name = await read_dropped_share(request)
    mode = _mode(data.mode)
    path = dropped_share_folder(request.query.get("path"), data, name)
    refuse_foreign_folder(path)
    backend = state.hosting.defaults.backend
    await asyncio.get_running_loop().run_in_executor(
        None, lambda: open_share_data(data, name, path, None, backend=backend))
    return await _serve(state, path, mode, None)


@ROUTES.post("/api/workspaces/forget")
async def forget_workspace(request: web.Request) -> web.Response:
    state = request.app[LAUNCHER]
    raw = await _path_field(request, "a listed folder")
    try:
        forgotten = await asyncio.get_running_loop().run_in_executor(
            None, state.recent.forget, raw)
    except UnusableList as exc:
        raise _list_refused(exc) from None
    if not forgotten:
        raise ToolError("E_NOT_FOUND", f"{raw} is not in the list", details={"field": "path"})
    return _json({"forgotten": raw})


@ROUTES.get("/api/sessions")
async def running_sessions(request: web.Request) -> web.Response:
    state = request.app[LAUNCHER]
    return _json({"sessions": [s.to_json() for s in state.hosting.sessions()]})


@ROUTES.post("/api/sessions/stop")
async def stop_session(request: web.Request) -> web.Response:
    state = request.app[LAUNCHER]
    raw = await _path_field(request, "a served folder")
    checked_path_text(raw)
    if not await state.hosting.stop(Path(raw)):
        raise ToolError("E_NOT_FOUND", f"{raw} is not served by this launcher",
                        details={"field": "path", "reason": "not_served"})
    return _json({"stopped": raw})
