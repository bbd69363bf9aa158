"""Helpers the tool tests import by name.

They live here rather than in conftest.py: ``from conftest import ...``
resolves to whichever conftest module Python imported first (the
repository root has one too), so it breaks depending on what else runs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from pneuma.host.manifest import parse_manifest
from pneuma.host.modes import LoadedMode
from pneuma.tools.mcp_server import published_input_schema

FILE_TOOLS = ["list_files", "read_file", "write_to_file", "replace_in_file", "search_files",
              "list_snapshots", "restore_snapshot"]

# The generic mode the host's tools are tested on (notes_mode/__init__.py).
NOTES_PACKAGE = Path(__file__).resolve().parent / "notes_mode"
NOTES = "notes"
NOTES_PLUGIN = "notes_mode"


def load_mode(package: Path, manifest: dict[str, Any] | None = None, *,
              plugin_name: str = "test") -> LoadedMode:
    """The mode in ``package`` (its manifest.json unless ``manifest`` is
    given), validated as the registry does but without plugin discovery: a
    half-written plugin elsewhere cannot break these tests."""
    data = manifest or json.loads((package / "manifest.json").read_text(encoding="utf-8"))
    return LoadedMode(parse_manifest(data, plugin_name), package, plugin_name, None, None)


def load_notes_mode() -> LoadedMode:
    return load_mode(NOTES_PACKAGE, plugin_name=NOTES_PLUGIN)


def policies_file(workspace: Path, mode: str = NOTES) -> Path:
    """Where the workspace's policy file for ``mode`` is (docs/tools.md)."""
    return workspace / ".pneuma" / f"{mode}-policies.json"


def write_policies(workspace: Path, policies: dict[str, Any], mode: str = NOTES) -> Path:
    path = policies_file(workspace, mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"contractVersion": "1.0.0", "policies": policies}))
    return path


def error_code(result: dict[str, Any]) -> str | None:
    error = result.get("error") if isinstance(result, dict) else None
    return error.get("code") if isinstance(error, dict) else None


def write(call: Callable[..., dict[str, Any]], path: str, content: str, **extra: Any) -> dict:
    """Dry run then write, as write_to_file asks (writeRequiresDiff)."""
    dry = call("write_to_file", {"path": path, "content": content, "dryRun": True, **extra})
    assert "error" not in dry, dry
    return call("write_to_file", {"path": path, "content": content, "dryRun": False, **extra})


def assert_published_as_declared(listed: dict[str, Any], mode: LoadedMode) -> None:
    """Each tool an MCP session lists (name -> tool) carries the manifest's
    schemas, with a top-level oneOf/anyOf/allOf moved into its description."""
    for spec in mode.manifest.tools:
        if spec.name not in listed:
            continue
        tool = listed[spec.name]
        schema, note = published_input_schema(spec.input_schema)
        assert tool.input_schema == schema and tool.output_schema == spec.output_schema
        assert not {"oneOf", "anyOf", "allOf"} & set(tool.input_schema)
        assert tool.description.startswith(spec.description)
        if note:
            assert note in tool.description


PNEUMA = str(Path(sys.executable).parent / "pneuma")


async def mcp_session(mode: str, workspace: Path, env: dict[str, str],
                      calls: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Run ``pneuma mcp --mode MODE`` as an MCP client does: ``tools`` is what
    it lists, and each ``key: (tool, args)`` of ``calls`` is called in order,
    its result under ``key``."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=PNEUMA, args=["mcp", "--mode", mode,
                                                         "--workspace", str(workspace)], env=env)
    out: dict[str, Any] = {}
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                out["tools"] = (await session.list_tools()).tools
                for key, (tool, args) in calls.items():
                    out[key] = await session.call_tool(tool, args)
    return out
