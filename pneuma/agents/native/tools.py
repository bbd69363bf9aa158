"""The model's tools: the mode's tools, the viewer's agent-invocable
actions, a few workspace file tools, and the browser actions.

Each tool is a ``ToolDef`` (name, description, JSON schema, kind). Mode
tools run through the host's tool runtime (``pneuma.api.call_mode_tool``,
as ``pneuma tool`` runs them); viewer actions through the ``ViewerRouter``
(the shell's viewer tab answers them); browser tools
are run by the orchestrator, which owns the task, the client and the tab.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.api import (
    BrowserRequestTimeout,
    NoBrowserConnected,
    Sandbox,
    ToolError,
    call_mode_tool,
    write_in_workspace,
)

log = logging.getLogger(__name__)

VIEWER_PREFIX = "viewer__"
MAX_READ_BYTES = 512 * 1024
MAX_LIST = 2000


@dataclass(frozen=True)
class ToolDef:
    name: str
    description: str
    schema: dict[str, Any]
    kind: str  # mode | viewer | workspace | browser
    target: str = ""  # the action id / mode tool name behind it

    def api(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "schema": self.schema}


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


BROWSER_TOOLS: list[ToolDef] = [
    ToolDef("browser_open", "Open a web page in this task's own browser tab (created on first "
            "use, reused afterwards) and prepare it: you get its title, URL, readable text and a "
            "screenshot.", _obj({"url": {"type": "string", "description": "http(s) URL"}}, ["url"]),
            "browser", "session_start"),
    ToolDef("browser_read_page", "Prepare the current page again (wait until loaded, screenshot, "
            "readable text), e.g. after it changed by itself.", _obj({}), "browser",
            "browser_readability_extract"),
    ToolDef("browser_xpath_scan", "List the interactive elements of the current page (links, "
            "buttons, inputs…) with their XPath, tag, text and position.",
            _obj({"scope": {"type": "string", "enum": ["viewport", "document"],
                            "description": "viewport (default) or the whole document"}}),
            "browser", "browser_xpath_scan"),
    ToolDef("browser_click", "Click the element at an XPath; the page is prepared again "
            "afterwards.", _obj({"xpath": {"type": "string"}}, ["xpath"]), "browser",
            "browser_click"),
    ToolDef("browser_type", "Type text into the input or textarea at an XPath (replacing its "
            "value); submit=true presses Enter afterwards and the page is prepared again.",
            _obj({"xpath": {"type": "string"}, "text": {"type": "string"},
                  "submit": {"type": "boolean"}}, ["xpath", "text"]), "browser", "browser_type"),
    ToolDef("browser_get_html", "Save the HTML of the page (or of the element at an XPath) as an "
            "artifact; returns its URL and the first part of the HTML.",
            _obj({"xpath": {"type": "string"}}), "browser", "browser_get_html"),
    ToolDef("browser_close", "Close this task's browser tab when you are done with it.",
            _obj({}), "browser", "session_stop"),
]

WORKSPACE_TOOLS: list[ToolDef] = [
    ToolDef("workspace_list_files", "List the workspace's files (relative paths, sizes).",
            _obj({"dir": {"type": "string", "description": "sub-folder, default the root"}}),
            "workspace"),
    ToolDef("workspace_read_file", "Read a UTF-8 text file of the workspace.",
            _obj({"path": {"type": "string"}}, ["path"]), "workspace"),
    ToolDef("workspace_write_file", "Create or replace a UTF-8 text file of the workspace "
            "(written atomically; the person sees it at once).",
            _obj({"path": {"type": "string"}, "content": {"type": "string"}},
                 ["path", "content"]), "workspace"),
]


def viewer_tool_name(action_id: str) -> str:
    return VIEWER_PREFIX + re.sub(r"[^A-Za-z0-9_-]", "_", action_id)[:100]


def viewer_tools(mode: Any) -> list[ToolDef]:
    tools = []
    for action in [a for a in mode.manifest.viewer_api.actions if a.agent_invocable]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, spec in action.params.items():
            prop: dict[str, Any] = {"type": spec.type}
            if getattr(spec, "description", None):
                prop["description"] = spec.description
            properties[name] = prop
            if spec.required:
                required.append(name)
        schema = _obj(properties, required)
        schema["additionalProperties"] = False
        description = f"Viewer action '{action.id}' ({action.label})"
        if action.description:
            description += f": {action.description}"
        tools.append(ToolDef(viewer_tool_name(action.id), description, schema, "viewer", action.id))
    return tools


def api_schema(schema: dict[str, Any], description: str) -> tuple[dict[str, Any], str]:
    """A manifest's input schema as the Messages API takes it: ``$id`` and
    ``$schema`` dropped, and no ``oneOf``/``anyOf``/``allOf`` at the top
    level (the API refuses those); such a rule is said in the description
    instead. The tool runtime still validates the call against the full schema."""
    out = {k: v for k, v in schema.items() if k not in ("$id", "$schema")}
    notes = []
    for key, word in (("oneOf", "exactly one"), ("anyOf", "at least one"), ("allOf", "all")):
        branches = out.pop(key, None)
        if not isinstance(branches, list):
            continue
        wanted = [" + ".join(b.get("required", [])) for b in branches
                  if isinstance(b, dict) and b.get("required")]
        if wanted:
            notes.append(f"Give {word} of: {', '.join(wanted)}.")
    out.setdefault("type", "object")
    if notes:
        description = f"{description}\n{' '.join(notes)}" if description else " ".join(notes)
    return out, description


def mode_tools(mode: Any) -> list[ToolDef]:
    tools = []
    for t in mode.manifest.tools:
        if t.enabled_by_default and not t.dev_only:
            schema, description = api_schema(t.input_schema, t.description)
            tools.append(ToolDef(t.name, description, schema, "mode", t.name))
    return tools


def build_tools(mode: Any, *, browser: bool = True) -> list[ToolDef]:
    tools = mode_tools(mode)
    names = {t.name for t in tools}
    tools += [t for t in viewer_tools(mode) if t.name not in names]
    names = {t.name for t in tools}
    if not {"list_files", "read_file", "write_to_file"} & names:
        tools += WORKSPACE_TOOLS
    if browser:
        tools += BROWSER_TOOLS
    return tools


# -- running them ------------------------------------------------------------------


async def run_mode_tool(mode: Any, workspace: Path, name: str, args: dict[str, Any],
                        server_url: str | None = None,
                        server_token: str | None = None) -> tuple[Any, bool]:
    """``(result, is_error)``; the runtime never raises, but guard anyway."""
    try:
        # In a thread: a tool may block (a build, a subprocess) and the
        # session must keep streaming meanwhile.
        result = await asyncio.to_thread(call_mode_tool, mode, workspace, name, args,
                                         server_url=server_url, server_token=server_token)
    except Exception as exc:  # a runtime bug becomes a tool error, never a dead turn
        log.exception("mode tool %s failed", name)
        return {"error": {"code": "E_INTERNAL", "message": str(exc)}}, True
    return result, isinstance(result, dict) and "error" in result and len(result) == 1


async def run_viewer_action(channel: Any, action_id: str, params: dict[str, Any],
                            timeout: float) -> tuple[Any, bool]:
    if channel is None:
        return {"success": False, "message": "no viewer in this session"}, True
    try:
        result = await channel.request(action_id, params, timeout)
    except NoBrowserConnected as exc:
        return {"success": False, "message": str(exc)}, True
    except BrowserRequestTimeout as exc:
        return {"success": False, "message": f"'{action_id}' timed out: {exc}"}, True
    return result, not bool(isinstance(result, dict) and result.get("success", True))


def run_workspace_tool(workspace: Path, name: str, args: dict[str, Any]) -> tuple[Any, bool]:
    sandbox = Sandbox(workspace)
    try:
        if name == "workspace_list_files":
            base = sandbox.resolve(args.get("dir") or "", allow_root=True)
            files = []
            for root, dirs, names in os.walk(base):
                dirs[:] = sorted(d for d in dirs if sandbox.is_allowed(
                    Path(root, d).relative_to(sandbox.root).as_posix()))
                for n in sorted(names):
                    rel = Path(root, n).relative_to(sandbox.root).as_posix()
                    if sandbox.is_allowed(rel) and not rel.startswith(".claude/"):
                        files.append({"path": rel, "size": Path(root, n).stat().st_size})
                if len(files) >= MAX_LIST:
                    break
            return {"files": files[:MAX_LIST], "truncated": len(files) >= MAX_LIST}, False
        if name == "workspace_read_file":
            try:
                # By fd, as every file route: a symlink swapped meanwhile
                # cannot lead the read outside (hard links refused on the fd).
                data, _ = sandbox.read_bytes(args.get("path"), MAX_READ_BYTES)
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                return {"error": f"no file {args.get('path')}"}, True
            if len(data) > MAX_READ_BYTES:
                return {"error": f"{args.get('path')} is larger than {MAX_READ_BYTES} bytes"}, True
            try:
                return {"path": sandbox.normalize(args.get("path")), "content": data.decode("utf-8")}, False
            except UnicodeDecodeError:
                return {"error": f"{args.get('path')} is not UTF-8 text"}, True
        if name == "workspace_write_file":
            rel = sandbox.normalize(args.get("path"))
            sandbox.resolve_writable(rel)  # .claude/ and .mcp.json: the installer's
            content = args.get("content")
            if not isinstance(content, str):
                return {"error": "'content' must be a string"}, True
            # The host's one atomic write, by fd (missing folders made): its
            # temp files are the ones `pneuma run` removes after a crash.
            write_in_workspace(sandbox, rel, content.encode("utf-8"))
            return {"path": rel, "bytes": len(content.encode("utf-8"))}, False
    except ToolError as exc:
        return {"error": exc.to_dict()}, True
    except OSError as exc:
        return {"error": str(exc)}, True
    return {"error": f"unknown workspace tool {name}"}, True


def result_text(value: Any, limit: int = 60_000) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
    return text if len(text) <= limit else text[:limit] + "\n[… cut]"
