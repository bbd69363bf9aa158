"""A mode offers the host's own tools by name: ``"handler": "pneuma:<tool>"``.

The description and schemas come from the host's catalogue; the mode may
give its own description. No manifest names a host tool by where the host
happens to implement it (that is not promised, docs/api.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pneuma.api import ToolSpec
from pneuma.host.manifest import ManifestError, parse_manifest
from pneuma.host.tool_catalogue import host_tool_names
from pneuma.testing import call_tool, load_mode, register_plugin
from tests.conftest import ManifestModePlugin, make_mode_package

REPO = Path(__file__).resolve().parents[2]


def _manifest(minimal_manifest, tools):
    manifest = minimal_manifest("hosttools")
    manifest["tools"] = tools
    return manifest


def test_a_host_tool_gets_its_schemas_from_the_host(minimal_manifest):
    manifest = parse_manifest(_manifest(minimal_manifest, [
        {"name": "read_file", "handler": "pneuma:read_file"},
        {"name": "search_files", "handler": "pneuma:search_files",
         "description": "Search the notes."},
    ]), "test")
    read, search = manifest.tools
    assert read.input_schema["required"] == ["path"]
    assert read.output_schema is not None and "content" in read.output_schema["properties"]
    assert "workspace" in read.description and "WebGAL" not in read.description
    assert search.description == "Search the notes."  # the mode's own words win
    assert isinstance(read, ToolSpec) and read.handler == "pneuma:read_file"


def test_an_unknown_host_tool_is_a_manifest_error_listing_them(minimal_manifest):
    with pytest.raises(ManifestError) as caught:
        parse_manifest(_manifest(minimal_manifest, [
            {"name": "read_files", "handler": "pneuma:read_files"}]), "test")
    assert "'pneuma:read_files' is not a host tool" in str(caught.value)
    assert "read_file" in str(caught.value)


def test_a_mode_calls_a_host_tool_on_its_own_workspace(minimal_manifest, tmp_path, pm):
    manifest = _manifest(minimal_manifest, [
        {"name": "read_file", "handler": "pneuma:read_file"},
        {"name": "list_files", "handler": "pneuma:list_files"}])
    package = make_mode_package(tmp_path, manifest)
    with register_plugin(ManifestModePlugin(manifest, package), "hosttools-plugin"):
        mode = load_mode("hosttools")
        workspace = tmp_path / "ws"
        workspace.mkdir()
        (workspace / "notes.md").write_text("# hello\n", encoding="utf-8")
        answer = call_tool(mode, workspace, "read_file", {"path": "notes.md"})
        assert answer["content"] == "# hello\n"
        # The host's schema is enforced for the mode that borrowed the tool.
        bad = call_tool(mode, workspace, "read_file", {"file": "notes.md"})
        assert bad["error"]["code"] == "E_BAD_ARGS"
        denied = call_tool(mode, workspace, "read_file", {"path": "../outside.md"})
        assert denied["error"]["code"] == "E_DENY_PATH"


def test_no_manifest_names_a_host_tool_by_its_internal_module():
    internal = []
    for path in list((REPO / "plugins").glob("*/*/manifest.json")) + list(
            (REPO / "templates").rglob("manifest.json")):
        for tool in json.loads(path.read_text(encoding="utf-8")).get("tools", []):
            if str(tool.get("handler", "")).startswith("pneuma."):
                internal.append(f"{path.relative_to(REPO)}: {tool['handler']}")
    assert internal == [], "name host tools as 'pneuma:<tool>': " + ", ".join(internal)


def test_every_host_tool_has_a_working_handler():
    from pneuma.tools.runtime import load_handler

    assert len(host_tool_names()) == 12
    for name in host_tool_names():
        assert callable(load_handler(f"pneuma:{name}"))
