"""Fixtures for the tests of the host's tools.

``notes_mode`` is the generic mode in notes_mode/ (every host tool offered
as ``pneuma:<tool>``, plain text and Markdown seeds), loaded straight from
its manifest (no plugin discovery, so a half-written plugin elsewhere cannot
break these tests); ``ws`` is a workspace seeded with its notes; ``call``
calls a tool through the runtime, as ``pneuma tool`` / MCP / HTTP do.
``notes_cli_env`` is the environment under which the real ``pneuma`` command
finds the notes mode through an entry point, as it finds any installed mode.
``fake_mode`` is a small mode whose handlers (tool_test_handlers.py) make
the runtime's own error paths reachable.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pneuma.host.modes import LoadedMode
from pneuma.tools.runtime import ToolRuntime
from pneuma.workspace.params import init_workspace
from tests.server.harness import AppServer, server_config, start_app_server

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from tool_helpers import NOTES, NOTES_PLUGIN, load_mode, load_notes_mode  # noqa: E402


@pytest.fixture(scope="session")
def notes_mode() -> LoadedMode:
    return load_notes_mode()


@pytest.fixture
def ws(tmp_path: Path, notes_mode: LoadedMode) -> Path:
    workspace = (tmp_path / "notes-ws").resolve()
    workspace.mkdir()
    init_workspace(notes_mode, workspace, {})
    return workspace


@pytest.fixture(scope="session")
def notes_cli_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for a ``pneuma`` subprocess that knows the notes mode: a
    site directory holding the dist-info of an installed distribution whose
    ``pneuma`` entry point is ``notes_mode``, plus this directory (where the
    package is) on PYTHONPATH. Only that plugin is loaded besides the host's
    own, and the process talks to no running server."""
    site = tmp_path_factory.mktemp("notes-site")
    info = site / "pneuma_notes_test-1.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pneuma-notes-test\n"
                                   "Version: 1.0.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[pneuma]\n{NOTES} = {NOTES_PLUGIN}\n",
                                           encoding="utf-8")
    path = os.pathsep.join(p for p in (str(site), str(HERE), os.environ.get("PYTHONPATH"))
                           if p)
    return {"PYTHONPATH": path, "PNEUMA_LOAD_PLUGINS": NOTES,
            "PNEUMA_API": "", "PNEUMA_TOKEN": ""}


@pytest.fixture
async def server(aiohttp_client: Any, notes_mode: LoadedMode, ws: Path) -> AppServer:
    """The real server over ``ws``, with no agent: the tools' HTTP routes."""
    return await start_app_server(aiohttp_client, server_config(notes_mode, ws))


@pytest.fixture
def runtime(notes_mode: LoadedMode, ws: Path) -> ToolRuntime:
    return ToolRuntime(notes_mode, ws, server_url="", server_token="")


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
