"""WebGAL's own set of tools: which of the host's tools its manifest offers
and which are on without a flag, and what ``pneuma mcp --mode webgal``
publishes, its own tools' schemas included. (The host's tools themselves are
tested on a generic mode in tests/tools.)"""

from __future__ import annotations

import json

import anyio

from pneuma.host.registry import get_mode
from pneuma.tools.runtime import ToolRuntime
from tests.tools.tool_helpers import assert_published_as_declared, mcp_session

FILE_TOOLS = {"list_files", "read_file", "write_to_file", "replace_in_file", "search_files",
              "list_snapshots", "restore_snapshot"}
DEV_TOOLS = {"execute_command", "browser_action"}


def test_webgal_dev_tools_are_off_by_default(seeded):
    runtime = ToolRuntime(get_mode("webgal"), seeded, server_url="", server_token="")
    names = {s.name for s in runtime.enabled_specs()}
    assert FILE_TOOLS <= names
    assert not DEV_TOOLS & names
    assert len(names) == 14


def test_mcp_publishes_the_webgal_tools(seeded):
    mode = get_mode("webgal")
    out = anyio.run(mcp_session, "webgal", seeded, {"PNEUMA_API": "", "PNEUMA_TOKEN": ""}, {
        "list": ("list_files", {"path": "game/scene", "globs": ["**/*.txt"]})})
    listed = {t.name: t for t in out["tools"]}
    assert set(listed) == {t.name for t in mode.manifest.tools if not t.dev_only}
    assert_published_as_declared(listed, mode)
    # validate_script takes a path or the text: its oneOf moves to the description.
    assert "Give exactly one of" in listed["validate_script"].description
    # A host tool offered by the webgal manifest, on the sample game.
    assert out["list"].is_error is False
    assert "start.txt" in out["list"].structured_content["entries"]
    assert json.loads(out["list"].content[0].text) == out["list"].structured_content
