"""Installing a mode's skill into a workspace: skill files, CLAUDE.md,
slash commands, .mcp.json, .gitignore — and running it again changes nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pneuma.cli import cli
from pneuma.host.registry import get_mode
from pneuma.workspace.skill import SkillInstallError, apply_params, install_skill

CURL = (
    'curl -s -X POST "$PNEUMA_API/api/viewer/action" -H "Authorization: Bearer $PNEUMA_TOKEN" '
    "-H 'Content-Type: application/json' -d '{\"actionId\":\"<id>\",\"params\":{...}}'"
)

TEMPLATED_SKILL = """---
name: pneuma-demo
description: Use this skill when writing notes in a Pneuma demo workspace.
---
# {{title}}

Notes are {{ width }} px wide.
{{#apiKey}}The search API key is in `.env` as DEMO_API_KEY.{{/apiKey}}
{{^apiKey}}There is no API key: work offline.{{/apiKey}}
{{#title}}Outer {{#apiKey}}and inner{{/apiKey}} block.{{/title}}
Kept as written: {{unknown}}, {{#other}}x{{/other}}, {{#each items}}{{this}}{{/each}}.
"""


def _install(mode, workspace, params=None, pm=None):
    return install_skill(mode, workspace, params or {}, pm=pm)


@pytest.fixture
def demo(add_mode, minimal_manifest, tmp_path):
    """The temp mode with params, env mapping, a workflow and an MCP server,
    plus a reference file and a binary asset in its skill folder."""
    manifest = minimal_manifest()
    manifest["init"]["params"] = [
        {"name": "title", "label": "Notebook title", "defaultValue": "Field notes"},
        {"name": "width", "label": "Width", "type": "number", "defaultValue": 800},
        {"name": "apiKey", "label": "Search API key", "sensitive": True, "defaultValue": ""},
    ]
    manifest["skill"]["envMapping"] = {"DEMO_API_KEY": "apiKey", "DEMO_TITLE": "title"}
    manifest["skill"]["mcpServers"] = [
        {"name": "demo-search", "command": "demo-search", "args": ["--title", "{{title}}"]}
    ]
    manifest["workflows"] = [
        {"id": "tidy-notes", "label": "Tidy the notes", "description": "Merge duplicates",
         "steps": [
             {"id": "read", "label": "Read every note", "prompt": "Read all notes."},
             {"id": "show", "label": "Show the index", "action": "open-file",
              "params": {"file": "index.md"}, "requiresConfirmation": True},
         ]},
    ]
    mode = add_mode(manifest, skill_md=TEMPLATED_SKILL)
    (mode.skill_dir / "reference").mkdir(exist_ok=True)
    (mode.skill_dir / "reference" / "format.txt").write_text("Title line: # {{title}}\n")
    (mode.skill_dir / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n{{title}}\x00\xff")
    return mode


PARAMS = {"title": "Field notes", "width": 800, "apiKey": "sk-test-123"}


# --- skill files ---


def test_slide_skill_files_are_installed(pm, workspace):
    slide = get_mode("slide", pm)
    result = _install(slide, workspace, {"slideWidth": 1280, "slideHeight": 720}, pm)
    assert result.changed and result.warnings == []
    installed = workspace / ".claude" / "skills" / "pneuma-slide"
    sources = {p.relative_to(slide.skill_dir).as_posix() for p in slide.skill_dir.rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert "SKILL.md" in sources
    assert {p.relative_to(installed).as_posix() for p in installed.rglob("*")
            if p.is_file()} == sources
    for rel in sources:
        source = (slide.skill_dir / rel).read_bytes()
        if b"{{" not in source:
            assert (installed / rel).read_bytes() == source, rel
    state = json.loads((workspace / ".pneuma" / "installed.json").read_text())
    assert state["mode"] == "slide" and state["skill"] == ".claude/skills/pneuma-slide"
    assert json.loads((workspace / ".pneuma" / "skill-version.json").read_text()) == {
        "mode": "slide", "version": slide.manifest.version}


def test_stale_skill_files_are_purged(pm, workspace):
    installed = workspace / ".claude" / "skills" / "pneuma-slide"
    (installed / "old" / "deep").mkdir(parents=True)
    (installed / "removed-reference.md").write_text("from an older version")
    (installed / "old" / "deep" / "notes.md").write_text("stale")
    mine = workspace / ".claude" / "skills" / "my-own-skill" / "SKILL.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("---\nname: my-own-skill\ndescription: mine\n---\n")
    result = _install(get_mode("slide", pm), workspace, {}, pm)
    assert not (installed / "removed-reference.md").exists()
    assert not (installed / "old").exists()
    assert (installed / "SKILL.md").is_file()
    assert mine.read_text().startswith("---\nname: my-own-skill")
    deleted = {c.path for c in result.changes if c.content is None}
    assert deleted == {".claude/skills/pneuma-slide/removed-reference.md",
                       ".claude/skills/pneuma-slide/old/deep/notes.md"}


def test_params_fill_the_skill(demo, pm, workspace):
    _install(demo, workspace, PARAMS, pm)
    skill = workspace / ".claude" / "skills" / "pneuma-demo"
    text = (skill / "SKILL.md").read_text()
    assert "# Field notes\n" in text
    assert "Notes are 800 px wide." in text
    assert "The search API key is in `.env` as DEMO_API_KEY." in text
    assert "There is no API key" not in text
    assert "Outer and inner block." in text
    assert ("Kept as written: {{unknown}}, {{#other}}x{{/other}}, "
            "{{#each items}}{{this}}{{/each}}.") in text
    assert "{{title}}" not in text and "{{#apiKey}}" not in text
    assert (skill / "reference" / "format.txt").read_text() == "Title line: # Field notes\n"
    assert (skill / "logo.png").read_bytes() == b"\x89PNG\r\n\x1a\n{{title}}\x00\xff"


def test_inverted_blocks_show_when_a_param_is_unset(demo, pm, workspace):
    _install(demo, workspace, {**PARAMS, "apiKey": ""}, pm)
    text = (workspace / ".claude" / "skills" / "pneuma-demo" / "SKILL.md").read_text()
    assert "There is no API key: work offline." in text
    assert "DEMO_API_KEY" not in text
    assert "Outer  block." in text


@pytest.mark.parametrize(
    "template, params, expected",
    [
        ("{{x}}", {"x": 3}, "3"),
        ("{{ x }}!", {"x": "hi"}, "hi!"),
        ("{{#x}}yes{{/x}}{{^x}}no{{/x}}", {"x": "on"}, "yes"),
        ("{{#x}}yes{{/x}}{{^x}}no{{/x}}", {"x": ""}, "no"),
        ("{{#x}}yes{{/x}}{{^x}}no{{/x}}", {"x": "false"}, "no"),
        ("{{#x}}yes{{/x}}{{^x}}no{{/x}}", {"x": 0}, "no"),
        ("{{#x}}yes{{/x}}{{^x}}no{{/x}}", {}, "{{#x}}yes{{/x}}{{^x}}no{{/x}}"),
        ("{{#x}}\nmulti\nline {{x}}\n{{/x}}", {"x": "v"}, "\nmulti\nline v\n"),
        ("{{y}} and {{x}}", {"x": 1}, "{{y}} and 1"),
        ("${{x}}", {"x": 5}, "$5"),
    ],
)
def test_apply_params(template, params, expected):
    assert apply_params(template, params) == expected


def test_env_file_from_env_mapping(demo, pm, workspace):
    _install(demo, workspace, {**PARAMS, "title": "My field notes"}, pm)
    env = (workspace / ".claude" / "skills" / "pneuma-demo" / ".env").read_text()
    assert env == 'DEMO_API_KEY=sk-test-123\nDEMO_TITLE="My field notes"\n'


def test_env_file_leaves_out_unset_params(demo, pm, workspace):
    _install(demo, workspace, {**PARAMS, "apiKey": ""}, pm)
    env = (workspace / ".claude" / "skills" / "pneuma-demo" / ".env").read_text()
    assert env == "DEMO_TITLE=\"Field notes\"\n"


def test_env_file_with_a_secret_is_private_and_ignored(demo, pm, workspace):
    _install(demo, workspace, PARAMS, pm)
    env = workspace / ".claude" / "skills" / "pneuma-demo" / ".env"
    assert env.stat().st_mode & 0o777 == 0o600
    assert ".claude/skills/pneuma-demo/.env" in (workspace / ".gitignore").read_text()


# --- CLAUDE.md ---


def test_claude_md_has_the_curl_command_and_an_action_table(demo, pm, workspace):
    (workspace / "CLAUDE.md").write_text("# My notebook\n\nBe brief.\n")
    _install(demo, workspace, PARAMS, pm)
    text = (workspace / "CLAUDE.md").read_text()
    assert text.startswith("# My notebook\n\nBe brief.\n\n<!-- pneuma:start -->\n")
    assert CURL in text
    assert '"actionId"' in text and '"action":' not in text
    assert re.search(r"^\| `open-file` \| Show a note in the viewer \| file: string \(required\) "
                     r"— Note to show \|$", text, re.M)
    assert "zoom-reset" not in text and "Reset the zoom" not in text
    assert ("-d '{\"actionId\": \"open-file\", \"params\": {\"file\": \"…\"}}'") in text
    assert "Read `.claude/skills/pneuma-demo/SKILL.md`" in text
    assert "`logo.png`" in text and "`reference/format.txt`" in text
    assert '<viewer-context mode="demo"' in text
    assert "`/tidy-notes` — **Tidy the notes**: Merge duplicates" in text


def test_claude_md_lists_every_slide_action(pm, workspace):
    slide = get_mode("slide", pm)
    _install(slide, workspace, {}, pm)
    text = (workspace / "CLAUDE.md").read_text()
    assert CURL in text
    assert slide.manifest.agent_actions
    for action in slide.manifest.viewer_api.actions:
        row = re.search(rf"^\| `{re.escape(action.id)}` \|", text, re.M)
        assert bool(row) == action.agent_invocable, action.id
    assert text.count("<!-- pneuma:start -->") == 1
    assert text.count("<!-- pneuma:viewer-api:start -->") == 1


def test_a_mode_without_agent_actions_says_so(add_mode, minimal_manifest, pm, workspace):
    manifest = minimal_manifest("quiet")
    del manifest["viewerApi"]["actions"][0]
    _install(add_mode(manifest), workspace, {}, pm)
    text = (workspace / "CLAUDE.md").read_text()
    assert "This viewer offers no actions to the agent" in text
    assert "$PNEUMA_API/api/viewer/action" not in text


# --- idempotence and --check ---


@pytest.mark.parametrize("which", ["slide", "demo"])
def test_second_install_changes_nothing(which, demo, pm, workspace, snapshot):
    mode = demo if which == "demo" else get_mode("slide", pm)
    (workspace / ".gitignore").write_text("node_modules/\n")
    _install(mode, workspace, PARAMS, pm)
    before = snapshot(workspace)
    mtimes = {p: p.stat().st_mtime_ns for p in workspace.rglob("*") if p.is_file()}
    again = _install(mode, workspace, PARAMS, pm)
    assert again.changes == []
    assert snapshot(workspace) == before
    assert {p: p.stat().st_mtime_ns for p in workspace.rglob("*") if p.is_file()} == mtimes


def test_check_exits_1_before_install_and_0_after(pm, workspace, snapshot):
    runner = CliRunner()
    check = ["skill", "install", "--mode", "slide", "-w", str(workspace), "--check"]
    before = runner.invoke(cli, check)
    assert before.exit_code == 1
    assert "would change: write CLAUDE.md" in before.stdout
    assert "out of date" in before.stderr
    assert snapshot(workspace) == {}
    install = runner.invoke(cli, ["skill", "install", "--mode", "slide", "-w", str(workspace),
                                  "--no-prompt"])
    assert install.exit_code == 0, install.output
    assert "slide skill installed" in install.stderr
    after = runner.invoke(cli, check)
    assert after.exit_code == 0, after.output
    assert after.stdout == ""
    assert "skill is up to date" in after.stderr
    (workspace / "CLAUDE.md").write_text((workspace / "CLAUDE.md").read_text() + "\nmine\n")
    assert runner.invoke(cli, check).exit_code == 0  # the person's text is not ours
    (workspace / ".claude" / "skills" / "pneuma-slide" / "SKILL.md").write_text("edited")
    drift = runner.invoke(cli, check)
    assert drift.exit_code == 1
    assert "would change: write .claude/skills/pneuma-slide/SKILL.md" in drift.stdout


def test_check_on_a_missing_workspace_exits_1(pm, tmp_path):
    result = CliRunner().invoke(cli, ["skill", "install", "--mode", "slide", "-w",
                                      str(tmp_path / "nowhere"), "--check"])
    assert result.exit_code == 1
    assert not (tmp_path / "nowhere").exists()


def test_unknown_mode_is_an_error_listing_installed_modes(pm, workspace):
    result = CliRunner().invoke(cli, ["skill", "install", "--mode", "nope", "-w", str(workspace)])
    assert result.exit_code == 2
    assert "no mode named 'nope' is installed (installed: slide)" in result.stderr


# --- .gitignore ---


@pytest.mark.parametrize(
    "existing, expected",
    [
        (None, ".pneuma/\n"),
        ("node_modules/\n*.log\n", "node_modules/\n*.log\n.pneuma/\n"),
        ("node_modules/", "node_modules/\n.pneuma/\n"),
        ("dist/\n/.pneuma\n", "dist/\n/.pneuma\n"),
        ("# build output\n.pneuma/*\n", "# build output\n.pneuma/*\n"),
    ],
)
def test_gitignore_gets_pneuma_once(pm, workspace, existing, expected):
    gitignore = workspace / ".gitignore"
    if existing is not None:
        gitignore.write_text(existing)
    slide = get_mode("slide", pm)
    _install(slide, workspace, {}, pm)
    assert gitignore.read_text() == expected
    _install(slide, workspace, {}, pm)
    assert gitignore.read_text() == expected


# --- .mcp.json ---


def _mcp(workspace: Path) -> dict:
    return json.loads((workspace / ".mcp.json").read_text())


def test_mcp_json_is_merged_keeping_the_users_entries(demo, pm, workspace):
    users = {"mcpServers": {"github": {"command": "gh-mcp", "args": []}}, "other": [1, 2]}
    (workspace / ".mcp.json").write_text(json.dumps(users))
    _install(demo, workspace, PARAMS, pm)
    data = _mcp(workspace)
    assert data["other"] == [1, 2]
    assert data["mcpServers"]["github"] == {"command": "gh-mcp", "args": []}
    assert data["mcpServers"]["demo-search"] == {
        "command": "demo-search", "args": ["--title", "Field notes"]}


def test_mcp_json_is_created_only_when_needed(pm, demo, workspace, tmp_path):
    _install(get_mode("slide", pm), workspace, {}, pm)
    assert not (workspace / ".mcp.json").exists()
    _install(demo, workspace, PARAMS, pm)
    assert set(_mcp(workspace)["mcpServers"]) == {"demo-search"}


def test_mcp_server_the_mode_stops_declaring_is_removed(demo, add_mode, pm, workspace):
    (workspace / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"github": {"command": "gh-mcp", "args": []}}}))
    _install(demo, workspace, PARAMS, pm)
    assert "demo-search" in _mcp(workspace)["mcpServers"]
    manifest = demo.manifest.to_json()
    manifest["version"] = "1.1.0"
    manifest["skill"]["mcpServers"] = [{"name": "demo-web", "url": "https://example.test/mcp"}]
    v2 = add_mode(manifest, package_dir=demo.package_dir)
    _install(v2, workspace, PARAMS, pm)
    assert _mcp(workspace)["mcpServers"] == {
        "github": {"command": "gh-mcp", "args": []},
        "demo-web": {"type": "http", "url": "https://example.test/mcp"},
    }
    manifest["skill"]["mcpServers"] = []
    _install(add_mode(manifest, package_dir=demo.package_dir), workspace, PARAMS, pm)
    assert _mcp(workspace)["mcpServers"] == {"github": {"command": "gh-mcp", "args": []}}


def test_invalid_mcp_json_is_refused_and_untouched(demo, pm, workspace, snapshot):
    broken = b'{"mcpServers": {"github": {"command": "gh-mcp",}}\n'
    (workspace / ".mcp.json").write_bytes(broken)
    with pytest.raises(SkillInstallError, match=r"\.mcp\.json is not valid JSON \(line 1: .*\); "
                       r"fix it by hand, Pneuma will not overwrite it"):
        _install(demo, workspace, PARAMS, pm)
    assert snapshot(workspace) == {".mcp.json": broken}


def test_mcp_json_that_is_not_an_object_is_refused(demo, pm, workspace):
    (workspace / ".mcp.json").write_text('{"mcpServers": ["github"]}')
    with pytest.raises(SkillInstallError, match="'mcpServers' is an object"):
        _install(demo, workspace, PARAMS, pm)
    assert (workspace / ".mcp.json").read_text() == '{"mcpServers": ["github"]}'


def test_cli_refuses_invalid_mcp_json(demo, pm, workspace):
    (workspace / ".mcp.json").write_text("{ not json")
    result = CliRunner().invoke(cli, ["skill", "install", "--mode", "demo", "-w", str(workspace),
                                      "--no-prompt"])
    assert result.exit_code == 2
    assert "pneuma: error: .mcp.json is not valid JSON (line 1" in result.stderr
    assert (workspace / ".mcp.json").read_text() == "{ not json"
    assert not (workspace / "CLAUDE.md").exists()


def test_users_mcp_entry_with_our_name_is_kept(demo, add_mode, pm, workspace):
    users = {"mcpServers": {"demo-search": {"command": "my-own-search", "args": ["--fast"]}}}
    (workspace / ".mcp.json").write_text(json.dumps(users))
    result = _install(demo, workspace, PARAMS, pm)
    assert _mcp(workspace) == users
    assert any("already has a server 'demo-search' of your own; it was kept" in w
               for w in result.warnings)
    # Still the person's after the mode drops the server: we never owned it.
    manifest = demo.manifest.to_json()
    manifest["skill"]["mcpServers"] = []
    _install(add_mode(manifest, package_dir=demo.package_dir), workspace, PARAMS, pm)
    assert _mcp(workspace) == users


def test_mcp_params_with_quotes_are_filled_safely(demo, pm, workspace):
    _install(demo, workspace, {**PARAMS, "title": 'Notes "2024" C:\\work'}, pm)
    assert _mcp(workspace)["mcpServers"]["demo-search"]["args"] == [
        "--title", 'Notes "2024" C:\\work']


# --- workflows as slash commands ---


def test_workflows_become_slash_commands(demo, pm, workspace):
    _install(demo, workspace, PARAMS, pm)
    command = (workspace / ".claude" / "commands" / "tidy-notes.md").read_text()
    assert command.startswith("---\ndescription: Tidy the notes — Merge duplicates\n---\n")
    assert "1. **Read every note**" in command and "Read all notes." in command
    assert ('Invoke the viewer action `open-file` with params `{"file": "index.md"}`'
            in command)
    assert "wait for their explicit confirmation" in command
    assert command.rstrip().endswith("$ARGUMENTS")


def test_workflow_no_longer_declared_is_removed(demo, add_mode, pm, workspace):
    _install(demo, workspace, PARAMS, pm)
    commands = workspace / ".claude" / "commands"
    (commands / "my-own.md").write_text("the person's own command\n")
    assert (commands / "tidy-notes.md").is_file()
    manifest = demo.manifest.to_json()
    manifest["workflows"] = []
    result = _install(add_mode(manifest, package_dir=demo.package_dir), workspace, PARAMS, pm)
    assert not (commands / "tidy-notes.md").exists()
    assert (commands / "my-own.md").read_text() == "the person's own command\n"
    assert any(c.path == ".claude/commands/tidy-notes.md" and c.content is None
               for c in result.changes)


def test_users_own_command_with_the_same_name_is_not_overwritten(demo, add_mode, pm, workspace):
    commands = workspace / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "tidy-notes.md").write_text("my tidy command\n")
    result = _install(demo, workspace, PARAMS, pm)
    assert (commands / "tidy-notes.md").read_text() == "my tidy command\n"
    assert any(".claude/commands/tidy-notes.md exists and was not written by Pneuma" in w
               for w in result.warnings)
    assert _install(demo, workspace, PARAMS, pm).changes == []
    manifest = demo.manifest.to_json()
    manifest["workflows"] = []
    _install(add_mode(manifest, package_dir=demo.package_dir), workspace, PARAMS, pm)
    assert (commands / "tidy-notes.md").read_text() == "my tidy command\n"


def test_cli_prints_the_command_warning(demo, pm, workspace):
    commands = workspace / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "tidy-notes.md").write_text("mine\n")
    result = CliRunner().invoke(cli, ["skill", "install", "--mode", "demo", "-w", str(workspace),
                                      "--no-prompt"])
    assert result.exit_code == 0, result.output
    assert "[pneuma] warning: .claude/commands/tidy-notes.md exists and was not written by " \
           "Pneuma" in result.stderr
