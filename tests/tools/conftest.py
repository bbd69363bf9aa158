"""Fixtures for the tool runtime's tests.

``webgal_mode`` is the real WebGAL manifest loaded straight from its file
(no plugin discovery, so a half-written plugin elsewhere cannot break
these tests); ``ws`` is a workspace seeded with its sample game; ``call``
calls a tool through the runtime, as ``pneuma tool`` / MCP / HTTP do.
``fake_mode`` is a small mode whose handlers (tool_test_handlers.py) make
the runtime's own error paths reachable.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pneuma.host.manifest import parse_manifest
from pneuma.host.modes import LoadedMode
from pneuma.tools.runtime import ToolRuntime
from pneuma.workspace.params import init_workspace
from tests.server.harness import AppServer, server_config, start_app_server

REPO = Path(__file__).resolve().parents[2]
WEBGAL_PACKAGE = REPO / "plugins" / "webgal" / "pneuma_webgal"
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from tool_helpers import FILE_TOOLS, error_code, write  # noqa: E402,F401


def load_mode(package: Path, manifest: dict[str, Any] | None = None) -> LoadedMode:
    data = manifest or json.loads((package / "manifest.json").read_text(encoding="utf-8"))
    return LoadedMode(parse_manifest(data, "test"), package, "test", None, None)


@pytest.fixture(scope="session")
def webgal_mode() -> LoadedMode:
    return load_mode(WEBGAL_PACKAGE)


@pytest.fixture
def ws(tmp_path: Path, webgal_mode: LoadedMode) -> Path:
    workspace = (tmp_path / "game-ws").resolve()
    workspace.mkdir()
    init_workspace(webgal_mode, workspace, {})
    return workspace


@pytest.fixture
async def server(aiohttp_client: Any, webgal_mode: LoadedMode, ws: Path) -> AppServer:
    """The real server over ``ws``, with no agent: the tools' HTTP routes."""
    return await start_app_server(aiohttp_client, server_config(webgal_mode, ws))


@pytest.fixture
def runtime(webgal_mode: LoadedMode, ws: Path) -> ToolRuntime:
    return ToolRuntime(webgal_mode, ws, server_url="", server_token="")


@pytest.fixture
def call(runtime: ToolRuntime) -> Callable[..., dict[str, Any]]:
    def invoke(name: str, args: Any = None) -> dict[str, Any]:
        return runtime.call(name, {} if args is None else args)

    return invoke


def _tool(name: str, handler: str, input_schema: dict, output_schema: dict | None = None,
          **extra: Any) -> dict[str, Any]:
    tool = {"name": name, "description": f"test tool {name}", "handler": handler,
            "inputSchema": input_schema, **extra}
    if output_schema is not None:
        tool["outputSchema"] = output_schema
    return tool


OBJ = {"type": "object"}


@pytest.fixture
def fake_mode(minimal_manifest: Callable[..., dict[str, Any]], tmp_path: Path) -> LoadedMode:
    manifest = minimal_manifest("faketools")
    manifest["tools"] = [
        _tool("echo", "tool_test_handlers:echo",
              {"type": "object", "properties": {"text": {"type": "string"}},
               "required": ["text"], "additionalProperties": False},
              {"type": "object", "properties": {"text": {"type": "string"}},
               "required": ["text"], "additionalProperties": False}),
        _tool("aecho", "tool_test_handlers:aecho", OBJ,
              {"type": "object", "required": ["async"]}),
        _tool("raise_code", "tool_test_handlers:raise_code",
              {"type": "object", "properties": {"code": {"type": "string"}},
               "required": ["code"]}),
        _tool("crash", "tool_test_handlers:crash", OBJ),
        _tool("bad_output", "tool_test_handlers:bad_output", OBJ,
              {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        _tool("not_a_dict", "tool_test_handlers:not_a_dict", OBJ),
        _tool("missing_handler", "tool_test_handlers:does_not_exist", OBJ),
        _tool("whoami", "tool_test_handlers:whoami", OBJ),
        _tool("execute_command", "tool_test_handlers:echo_all", OBJ, devOnly=True,
              enabledByDefault=False),
        _tool("browser_action", "tool_test_handlers:echo_all", OBJ, devOnly=True,
              enabledByDefault=False),
        _tool("opt_in", "tool_test_handlers:echo_all", OBJ, enabledByDefault=False),
    ]
    package = tmp_path / "fake_pkg"
    package.mkdir()
    return load_mode(package, manifest)
