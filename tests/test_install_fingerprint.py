"""`pneuma run` skips the skill install when its fingerprint says nothing
changed; any change to what the install reads or writes means a full
install. Also: start-up shortcuts that must not change behaviour (one mode
validated at a time, cached tool-schema checks, no first save when the
state files are current)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pneuma.host import registry as modes
from pneuma.host.manifest import ManifestError, SchemaCheckCache, parse_manifest
from pneuma.host.modes import UnknownModeError
from pneuma.workspace import default_sections
from pneuma.workspace.skill import FINGERPRINT_FILE, install_fingerprint, install_skill

PARAMS = {"title": "Field notes"}


@pytest.fixture
def demo(add_mode, minimal_manifest):
    manifest = minimal_manifest()
    manifest["init"]["params"] = [{"name": "title", "label": "Title", "defaultValue": "Notes"}]
    manifest["workflows"] = [
        {"id": "tidy", "label": "Tidy", "steps": [{"id": "go", "label": "Go", "prompt": "Tidy."}]}
    ]
    return add_mode(manifest, skill_md="---\nname: pneuma-demo\ndescription: d\n---\n# {{title}}\n")


def _run_install(mode, workspace, params=PARAMS, pm=None):
    return install_skill(mode, workspace, params, pm=pm, reuse_fingerprint=True)


def _renders(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = default_sections.render_template

    def spy(name, **context):
        calls.append(name)
        return real(name, **context)

    monkeypatch.setattr(default_sections, "render_template", spy)
    return calls


def test_an_unchanged_workspace_is_not_rendered_again(demo, workspace, pm, monkeypatch, snapshot):
    first = _run_install(demo, workspace, pm=pm)
    assert first.changed and (workspace / FINGERPRINT_FILE).is_file()
    before = snapshot(workspace)
    calls = _renders(monkeypatch)
    again = _run_install(demo, workspace, pm=pm)
    assert again.changes == [] and calls == []
    assert snapshot(workspace) == before


@pytest.mark.parametrize(
    "change",
    [
        "param",
        "claude_md_edit",
        "claude_md_deleted",
        "mcp_json",
        "gitignore",
        "skill_source",
        "skill_source_added",
        "installed_skill_edit",
        "installed_skill_extra",
        "command_deleted",
        "install_record",
        "template",
    ],
)
def test_any_change_means_a_full_install(demo, workspace, pm, change, monkeypatch, tmp_path):
    _run_install(demo, workspace, pm=pm)
    params = dict(PARAMS)
    installed = workspace / ".claude" / "skills" / "pneuma-demo"
    if change == "param":
        params["title"] = "Other notes"
    elif change == "claude_md_edit":
        claude = workspace / "CLAUDE.md"
        claude.write_text(claude.read_text().replace("<!-- pneuma:end -->", "mine\n<!-- pneuma:end -->"))
    elif change == "claude_md_deleted":
        (workspace / "CLAUDE.md").unlink()
    elif change == "mcp_json":
        (workspace / ".mcp.json").write_text('{"mcpServers": {}}\n')
    elif change == "gitignore":
        (workspace / ".gitignore").write_text("node_modules/\n")
    elif change == "skill_source":
        (demo.skill_dir / "SKILL.md").write_text("---\nname: pneuma-demo\ndescription: d\n---\nnew\n")
    elif change == "skill_source_added":
        (demo.skill_dir / "extra.md").write_text("more")
    elif change == "installed_skill_edit":
        (installed / "SKILL.md").write_text("edited by hand")
    elif change == "installed_skill_extra":
        (installed / "stray.md").write_text("stray")
    elif change == "command_deleted":
        (workspace / ".claude" / "commands" / "tidy.md").unlink()
    elif change == "install_record":
        (workspace / ".pneuma" / "installed.json").write_text("{}")
    elif change == "template":
        # A copy of the templates with one edited, as a host upgrade would bring.
        copy = tmp_path / "templates"
        subprocess.run(["cp", "-r", str(default_sections.templates_dir()), str(copy)], check=True)
        target = copy / "claude_md" / "viewer_api_section.md.j2"
        target.write_text(target.read_text() + "\nOne more line from a newer host.\n")
        monkeypatch.setattr("pneuma.host.paths.templates_dir", lambda: copy)
        monkeypatch.setattr(default_sections, "templates_dir", lambda: copy)
        default_sections.template_environment.cache_clear()
    calls = _renders(monkeypatch)
    try:
        result = _run_install(demo, workspace, params, pm=pm)
    finally:
        default_sections.template_environment.cache_clear()
    assert calls, "the install was skipped although something changed"
    assert result.changed
    # After the full install, the workspace is what a plain install makes.
    assert install_skill(demo, workspace, params, pm=pm, check=True).changes == []


def test_check_ignores_the_fingerprint(demo, workspace, pm):
    _run_install(demo, workspace, pm=pm)
    claude = workspace / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("# ", "#  ", 1))
    # A stale fingerprint must never make --check report "up to date".
    assert install_skill(demo, workspace, PARAMS, pm=pm, check=True).changed


def test_warnings_are_repeated_when_the_install_is_skipped(demo, workspace, pm):
    (workspace / ".claude" / "commands").mkdir(parents=True)
    (workspace / ".claude" / "commands" / "tidy.md").write_text("my own command")
    first = _run_install(demo, workspace, pm=pm)
    assert first.warnings
    again = _run_install(demo, workspace, pm=pm)
    assert again.changes == [] and again.warnings == first.warnings


def test_a_plugin_adding_sections_disables_the_fingerprint(demo, workspace, pm, register_plugin):
    from pneuma import hookimpl
    from pneuma.host.modes import ClaudeMdSection

    class Sections:
        @hookimpl
        def claude_md_sections(self, mode, workspace):
            return [ClaudeMdSection("extra", "Something that may change on every run.\n")]

    with register_plugin(Sections(), "extra-sections"):
        assert install_fingerprint(demo, workspace, PARAMS, pm) is None
        _run_install(demo, workspace, pm=pm)
        assert not (workspace / FINGERPRINT_FILE).exists()


def test_run_path_imports_neither_jinja2_nor_jsonschema_when_up_to_date(tmp_path):
    """What `pneuma run` does before its server starts, in a fresh
    interpreter: the second time, nothing is rendered or re-validated."""
    workspace = tmp_path / "ws"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    script = f"""
import sys
from pathlib import Path
from pneuma.host.registry import get_mode
from pneuma.workspace.skill import install_skill
from pneuma.workspace.params import init_workspace
mode = get_mode("slide", schema_cache=True)
ws = Path({str(workspace)!r})
result = init_workspace(mode, ws, {{}}, prompt=None)
install_skill(mode, ws, result.params, reuse_fingerprint=True)
print(sorted(m for m in ("jinja2", "jsonschema") if m in sys.modules))
"""
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, check=True).stdout.strip() for _ in range(2)]
    assert runs[0] == "['jinja2']"
    assert runs[1] == "[]"


# --- one mode at a time, cached schema checks ---


def test_get_mode_validates_only_the_mode_asked_for(pm, add_mode, minimal_manifest, register_plugin,
                                                     mode_plugin, tmp_path):
    broken = minimal_manifest("broken")
    broken["viewerApi"] = {"actions": [{"id": "x", "label": "X", "category": "nope"}]}
    with register_plugin(mode_plugin(broken, tmp_path), "broken-plugin"):
        assert modes.get_mode("slide", pm).name == "slide"
        assert modes._cache == {}  # the full registry was never built
        # An unknown name still gets the full report, broken plugins included.
        with pytest.raises(UnknownModeError, match="broken-plugin"):
            modes.get_mode("nothing-here", pm)


def test_the_same_mode_from_two_plugins_resolves_as_load_modes_does(pm, add_mode, minimal_manifest,
                                                                    register_plugin, mode_plugin,
                                                                    tmp_path):
    first = add_mode(minimal_manifest("twin"))
    other = minimal_manifest("twin")
    other["version"] = "9.9.9"
    with register_plugin(mode_plugin(other, first.package_dir), "zz-second"):
        lazy = modes.get_mode("twin", pm)
        modes.clear_cache()
        full = modes.load_modes(pm).get("twin")
        assert (lazy.plugin_name, lazy.manifest.version) == (full.plugin_name, full.manifest.version)


def _tool_manifest(minimal_manifest, schema):
    manifest = minimal_manifest()
    manifest["tools"] = [{"name": "t", "description": "A tool.", "inputSchema": schema,
                          "handler": "pkg.mod:fn"}]
    return manifest


def test_the_schema_cache_skips_only_schemas_found_valid_before(minimal_manifest, tmp_path,
                                                                monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    good = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}
    bad = {"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}}
    parse_manifest(_tool_manifest(minimal_manifest, good), "p", schema_cache=True)
    cache = SchemaCheckCache.load()
    assert cache.known_valid(good) and not cache.known_valid(bad)
    for _ in range(2):  # an invalid schema fails every time, cache or not
        with pytest.raises(ManifestError, match="not a valid JSON Schema"):
            parse_manifest(_tool_manifest(minimal_manifest, bad), "p", schema_cache=True)
    assert not SchemaCheckCache.load().known_valid(bad)
    # The object check still applies to a cached schema.
    not_object = {"type": "array"}
    for _ in range(2):
        with pytest.raises(ManifestError, match="must describe an object"):
            parse_manifest(_tool_manifest(minimal_manifest, not_object), "p", schema_cache=True)
    # A damaged cache file is ignored.
    (tmp_path / "cache" / "pneuma" / SchemaCheckCache.FILE).write_text("{not json")
    parse_manifest(_tool_manifest(minimal_manifest, good), "p", schema_cache=True)
    assert json.loads((tmp_path / "cache" / "pneuma" / SchemaCheckCache.FILE).read_text())["valid"]


# --- the first save ---


def test_the_first_save_is_skipped_only_when_the_files_are_current(tmp_path):
    from pneuma.server.persistence import (
        load_session,
        save_session,
        stored_state_matches,
    )

    workspace = tmp_path
    values = dict(session_id="s1", mode="slide", backend="none", agent_session_id="a1",
                  last_seq=3)
    assert not stored_state_matches(workspace, **values)  # nothing stored yet
    save_session(workspace, **values)
    stored = load_session(workspace, "slide", "none")
    assert stored_state_matches(workspace, session_id=stored.session_id, mode="slide",
                                backend="none", agent_session_id=stored.agent_session_id,
                                last_seq=stored.last_seq)
    for key, value in [("last_seq", 4), ("agent_session_id", None),
                       ("backend", "claude-code")]:
        assert not stored_state_matches(workspace, **{**values, key: value})
    (workspace / ".pneuma" / "session.json").write_text("{broken")
    assert not stored_state_matches(workspace, **values)


def test_paths_are_real(tmp_path):
    # The fingerprint file lives with the other state, which the watcher ignores.
    assert Path(FINGERPRINT_FILE).parts[0] == ".pneuma"
