"""Session, config, viewer actions, scaffolding and the static shell.

Failures are raised as ``ToolError`` and answered by the error middleware
(docs/errors.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any

from aiohttp import web
from wcmatch import glob as wcglob

from pneuma.core.channels import (
    BrowserRequestTimeout,
    NoBrowserConnected,
    no_browser_error,
)
from pneuma.core.errors import ToolError
from pneuma.core.file_filter import AGENT_INSTRUCTION_FILES
from pneuma.core.files import write_in_workspace
from pneuma.core.state_files import write_state_bytes
from pneuma.host.paths import web_dir
from pneuma.server.config import CONFIG, SANDBOX, SELF_WRITES, SESSION
from pneuma.server.early_server import config_answer
from pneuma.server.errors import json_text
from pneuma.server.routes_files import decode_content, read_json_body

PROTECTED_PATHS = (".claude/**", ".claude", ".pneuma/**", ".pneuma", *AGENT_INSTRUCTION_FILES, ".gitignore",
                   ".mcp.json", ".git/**")
GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE

_PARAM_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


async def get_session(request: web.Request) -> web.Response:
    return web.json_response(request.app[SESSION].session_info())


async def get_config(request: web.Request) -> web.Response:
    from pneuma.workspace.params import redact_params

    config = request.app[CONFIG]
    return web.json_response(config_answer(
        mode_json=config.mode.manifest.to_json(),
        mode_name=config.mode.name,
        params=redact_params(config.mode, config.params),
        workspace=config.workspace,
        backend_name=config.backend.name if config.backend else "none",
        action_timeout=config.action_timeout,
        backend_module=config.backend.browser_module if config.backend else None,
    ))


def _check_action_params(action: Any, params: dict[str, Any]) -> str | None:
    for name, spec in action.params.items():
        if name not in params:
            if spec.required:
                return f"param '{name}' is required"
            continue
        value = params[name]
        expected = _PARAM_TYPES[spec.type]
        if isinstance(value, bool) and spec.type == "number":
            return f"param '{name}' must be a number"
        if not isinstance(value, expected):
            return f"param '{name}' must be of type {spec.type}"
    unknown = sorted(set(params) - set(action.params))
    if unknown:
        return f"unknown param(s) {', '.join(unknown)}; '{action.id}' takes " + (
            ", ".join(action.params) or "none")
    return None


def _failed_action(error: ToolError) -> web.Response:
    """A viewer action or scaffold the host could not carry out, in the one
    error shape. It also carries the action answer's ``success`` and
    ``message``: agents read those (the skills and CLAUDE.md promise
    ``{success, message, data}``), so a failure must show there too."""
    body = {**error.to_dict(), "success": False, "message": error.message}
    return web.json_response(body, status=error.http_status,
                             dumps=json_text)



async def viewer_action(request: web.Request) -> web.Response:
    config = request.app[CONFIG]
    session = request.app[SESSION]
    body = await read_json_body(request)
    action_id = body.get("actionId")
    if not isinstance(action_id, str) or not action_id:
        hint = " (the key is 'actionId', not 'action')" if "action" in body else ""
        raise ToolError("E_BAD_ARGS", f"'actionId' is required{hint}",
                        details={"field": "actionId"},
                        hint='send {"actionId": "<id>", "params": {...}}')
    params = body.get("params") or {}
    if not isinstance(params, dict):
        raise ToolError("E_BAD_ARGS", "'params' must be an object", details={"field": "params"})
    action = config.mode.manifest.action(action_id)
    if action is None:
        known = [a.id for a in config.mode.manifest.viewer_api.actions]
        raise ToolError("E_BAD_ARGS",
                        f"the {config.mode.name} viewer has no action '{action_id}' "
                        f"(its actions: {', '.join(known) or 'none'})",
                        details={"field": "actionId", "reason": "unknown_action",
                                 "actions": known})
    problem = _check_action_params(action, params)
    if problem:
        raise ToolError("E_BAD_ARGS", f"{action_id}: {problem}",
                        details={"field": "params", "reason": "bad_params"},
                        hint="the Viewer API section of CLAUDE.md lists each action's params")
    timeout = config.action_timeout
    if "timeout" in request.query:
        try:
            timeout = max(0.1, min(float(request.query["timeout"]), 600.0))
        except ValueError:
            raise ToolError("E_BAD_ARGS", "'timeout' must be a number of seconds",
                            details={"field": "timeout"}) from None
    try:
        result = await session.viewer_actions.request(action_id, params, timeout)
    except NoBrowserConnected as exc:
        return _failed_action(no_browser_error(exc))
    except BrowserRequestTimeout as exc:
        return _failed_action(ToolError(
            "E_TIMEOUT", f"'{action_id}' timed out: {exc}",
            details={"actionId": action_id, "timeout": timeout},
            hint="The page may be busy or in the background; try again, or pass a "
                 "longer ?timeout=S."))
    return web.json_response(result)


def _is_protected(rel: str) -> bool:
    return wcglob.globmatch(rel, list(PROTECTED_PATHS), flags=GLOB_FLAGS)


async def scaffold(request: web.Request) -> web.Response:
    """Start the workspace over: clear files matching globs, write new ones,
    but only after the person confirms in the browser."""
    config = request.app[CONFIG]
    session = request.app[SESSION]
    sandbox = request.app[SANDBOX]
    body = await read_json_body(request)
    clear = body.get("clear", [])
    files = body.get("files", [])
    if not isinstance(clear, list) or not all(isinstance(g, str) for g in clear):
        raise ToolError("E_BAD_ARGS", "'clear' must be a list of glob strings",
                        details={"field": "clear"})
    if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
        raise ToolError("E_BAD_ARGS", "'files' must be a list of {path, content}",
                        details={"field": "files"})
    writes: list[tuple[str, Path, bytes]] = []
    for item in files:
        rel = sandbox.normalize(item.get("path"))
        if _is_protected(rel):
            raise ToolError("E_DENY_PATH", f"{rel} is protected and cannot be scaffolded",
                            details={"path": rel})
        writes.append((rel, sandbox.resolve(rel), decode_content(item.get("content"))))
    scaffold_spec = config.mode.manifest.viewer_api.scaffold
    allowed_clear = scaffold_spec.clear_patterns if scaffold_spec else []
    doomed: list[str] = []
    if clear:
        for root, dirs, names in os.walk(sandbox.root):
            dirs[:] = [d for d in dirs if sandbox.is_allowed(
                Path(root, d).relative_to(sandbox.root).as_posix())]
            for name in names:
                rel = Path(root, name).relative_to(sandbox.root).as_posix()
                if _is_protected(rel) or not sandbox.is_allowed(rel):
                    continue
                if wcglob.globmatch(rel, clear, flags=GLOB_FLAGS):
                    doomed.append(rel)
    outside = [g for g in clear if allowed_clear and g not in allowed_clear]
    summary = (f"Replace the workspace content: delete {len(doomed)} file(s) and write "
               f"{len(writes)} file(s).")
    try:
        approved, message = await session.confirmations.request(
            "scaffold",
            summary,
            {"delete": sorted(doomed), "write": [w[0] for w in writes],
             "unusualPatterns": outside},
            timeout=config.action_timeout * 5,
        )
    except NoBrowserConnected as exc:
        return _failed_action(no_browser_error(exc))
    except BrowserRequestTimeout as exc:
        return _failed_action(ToolError(
            "E_TIMEOUT", f"no confirmation: {exc}",
            hint="The person has not answered the dialog in the Pneuma page; ask them, "
                 "then scaffold again."))
    if not approved:
        # The person said no: the same refusal a rejected write dry run gets.
        return _failed_action(ToolError(
            "E_POLICY_VIOLATION",
            "The person declined the scaffold" + (f": {message}" if message else ""),
            details={"decision": "declined", **({"message": message} if message else {})},
            hint="Do not scaffold again unasked; ask the person what they want instead."))
    self_writes = request.app[SELF_WRITES]
    # By fd, like every file route: a symlink swapped since the dry run
    # cannot move a delete or a write outside the workspace.
    for rel in doomed:
        self_writes.mark(rel)
        with contextlib.suppress(FileNotFoundError):
            sandbox.unlink(rel)
    for rel, _path, data in writes:
        self_writes.mark(rel)
        write_in_workspace(sandbox, rel, data)
    return web.json_response({"success": True, "deleted": sorted(doomed),
                              "written": [w[0] for w in writes]})


_CAPTURE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$")


async def save_capture(request: web.Request) -> web.Response:
    """Store a PNG a viewer captured under W/.pneuma/captures/ (outside the
    file sandbox on purpose: the agent reads it, the viewer never lists it)."""
    config = request.app[CONFIG]
    body = await read_json_body(request)
    name = body.get("name") or "capture"
    if not isinstance(name, str) or not _CAPTURE_NAME.match(name):
        raise ToolError("E_BAD_ARGS", "'name' must be a plain file name",
                        details={"field": "name"})
    data = body.get("data")
    if not isinstance(data, str) or not data.startswith("data:image/png;base64,"):
        raise ToolError("E_BAD_ARGS", "'data' must be a data:image/png;base64 URL",
                        details={"field": "data"})
    png = decode_content(data)
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        raise ToolError("E_BAD_ARGS", "'data' is not a PNG image", details={"field": "data"})
    stem = name.removesuffix(".png")
    stamp = time.strftime("%Y%m%dT%H%M%S")
    rel = f".pneuma/captures/{stem}-{stamp}-{secrets.token_hex(3)}.png"
    write_state_bytes(config.workspace / rel, png, None)  # never through a link
    return web.json_response({"success": True, "path": rel, "size": len(png)})


async def shell_index(request: web.Request) -> web.StreamResponse:
    index = web_dir() / "index.html"
    return web.FileResponse(index, headers={"Cache-Control": "no-cache"})


def _static_handler(root_of: Any):
    async def handler(request: web.Request) -> web.StreamResponse:
        mode = request.match_info.get("mode")
        if mode is not None and mode != request.app[CONFIG].mode.name:
            raise ToolError("E_NOT_FOUND", f"mode {mode!r} is not served here",
                            details={"mode": mode})
        root: Path = root_of(request).resolve()
        rel = request.match_info["path"]
        target = (root / rel).resolve()
        if root not in target.parents or not target.is_file():
            raise ToolError("E_NOT_FOUND", f"no static file {rel}", details={"path": rel})
        return web.FileResponse(target, headers={"Cache-Control": "no-cache"})

    return handler


def setup(app: web.Application) -> None:
    app.router.add_get("/", shell_index)
    app.router.add_get("/api/session", get_session)
    app.router.add_get("/api/config", get_config)
    app.router.add_post("/api/viewer/action", viewer_action)
    app.router.add_post("/api/workspace/scaffold", scaffold)
    app.router.add_post("/api/captures", save_capture)
    app.router.add_get("/static/{path:.+}", _static_handler(lambda r: web_dir()))
    app.router.add_get(
        "/modes/{mode}/{path:.+}",
        _static_handler(lambda r: r.app[CONFIG].mode.static_dir),
    )
