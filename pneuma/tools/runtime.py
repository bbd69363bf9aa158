"""Calling a mode's tools: schemas enforced, errors unified, state on disk.

``call_tool()`` is what ``pneuma tool``, ``pneuma mcp`` and ``POST
/api/tools/<name>`` all end in (through ``ToolRuntime``): it finds the tool
in the mode's manifest, refuses it when disabled (``E_TOOL_DISABLED``),
validates the arguments against the tool's ``inputSchema`` (``E_BAD_ARGS``
naming the field), calls the handler, and validates its answer against the
``outputSchema`` (a mismatch is an ``E_INTERNAL`` bug). It never raises: the
result is the response, or ``{"error": {...}}``.
"""

from __future__ import annotations

import asyncio
import copy
import importlib
import inspect
import json
import logging
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.core.sandbox import Sandbox
from pneuma.host.tool_catalogue import host_tool_handler
from pneuma.tools.context import Interaction, ToolContext
from pneuma.tools.policies import (
    effective_policies,
    enabled_tool_names,
    forbidden_patterns,
)
from pneuma.tools.snapshots import DEFAULT_RETENTION, SnapshotStore
from pneuma.tools.state import ToolState

log = logging.getLogger("pneuma.tools")

Handler = Callable[[ToolContext, dict[str, Any]], "dict[str, Any] | Awaitable[dict[str, Any]]"]

_handlers: dict[str, Handler] = {}
_validators: dict[int, Any] = {}


def state_dir(workspace: Path, mode_name: str) -> Path:
    return Path(workspace) / ".pneuma" / "tools" / mode_name


def snapshot_dir(workspace: Path, mode_name: str) -> Path:
    return Path(workspace) / ".pneuma" / "snapshots" / mode_name


def _load_mode(mode: Any) -> Any:
    if isinstance(mode, str):
        from pneuma.host.registry import get_mode

        return get_mode(mode)
    return mode


def _load_params(mode: Any, workspace: Path) -> dict[str, Any]:
    from pneuma.workspace.params import WorkspaceError, resolve_params

    try:
        return resolve_params(mode, workspace, save=False)
    except WorkspaceError:
        return {}


class ToolRuntime:
    """One mode's tools in one workspace. Cheap to create; holds no state of
    its own beyond the options, so any number of them (in any number of
    processes) can serve the same workspace."""

    def __init__(
        self,
        mode: Any,
        workspace: Path | str,
        *,
        policies_file: Path | str | None = None,
        enable_exec: bool = False,
        enable_browser: bool = False,
        server_url: str | None = None,
        server_token: str | None = None,
        interact: Interaction | None = None,
        params: dict[str, Any] | None = None,
        policy_overrides: dict[str, Any] | None = None,
    ):
        self.mode = _load_mode(mode)
        self.workspace = Path(workspace).resolve()
        self.policies_file = policies_file
        self.enable_exec = enable_exec
        self.enable_browser = enable_browser
        self.server_url = server_url if server_url is not None else os.environ.get("PNEUMA_API")
        self.server_token = (server_token if server_token is not None
                             else os.environ.get("PNEUMA_TOKEN"))
        self.interact = interact
        self.params = params
        self.policy_overrides = policy_overrides

    def policies(self) -> dict[str, Any]:
        return effective_policies(
            self.mode, self.workspace, policies_file=self.policies_file,
            enable_exec=self.enable_exec, enable_browser=self.enable_browser,
            overrides=self.policy_overrides,
        )

    def context(self, policies: dict[str, Any] | None = None) -> ToolContext:
        """A fresh context: policies and params are re-read, so an edit of the
        policy file applies to the next call of a long-lived server too."""
        policies = policies if policies is not None else self.policies()
        retention = policies.get("snapshotRetention", DEFAULT_RETENTION)
        return ToolContext(
            mode=self.mode,
            workspace=self.workspace,
            sandbox=Sandbox(self.workspace, forbidden_patterns(policies)),
            policies=policies,
            params=dict(self.params) if self.params is not None
            else _load_params(self.mode, self.workspace),
            state=ToolState(state_dir(self.workspace, self.mode.name),
                            dry_run_ttl=float(policies.get("dryRunTtlSeconds") or 86400)),
            snapshots=SnapshotStore(snapshot_dir(self.workspace, self.mode.name),
                                    retention=int(retention)),
            server_url=self.server_url,
            server_token=self.server_token,
            interact=self.interact,
            enabled_tools=enabled_tool_names(self.mode, policies),
        )

    def enabled_specs(self) -> list[Any]:
        """The manifest's tools callable under the current policies."""
        names = enabled_tool_names(self.mode, self.policies())
        return [t for t in self.mode.manifest.tools if t.name in names]

    async def call_async(self, name: str, args: Any) -> dict[str, Any]:
        try:
            spec, ctx, handler, call_args = self._prepare(name, args)
            if inspect.iscoroutinefunction(handler):
                result = await handler(ctx, call_args)
            else:
                # Handlers do blocking file I/O (fsync): keep the event loop free.
                result = await asyncio.to_thread(handler, ctx, call_args)
                if inspect.isawaitable(result):
                    result = await result
            check_result(spec, result)
            return result
        except ToolError as exc:
            return exc.to_dict()
        except Exception as exc:  # never let a bug escape as anything but E_INTERNAL
            return _internal(name, exc)

    def call(self, name: str, args: Any) -> dict[str, Any]:
        """The synchronous form (``pneuma tool``); a sync handler runs in this thread."""
        try:
            spec, ctx, handler, call_args = self._prepare(name, args)
            if inspect.iscoroutinefunction(handler):
                return run_sync(self.call_async(name, args))
            result = handler(ctx, call_args)
            if inspect.isawaitable(result):
                result = run_sync(result)
            check_result(spec, result)
            return result
        except ToolError as exc:
            return exc.to_dict()
        except Exception as exc:
            return _internal(name, exc)

    def _prepare(self, name: str, args: Any) -> tuple[Any, ToolContext, Handler, Any]:
        spec = self.mode.manifest.tool(name) if isinstance(name, str) else None
        if spec is None:
            known = ", ".join(t.name for t in self.mode.manifest.tools) or "none"
            raise ToolError("E_UNSUPPORTED", f"the {self.mode.name} mode has no tool {name!r}",
                            details={"tool": name, "tools": [t.name for t in
                                                             self.mode.manifest.tools]},
                            hint=f"Its tools: {known}.", recoverable=True)
        ctx = self.context()
        if name not in ctx.enabled_tools:
            raise disabled_error(spec, self.mode.name)
        check_args(spec, args)
        return spec, ctx, load_handler(spec.handler), copy.deepcopy(args)


def _internal(name: Any, exc: Exception) -> dict[str, Any]:
    log.error("tool %s failed", name, exc_info=exc)
    return ToolError("E_INTERNAL", f"{name} failed: {type(exc).__name__}: {exc}",
                     details={"tool": str(name)}).to_dict()


def disabled_error(spec: Any, mode_name: str) -> ToolError:
    if spec.name == "execute_command":
        how = "start with --enable-exec, or set execution.enabled in the policy file"
    elif spec.name == "browser_action":
        how = "start with --enable-browser, or set browser.enabled in the policy file"
    else:
        how = (f"list it under tools.enable in .pneuma/{mode_name}-policies.json")
    return ToolError("E_TOOL_DISABLED", f"{spec.name} is disabled in this workspace",
                     details={"tool": spec.name, "devOnly": spec.dev_only},
                     hint=f"To turn it on, {how}.")


def _validator(schema: dict[str, Any]) -> Any:
    # Imported here: jsonschema costs a noticeable part of the server's start-up.
    from jsonschema.validators import Draft202012Validator

    key = id(schema)
    validator = _validators.get(key)
    if validator is None or validator.schema is not schema:
        validator = Draft202012Validator(schema)
        _validators[key] = validator
    return validator


def error_field(error: Any) -> str:
    """The field an argument error is about, as a dotted path (``globs.0``)."""
    path = [str(p) for p in error.absolute_path]
    if error.validator == "required":
        missing = _quoted(error.message)
        if missing:
            path.append(missing)
    elif error.validator == "additionalProperties":
        extra = _quoted(error.message)
        if extra:
            path.append(extra)
    return ".".join(path) or "(root)"


def _quoted(message: str) -> str | None:
    if message.startswith("'"):
        end = message.find("'", 1)
        if end > 0:
            return message[1:end]
    start = message.find("('")
    if start >= 0:
        end = message.find("'", start + 2)
        return message[start + 2:end]
    return None


def check_args(spec: Any, args: Any) -> None:
    if not isinstance(args, dict):
        raise ToolError("E_BAD_ARGS", f"{spec.name} takes a JSON object of arguments",
                        details={"field": "(root)"})
    errors = sorted(_validator(spec.input_schema).iter_errors(args),
                    key=lambda e: (len(list(e.absolute_path)), error_field(e)))
    if not errors:
        return
    problems = [{"field": error_field(e), "message": e.message} for e in errors]
    first = problems[0]
    raise ToolError(
        "E_BAD_ARGS",
        f"{spec.name}: invalid argument '{first['field']}': {first['message']}",
        details={"field": first["field"], "errors": problems},
        hint="See the tool's inputSchema.",
    )


def check_result(spec: Any, result: Any) -> None:
    if not isinstance(result, dict):
        raise ToolError("E_INTERNAL", f"{spec.name} returned {type(result).__name__}, not an "
                        "object", details={"tool": spec.name})
    if spec.output_schema is None:
        return
    errors = list(_validator(spec.output_schema).iter_errors(result))
    if errors:
        problems = [{"field": error_field(e), "message": e.message} for e in errors]
        log.error("tool %s answered outside its outputSchema: %s", spec.name, problems)
        raise ToolError("E_INTERNAL", f"{spec.name} answered outside its outputSchema "
                        f"({problems[0]['field']}: {problems[0]['message']})",
                        details={"tool": spec.name, "errors": problems})


def load_handler(reference: str) -> Handler:
    handler = _handlers.get(reference)
    if handler is not None:
        return handler
    module_name, _, attr = (host_tool_handler(reference) or reference).partition(":")
    try:
        module = importlib.import_module(module_name)
        handler = getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise ToolError("E_INTERNAL", f"the handler {reference} cannot be loaded: {exc}",
                        details={"handler": reference}) from None
    if not callable(handler):
        raise ToolError("E_INTERNAL", f"the handler {reference} is not callable",
                        details={"handler": reference})
    _handlers[reference] = handler
    return handler


def run_sync(coro: Awaitable[Any]) -> Any:
    """Run a coroutine to completion from synchronous code, even if an event
    loop is already running in this thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)  # type: ignore[arg-type]
        except BaseException as exc:  # pragma: no cover - re-raised below
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def call_tool(
    mode: Any,
    workspace: Path | str,
    name: str,
    args: Any,
    *,
    policies_file: Path | str | None = None,
    enable_exec: bool = False,
    enable_browser: bool = False,
    server_url: str | None = None,
    server_token: str | None = None,
    interact: Interaction | None = None,
    params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Call one tool; never raises (a broken policy file is an error result too)."""
    try:
        runtime = ToolRuntime(
            mode, workspace, policies_file=policies_file, enable_exec=enable_exec,
            enable_browser=enable_browser, server_url=server_url, server_token=server_token,
            interact=interact, params=params,
        )
    except ToolError as exc:
        return exc.to_dict()
    except Exception as exc:
        log.exception("cannot set up the tools of %s", mode)
        return ToolError("E_INTERNAL", f"cannot set up the tools: {exc}").to_dict()
    return runtime.call(name, args)


def forward_to_server(ctx: ToolContext, name: str, args: dict[str, Any],
                      timeout: float = 600.0) -> dict[str, Any]:
    """Call ``name`` on the running ``pneuma run`` server (``POST
    /api/tools/<name>``) and return its result; for handlers that need the
    browser (``ctx.interact``) when they run outside the server. Raises
    ToolError when there is no server or it cannot be reached."""
    if not ctx.server_url:
        raise ToolError("E_UNSUPPORTED", f"{name} needs the Pneuma page: no `pneuma run` "
                        "server is known (PNEUMA_API is not set)", recoverable=True)
    url = ctx.server_url.rstrip("/") + f"/api/tools/{name}"
    request = urllib.request.Request(
        url, data=json.dumps(args).encode("utf-8"), method="POST",
        headers={"Content-Type": "application/json",
                 **({"Authorization": f"Bearer {ctx.server_token}"} if ctx.server_token else {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        try:
            body = json.loads(exc.read().decode("utf-8"))
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("error"), dict) and \
                body["error"].get("code") in _codes():
            error = body["error"]
            raise ToolError(error["code"], error.get("message", ""),
                            details=error.get("details"), hint=error.get("hint"),
                            recoverable=error.get("recoverable")) from None
        raise ToolError("E_IO", f"the Pneuma server answered {exc.code} for {name}",
                        details={"status": exc.code}) from None
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise ToolError("E_TIMEOUT" if isinstance(exc, TimeoutError) else "E_IO",
                        f"cannot reach the Pneuma server at {ctx.server_url}: {exc}",
                        details={"serverUrl": ctx.server_url}) from None


def _codes() -> frozenset[str]:
    from pneuma.core.errors import ERROR_CODES

    return ERROR_CODES
