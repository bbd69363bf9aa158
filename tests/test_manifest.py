"""The manifest model: what loads, what is refused and how the refusal reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from pneuma.cli import cli
from pneuma.host.manifest import ManifestError, localize, parse_manifest

SLIDE_MANIFEST = (
    Path(__file__).resolve().parent.parent / "plugins" / "slide" / "pneuma_slide" / "manifest.json"
)


def _slide() -> dict[str, Any]:
    return json.loads(SLIDE_MANIFEST.read_text(encoding="utf-8"))


def _problems(data: dict[str, Any], plugin: str = "acme") -> ManifestError:
    with pytest.raises(ManifestError) as info:
        parse_manifest(data, plugin)
    return info.value


# --- valid manifests ---


def test_slide_manifest_loads_with_its_declarations():
    manifest = parse_manifest(_slide(), "slide")
    assert manifest.name == "slide"
    assert manifest.viewer_api.workspace.type == "manifest"
    assert manifest.viewer_api.workspace.manifest_file == "manifest.json"
    assert manifest.action("navigate-to").params["file"].required is True
    assert [w.id for w in manifest.workflows] == ["build-deck"]
    assert manifest.init.seed_files == {"seeds/": "."}


def test_minimal_manifest_loads_with_defaults(minimal_manifest):
    manifest = parse_manifest(minimal_manifest(), "demo")
    assert manifest.viewer.watch_patterns == ["**/*"]
    assert manifest.viewer.static_dir == "static"
    assert manifest.supported_backends == ["claude-code", "native", "socket", "none"]
    assert manifest.agent.permission_mode == "bypassPermissions"
    assert manifest.skill.source_dir == "skill"
    assert [a.id for a in manifest.agent_actions] == ["open-file"]


def test_the_bare_minimum_is_name_version_display_name_and_skill():
    manifest = parse_manifest(
        {"name": "bare", "version": "0.0.1", "displayName": "Bare",
         "skill": {"installName": "bare"}},
        "bare",
    )
    assert manifest.viewer_api.actions == []
    assert manifest.tools == [] and manifest.workflows == []


def test_to_json_is_camel_case_and_round_trips(minimal_manifest):
    manifest = parse_manifest(_slide(), "slide")
    data = manifest.to_json()
    assert "viewerApi" in data and "viewer_api" not in data
    assert data["viewerApi"]["actions"][0]["agentInvocable"] is True
    assert parse_manifest(data, "slide") == manifest


def test_prerelease_and_build_versions_are_semver(minimal_manifest):
    for version in ("1.2.3-beta.1", "0.1.0+build.5"):
        data = minimal_manifest()
        data["version"] = version
        assert parse_manifest(data, "demo").version == version


def test_tool_and_workflow_steps_referencing_it_load(minimal_manifest):
    data = minimal_manifest()
    data["tools"] = [
        {
            "name": "word_count",
            "description": "Count the words of a note.",
            "inputSchema": {"type": "object", "properties": {"file": {"type": "string"}},
                            "required": ["file"]},
            "handler": "pneuma_demo.tools:word_count",
        }
    ]
    data["workflows"] = [
        {"id": "tidy", "label": "Tidy up", "steps": [
            {"id": "count", "label": "Count", "tool": "word_count", "params": {"file": "a.md"}},
            {"id": "show", "label": "Show", "action": "open-file", "params": {"file": "a.md"}},
            {"id": "think", "label": "Think", "prompt": "Suggest cuts."},
        ]}
    ]
    manifest = parse_manifest(data, "demo")
    assert manifest.tool("word_count").handler == "pneuma_demo.tools:word_count"
    assert [s.id for s in manifest.workflows[0].steps] == ["count", "show", "think"]


# --- invalid manifests: the error names the plugin and the camelCase field ---


def _bad_category(m):
    m["viewerApi"]["actions"][0]["category"] = "navigation"


def _duplicate_action(m):
    m["viewerApi"]["actions"][1]["id"] = "open-file"


def _both_tool_and_action(m):
    m["workflows"] = [{"id": "w", "label": "W", "steps": [
        {"id": "s", "label": "S", "tool": "x", "action": "open-file"}]}]


def _bad_semver(m):
    m["version"] = "1.0"


def _select_without_options(m):
    m["init"]["params"] = [{"name": "theme", "label": "Theme", "type": "select"}]


def _invalid_json_schema(m):
    m["tools"] = [{"name": "t", "description": "d", "handler": "a.b:c",
                   "inputSchema": {"type": "object", "properties": {"x": {"type": 12}}}}]


def _extra_key_top(m):
    m["displayname"] = "typo"


def _extra_key_nested(m):
    m["viewerApi"]["workspace"]["multifile"] = True


def _bad_mode_name(m):
    m["name"] = "My Mode"


def _manifest_workspace_without_file(m):
    m["viewerApi"]["workspace"]["type"] = "manifest"


def _mcp_server_without_command_or_url(m):
    m["skill"]["mcpServers"] = [{"name": "tools"}]


def _bad_handler(m):
    m["tools"] = [{"name": "t", "description": "d", "handler": "not a reference",
                   "inputSchema": {"type": "object"}}]


def _non_object_tool_schema(m):
    m["tools"] = [{"name": "t", "description": "d", "handler": "a.b:c",
                   "inputSchema": {"type": "string"}}]


def _select_default_not_an_option(m):
    m["init"]["params"] = [{"name": "theme", "label": "Theme", "type": "select",
                            "options": ["light", "dark"], "defaultValue": "blue"}]


def _install_name_with_slash(m):
    m["skill"]["installName"] = "../escape"


@pytest.mark.parametrize(
    "mutate, field, message",
    [
        (_bad_category, "viewerApi.actions.0.category", "'file', 'navigate', 'ui' or 'custom'"),
        (_duplicate_action, "viewerApi.actions", "duplicate action 'open-file'"),
        (_both_tool_and_action, "workflows.0.steps.0", "exactly one of 'tool', 'action'"),
        (_bad_semver, "version", "semantic version"),
        (_select_without_options, "init.params.0", "needs 'options'"),
        (_invalid_json_schema, "tools.0.inputSchema", "not a valid JSON Schema"),
        (_extra_key_top, "displayname", "Extra inputs are not permitted"),
        (_extra_key_nested, "viewerApi.workspace.multifile", "Extra inputs are not permitted"),
        (_bad_mode_name, "name", "lowercase"),
        (_manifest_workspace_without_file, "viewerApi.workspace", "manifestFile"),
        (_mcp_server_without_command_or_url, "skill.mcpServers.0", "'command' or 'url'"),
        (_bad_handler, "tools.0.handler", "package.module:function"),
        (_non_object_tool_schema, "tools.0.inputSchema", "'type': 'object'"),
        (_select_default_not_an_option, "init.params.0", "one of 'options'"),
        (_install_name_with_slash, "skill.installName", "single directory name"),
    ],
    ids=lambda v: v.__name__.strip("_") if callable(v) else None,
)
def test_invalid_manifest_names_plugin_and_field(minimal_manifest, mutate, field, message):
    data = minimal_manifest()
    mutate(data)
    error = _problems(data, plugin="acme-notes")
    assert error.plugin == "acme-notes"
    text = str(error)
    assert text.startswith("invalid manifest in plugin 'acme-notes': ")
    assert any(p.startswith(f"{field}: ") and message in p for p in error.problems), error.problems
    assert f"{field}: " in text


def test_every_problem_is_reported_at_once(minimal_manifest):
    data = minimal_manifest()
    _bad_category(data)
    _bad_semver(data)
    _extra_key_top(data)
    error = _problems(data)
    fields = sorted(p.split(":")[0] for p in error.problems)
    assert fields == ["displayname", "version", "viewerApi.actions.0.category"]


def test_workflow_step_naming_unknown_tool_or_action_is_refused(minimal_manifest):
    for kind, name in (("tool", "spell_check"), ("action", "close-file")):
        data = minimal_manifest()
        data["workflows"] = [{"id": "tidy", "label": "Tidy", "steps": [
            {"id": "first", "label": "First", "prompt": "Read the notes."},
            {"id": "second", "label": "Second", kind: name},
        ]}]
        error = _problems(data, plugin="acme-notes")
        text = str(error)
        assert "acme-notes" in text
        assert f"unknown {'tool' if kind == 'tool' else 'viewer action'} '{name}'" in text
        assert "workflow 'tidy' step 'second'" in text


@pytest.mark.parametrize("kind", ["tool", "action"])
def test_workflow_step_naming_unknown_reference_names_the_field_path(minimal_manifest, kind):
    data = minimal_manifest()
    data["workflows"] = [{"id": "tidy", "label": "Tidy", "steps": [
        {"id": "first", "label": "First", "prompt": "Read the notes."},
        {"id": "second", "label": "Second", kind: "missing"},
    ]}]
    error = _problems(data)
    assert any(p.startswith(f"workflows.0.steps.1.{kind}: ") for p in error.problems), (
        error.problems
    )


def test_duplicate_ids_of_other_kinds_are_refused(minimal_manifest):
    steps = minimal_manifest()
    steps["workflows"] = [{"id": "w", "label": "W", "steps": [
        {"id": "s", "label": "S", "prompt": "p"}, {"id": "s", "label": "S", "prompt": "q"}]}]
    steps["init"]["params"] = [{"name": "a", "label": "A"}, {"name": "a", "label": "A"}]
    problems = _problems(steps).problems
    assert any(p.startswith("workflows.0.steps: ") and "duplicate step 's'" in p
               for p in problems)
    assert any(p.startswith("init.params: ") and "duplicate param 'a'" in p for p in problems)

    workflows = minimal_manifest()
    workflows["workflows"] = [
        {"id": "w", "label": "W", "steps": [{"id": "s", "label": "S", "prompt": "p"}]},
        {"id": "w", "label": "W2", "steps": [{"id": "s", "label": "S", "prompt": "p"}]},
    ]
    workflows["viewerApi"]["commands"] = [{"id": "c", "label": "C", "prompt": "p"},
                                          {"id": "c", "label": "C", "prompt": "q"}]
    problems = _problems(workflows).problems
    assert any(p.startswith("workflows: ") and "duplicate workflow 'w'" in p for p in problems)
    assert any(p.startswith("viewerApi.commands: ") and "duplicate command 'c'" in p
               for p in problems)


def test_non_object_manifest_is_a_manifest_error():
    error = _problems(["not", "a", "manifest"], plugin="acme")
    assert "acme" in str(error)


# --- localize ---


@pytest.mark.parametrize(
    "text, locale, expected",
    [
        ({"en": "Slides", "zh-CN": "幻灯片"}, "zh-CN", "幻灯片"),  # exact
        ({"en": "Slides", "zh-CN": "幻灯片"}, "zh-TW", "幻灯片"),  # same language
        ({"en-GB": "Colour", "fr": "Couleur"}, "en", "Colour"),  # language of a key
        ({"en": "Slides", "zh-CN": "幻灯片"}, "de", "Slides"),  # English fallback
        ({"fr": "Diapos", "de": "Folien"}, "ja", "Diapos"),  # first entry
        ({"en": "Slides", "zh-CN": "幻灯片"}, "en", "Slides"),  # default locale
        ("Slides", "zh-CN", "Slides"),  # plain string
        (None, "en", ""),
        ({}, "en", ""),
    ],
)
def test_localize_fallbacks(text, locale, expected):
    assert localize(text, locale) == expected


def test_localize_defaults_to_english():
    assert localize({"zh-CN": "幻灯片", "en": "Slides"}) == "Slides"


# --- pneuma modes schema ---


def _schema() -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["modes", "schema"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_modes_schema_validates_the_slide_manifest():
    schema = _schema()
    Draft202012Validator.check_schema(schema)
    assert schema["title"] == "Pneuma mode manifest"
    validator = Draft202012Validator(schema)
    errors = list(validator.iter_errors(_slide()))
    assert errors == []


def test_modes_schema_rejects_what_the_model_rejects(minimal_manifest):
    validator = Draft202012Validator(_schema())
    assert list(validator.iter_errors(minimal_manifest())) == []
    unknown_key = minimal_manifest()
    unknown_key["viewerApi"]["actions"][0]["agentinvocable"] = True
    assert list(validator.iter_errors(unknown_key))
    bad_category = minimal_manifest()
    _bad_category(bad_category)
    assert list(validator.iter_errors(bad_category))
    missing_skill = minimal_manifest()
    del missing_skill["skill"]
    assert list(validator.iter_errors(missing_skill))
