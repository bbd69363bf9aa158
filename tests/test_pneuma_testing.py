"""``pneuma.testing``: what a mode's tests get is the real thing.

A test mode ``notes`` (registered for the test) has a tool whose handler
lives in this module, an init param and a seed file; the helpers are used
exactly as a plugin's tests would use them. The last test runs a plugin's
test file in its own pytest process, with ``pytest_plugins =
["pneuma.testing"]`` and the fixtures.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from pneuma.api import (
    ModeSource,
    Sandbox,
    SnapshotStore,
    ToolContext,
    ToolError,
    ToolState,
    hookimpl,
)
from pneuma.testing import (
    FakeAgent,
    call_tool,
    install_skill,
    load_mode,
    make_workspace,
    register_plugin,
    serve,
    tool_context,
)

pytest_plugins = ["pytester"]


def count_words(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    path = ctx.sandbox.resolve(args["file"])
    if not path.is_file():
        raise ToolError("E_NOT_FOUND", f"no file {args['file']!r}")
    return {"words": len(path.read_text(encoding="utf-8").split()),
            "unit": ctx.params.get("unit", "?")}


@pytest.fixture
def notes(add_mode, minimal_manifest):
    manifest = minimal_manifest("notes")
    manifest["init"]["params"] = [{"name": "unit", "label": "Unit", "defaultValue": "words"}]
    manifest["tools"] = [{
        "name": "count_words",
        "description": "Words in one file",
        "inputSchema": {"type": "object", "properties": {"file": {"type": "string"}},
                        "required": ["file"], "additionalProperties": False},
        "outputSchema": {"type": "object", "properties": {
            "words": {"type": "integer"}, "unit": {"type": "string"}},
            "required": ["words", "unit"]},
        "handler": f"{__name__}:count_words",
    }]
    return add_mode(manifest)


# --- workspaces ----------------------------------------------------------------


def test_make_workspace_seeds_and_stores_params_like_pneuma_init(notes, tmp_path: Path):
    workspace = make_workspace("notes", tmp_path / "ws", {"unit": "tokens"})
    assert workspace == (tmp_path / "ws").resolve()
    assert (workspace / "welcome.md").read_text().startswith("# Welcome")
    assert (workspace / "notes" / "ideas.md").is_file()
    assert 'unit = "tokens"' in (workspace / ".pneuma" / "config.toml").read_text()
    # A workspace with content of its own gets no seeds.
    own = tmp_path / "own"
    own.mkdir()
    (own / "plan.md").write_text("# Plan\n")
    make_workspace(notes, own)
    assert sorted(p.name for p in own.iterdir()) == [".pneuma", "plan.md"]


def test_load_mode_names_what_exists(notes):
    assert load_mode("notes") is load_mode(notes)
    with pytest.raises(LookupError, match="notes"):
        load_mode("no-such-mode")


def test_register_plugin_adds_a_mode_for_the_block_only(pm, make_mode_package, minimal_manifest,
                                                       tmp_path: Path):
    package = make_mode_package(tmp_path, minimal_manifest("briefly"))

    class Plugin:
        @hookimpl
        def register_modes(self):
            return [ModeSource(manifest=package / "manifest.json", package_dir=package)]

    with register_plugin(Plugin(), "briefly-plugin") as plugin:
        assert isinstance(plugin, Plugin)
        assert load_mode("briefly").plugin_name == "briefly-plugin"
    with pytest.raises(LookupError):
        load_mode("briefly")
    with pytest.raises(RuntimeError), register_plugin(Plugin(), "briefly-plugin"):
        raise RuntimeError("a failing test")
    assert not pm.has_plugin("briefly-plugin")


def test_install_skill_writes_claude_md_and_is_idempotent(notes, tmp_path: Path):
    workspace = make_workspace(notes, tmp_path / "ws")
    assert install_skill(notes, workspace).changed
    assert "| `open-file` |" in (workspace / "CLAUDE.md").read_text()
    assert (workspace / ".claude" / "skills" / "pneuma-notes" / "SKILL.md").is_file()
    assert not install_skill(notes, workspace).changed


# --- tools -----------------------------------------------------------------------


def test_tool_context_is_the_runtimes_own(notes, tmp_path: Path, monkeypatch):
    # Even inside a live session (an agent running the tests), a test's
    # context never points at that session's server.
    monkeypatch.setenv("PNEUMA_API", "http://127.0.0.1:9")
    monkeypatch.setenv("PNEUMA_TOKEN", "live-token")
    workspace = make_workspace(notes, tmp_path / "ws", {"unit": "tokens"})
    ctx = tool_context("notes", workspace)
    assert isinstance(ctx, ToolContext)
    assert isinstance(ctx.sandbox, Sandbox) and isinstance(ctx.state, ToolState)
    assert isinstance(ctx.snapshots, SnapshotStore)
    assert (ctx.server_url, ctx.server_token) == (None, None)
    assert ctx.workspace == workspace and ctx.mode.name == "notes"
    assert ctx.params == {"unit": "tokens"}
    assert ctx.enabled_tools == {"count_words"}
    with pytest.raises(ToolError) as denied:
        ctx.sandbox.resolve("../outside.md")
    assert denied.value.code == "E_DENY_PATH"
    with pytest.raises(ToolError) as hidden:
        ctx.sandbox.resolve(".pneuma/config.toml")
    assert hidden.value.code == "E_DENY_PATH"
    assert count_words(ctx, {"file": "welcome.md"}) == {"words": 7, "unit": "tokens"}

    overridden = tool_context(notes, workspace, params={"unit": "lines"},
                              policies={"tools": {"disable": ["count_words"]}})
    assert overridden.params == {"unit": "lines"}
    assert overridden.enabled_tools == set()


def test_call_tool_goes_through_schemas_and_policies(notes, tmp_path: Path):
    workspace = make_workspace(notes, tmp_path / "ws")
    assert call_tool(notes, workspace, "count_words", {"file": "welcome.md"}) == {
        "words": 7, "unit": "words"}
    bad = call_tool(notes, workspace, "count_words", {"file": "welcome.md", "x": 1})
    assert bad["error"]["code"] == "E_BAD_ARGS" and bad["error"]["details"]["field"] == "x"
    assert call_tool(notes, workspace, "count_words", {"file": "nope.md"})["error"]["code"] == \
        "E_NOT_FOUND"
    assert call_tool(notes, workspace, "nope", {})["error"]["code"] == "E_UNSUPPORTED"
    off = call_tool(notes, workspace, "count_words", {"file": "welcome.md"},
                    policies={"tools": {"disable": ["count_words"]}})
    assert off["error"]["code"] == "E_TOOL_DISABLED"


# --- a running server -----------------------------------------------------------


async def test_serve_is_a_real_server_with_the_token(notes, tmp_path: Path):
    async with serve(notes, tmp_path / "ws", params={"unit": "tokens"}) as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert server.workspace == (tmp_path / "ws").resolve()
        assert server.pneuma.params == {"unit": "tokens"}
        assert f"session={server.session_id}&token={server.token}" in server.page_url
        response = await server.get("/api/files?path=welcome.md")
        assert response.status == 200, await response.text()
        refused = await server.get("/api/files?path=welcome.md", token=False)
        assert refused.status == 401
        # The tools of the mode, over HTTP, as the agent's curl calls them.
        answer = await server.post("/api/tools/count_words", json={"file": "welcome.md"})
        assert await answer.json() == {"words": 7, "unit": "tokens"}


async def test_a_tab_talks_to_the_fake_agent(notes, tmp_path: Path):
    async with serve(notes, tmp_path / "ws") as server:
        agent = server.agent
        assert isinstance(agent, FakeAgent) and agent.started
        tab = await server.tab()
        await tab.say("make it shorter")
        assert await agent.next_user_message() == "make it shorter"
        agent.reply("Done.")
        said = await tab.wait_for("assistant")
        assert said["message"]["content"] == [{"type": "text", "text": "Done."}]
        await tab.wait_for("result")
        # The file watcher is the host's: a write reaches the tab.
        (server.workspace / "new.md").write_text("# New\n")
        update = await tab.wait_for("content_update", timeout=5)
        assert [(f["path"], f["content"]) for f in update["files"]] == [("new.md", "# New\n")]
    assert agent.stopped


async def test_a_viewer_action_without_a_tab_is_unavailable(notes, tmp_path: Path):
    async with serve(notes, tmp_path / "ws", backend="none") as server:
        assert server.agent is None
        with pytest.raises(ToolError) as caught:
            await server.pneuma.viewer_action("open-file", {"file": "welcome.md"}, timeout=0.5)
        assert caught.value.code == "E_UNAVAILABLE"


# --- the fixtures, as a plugin's test suite uses them ---------------------------------


def test_fixtures_work_with_pytest_plugins(pytester: pytest.Pytester, monkeypatch):
    monkeypatch.setenv("PNEUMA_LOAD_PLUGINS", "slide")
    pytester.makeconftest('pytest_plugins = ["pneuma.testing"]\n')
    pytester.makepyfile(test_slide=textwrap.dedent("""
        import pytest

        def test_workspace(pneuma_workspace):
            workspace = pneuma_workspace("slide", {"slideWidth": 1920})
            assert (workspace / "manifest.json").is_file()
            assert "slideWidth = 1920" in (workspace / ".pneuma" / "config.toml").read_text()

        @pytest.mark.asyncio
        async def test_server(pneuma_server):
            server = await pneuma_server("slide")
            response = await server.get("/api/export/html")
            assert response.status == 200
            assert "<!doctype html>" in await response.text()
            tab = await server.tab()
            await tab.say("hello")
            assert await server.agent.next_user_message() == "hello"
    """))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=2)
