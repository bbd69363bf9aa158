"""Tests of the {{ cookiecutter.name }} mode. Run them with `python -m pytest` after
`pip install -e .` (the mode must be installed for Pneuma to find it)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from jsonschema import Draft202012Validator

from pneuma.host.registry import get_mode
from pneuma.workspace.skill import install_skill
from pneuma.tools.errors import ToolError
from pneuma.tools.sandbox import Sandbox
from pneuma.workspace.params import init_workspace

from {{ cookiecutter.__package }} import tools

MODE = "{{ cookiecutter.name }}"
PACKAGE_DIR = Path(tools.__file__).resolve().parent


@pytest.fixture(scope="module")
def mode():
    return get_mode(MODE)


@pytest.fixture
def workspace(mode, tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    init_workspace(mode, ws)
    return ws


def tool_context(workspace: Path) -> SimpleNamespace:
    """What the outline handler reads of Pneuma's ToolContext."""
    return SimpleNamespace(workspace=workspace, sandbox=Sandbox(workspace), params={})


# --- the manifest -----------------------------------------------------------------


def test_pneuma_finds_the_mode_in_this_package(mode):
    assert mode.package_dir == PACKAGE_DIR
    assert mode.distribution == "{{ cookiecutter.__distribution }}"
    manifest = mode.manifest
    assert manifest.viewer_api.workspace.type == "all"
    assert manifest.viewer.module == "viewer.js"
    assert (mode.static_dir / "viewer.js").is_file()
    assert [a.id for a in manifest.agent_actions] == ["show-file"]
    assert manifest.action("show-file").params["file"].required
    assert [t.name for t in manifest.tools] == ["outline"]
    assert [w.id for w in manifest.workflows] == ["review-page"]
    steps = manifest.workflows[0].steps
    assert [s.tool or s.action or "prompt" for s in steps] == ["outline", "prompt", "prompt", "show-file"]


def test_every_tool_handler_imports(mode):
    for spec in mode.manifest.tools:
        module, function = spec.handler.split(":")
        assert callable(getattr(importlib.import_module(module), function)), spec.handler


# --- seeds and skill ---------------------------------------------------------------


def test_seeds_fill_an_empty_workspace(mode, tmp_path: Path):
    ws = tmp_path / "ws"
    result = init_workspace(mode, ws)
    assert result.seeded == ["welcome.md"]
    text = (ws / "welcome.md").read_text(encoding="utf-8")
    assert text.startswith("# Welcome to ")
    # A workspace with pages of its own is left alone.
    other = tmp_path / "other"
    other.mkdir()
    (other / "plan.md").write_text("# Plan\n", encoding="utf-8")
    assert init_workspace(mode, other).seeded == []
    assert sorted(p.name for p in other.iterdir()) == ["plan.md"]


def test_skill_installs_and_claude_md_lists_the_action(mode, workspace: Path):
    result = install_skill(mode, workspace, {})
    assert result.changed
    skill = workspace / ".claude" / "skills" / mode.manifest.skill.install_name / "SKILL.md"
    text = skill.read_text(encoding="utf-8")
    assert text.startswith(f"---\nname: {mode.manifest.skill.install_name}\ndescription: ")
    assert '"actionId":"show-file"' in text
    claude = (workspace / "CLAUDE.md").read_text(encoding="utf-8")
    assert "| `show-file` |" in claude
    assert "`outline`" in claude
    assert "/review-page" in claude
    # A second install changes nothing.
    assert not install_skill(mode, workspace, {}).changed


# --- the outline tool -----------------------------------------------------------------


def test_outline_of_the_seed_page(mode, workspace: Path):
    result = tools.outline(tool_context(workspace), {"file": "welcome.md"})
    Draft202012Validator(mode.manifest.tool("outline").output_schema).validate(result)
    assert result["file"] == "welcome.md"
    assert result["title"].startswith("Welcome to ")
    assert result["headings"][0] == {"level": 1, "text": result["title"], "line": 1}
    assert [h["text"] for h in result["headings"] if h["level"] == 2] == [
        "How to steer", "What the pages can hold", "For the mode's author",
    ]
    assert result["words"] > 100
    assert result["lines"] == len((workspace / "welcome.md").read_text().splitlines())


def test_outline_ignores_headings_in_code_and_strips_markup(workspace: Path):
    (workspace / "notes.md").write_text(
        "# The **plan**\n\n```bash\n# not a heading\n```\n\n## See [the docs](https://example.com)\n",
        encoding="utf-8",
    )
    result = tools.outline(tool_context(workspace), {"file": "notes.md"})
    assert result["headings"] == [
        {"level": 1, "text": "The plan", "line": 1},
        {"level": 2, "text": "See the docs", "line": 7},
    ]


@pytest.mark.parametrize(
    ("path", "code"),
    [("missing.md", "E_NOT_FOUND"), ("notes.txt", "E_BAD_ARGS"), ("../outside.md", "E_DENY_PATH"),
     (".pneuma/history.md", "E_DENY_PATH")],
)
def test_outline_errors(workspace: Path, path: str, code: str):
    (workspace / "notes.txt").write_text("plain text\n", encoding="utf-8")
    with pytest.raises(ToolError) as caught:
        tools.outline(tool_context(workspace), {"file": path})
    assert caught.value.code == code


def test_outline_through_pneumas_tool_runtime(mode, workspace: Path):
    # The same call the agent makes over MCP or `pneuma tool`: arguments and
    # result are checked against the manifest's schemas.
    runtime = pytest.importorskip("pneuma.tools.runtime")
    result = runtime.call_tool(mode, workspace, "outline", {"file": "welcome.md"})
    assert result["title"].startswith("Welcome to "), result
    bad = runtime.call_tool(mode, workspace, "outline", {"file": "welcome.md", "depth": 2})
    assert bad["error"]["code"] == "E_BAD_ARGS"
    missing = runtime.call_tool(mode, workspace, "outline", {"file": "missing.md"})
    assert missing["error"]["code"] == "E_NOT_FOUND"


def test_manifest_is_plain_json():
    # Pneuma reads manifest.json with a strict schema; keep it hand-editable JSON.
    data = json.loads((PACKAGE_DIR / "manifest.json").read_text(encoding="utf-8"))
    assert data["name"] == MODE
