"""Workspace initialisation: seed files and init params."""

from __future__ import annotations

import tomllib

import pytest
from click.testing import CliRunner

from pneuma.cli import cli
from pneuma.host.registry import get_mode
from pneuma.workspace.params import (
    WorkspaceError,
    has_content,
    init_workspace,
    read_config,
    redact_params,
    resolve_params,
    seed_workspace,
)

SECRET = "sk-live-9f8e7d6c5b4a"


@pytest.fixture
def notes(add_mode, minimal_manifest):
    """The temp mode with one param of each kind (all with defaults)."""
    manifest = minimal_manifest()
    manifest["init"]["params"] = [
        {"name": "title", "label": "Notebook title", "defaultValue": "Field notes"},
        {"name": "width", "label": "Width", "type": "number", "defaultValue": 800},
        {"name": "theme", "label": "Theme", "type": "select", "options": ["light", "dark"],
         "defaultValue": "light"},
    ]
    return add_mode(manifest)


@pytest.fixture
def secret_mode(add_mode, minimal_manifest):
    """A mode whose API key is sensitive, has no default and goes into .env."""
    manifest = minimal_manifest("vault")
    manifest["init"]["params"] = [
        {"name": "apiKey", "label": "API key", "sensitive": True},
        {"name": "region", "label": "Region", "defaultValue": "eu"},
    ]
    manifest["skill"]["envMapping"] = {"VAULT_API_KEY": "apiKey"}
    return add_mode(manifest)


def _config(workspace):
    with (workspace / ".pneuma" / "config.toml").open("rb") as handle:
        return tomllib.load(handle)


# --- seeding ---


def test_seed_files_are_copied_into_an_empty_workspace(notes, workspace, seed_files):
    result = init_workspace(notes, workspace)
    assert sorted(result.seeded) == sorted(seed_files)
    for rel, text in seed_files.items():
        assert (workspace / rel).read_text() == text
    assert result.skipped == []


def test_a_missing_workspace_is_created_and_seeded(notes, tmp_path):
    target = tmp_path / "new" / "notebook"
    init_workspace(notes, target)
    assert (target / "welcome.md").is_file()


def test_slide_seeds_an_empty_workspace(pm, workspace):
    slide = get_mode("slide", pm)
    result = init_workspace(slide, workspace)
    assert "manifest.json" in result.seeded
    seeds = slide.package_dir / "seeds"
    for rel in result.seeded:
        assert (workspace / rel).read_bytes() == (seeds / rel).read_bytes()


def test_workspace_with_content_is_not_seeded(notes, workspace, snapshot):
    (workspace / "drafts").mkdir()
    (workspace / "drafts" / "mine.md").write_text("my own note\n")  # matches **/*.md
    result = init_workspace(notes, workspace)
    assert result.seeded == []
    assert snapshot(workspace).keys() == {"drafts/mine.md", ".pneuma/config.toml"}


def test_files_that_do_not_match_the_pattern_are_not_content(notes, workspace, seed_files):
    (workspace / "photo.png").write_bytes(b"\x89PNG")
    (workspace / ".pneuma").mkdir()
    (workspace / ".pneuma" / "old.md").write_text("state, not content")
    (workspace / ".claude" / "skills").mkdir(parents=True)
    (workspace / ".claude" / "skills" / "x.md").write_text("skill, not content")
    assert not has_content(notes, workspace)
    result = seed_workspace(notes, workspace)
    assert sorted(result.seeded) == sorted(seed_files)
    assert (workspace / "photo.png").read_bytes() == b"\x89PNG"


def test_without_a_pattern_any_file_is_content(add_mode, minimal_manifest, workspace):
    manifest = minimal_manifest("plain")
    del manifest["init"]["contentCheckPattern"]
    mode = add_mode(manifest)
    assert not has_content(mode, workspace)
    (workspace / "anything.bin").write_bytes(b"\x00")
    assert has_content(mode, workspace)
    assert seed_workspace(mode, workspace).seeded == []


def test_existing_files_are_never_overwritten(add_mode, minimal_manifest, workspace):
    manifest = minimal_manifest()
    manifest["init"]["contentCheckPattern"] = "notes/**/*.md"
    mode = add_mode(manifest)
    (workspace / "welcome.md").write_text("MY welcome, not yours\n")
    result = seed_workspace(mode, workspace)
    assert result.seeded == ["notes/ideas.md"]
    assert result.skipped == ["welcome.md"]
    assert (workspace / "welcome.md").read_text() == "MY welcome, not yours\n"


def test_a_single_seed_file_can_be_renamed(add_mode, minimal_manifest, workspace, seed_files):
    manifest = minimal_manifest("single")
    manifest["init"]["seedFiles"] = {"seeds/welcome.md": "README.md",
                                     "seeds/notes/ideas.md": "inbox/"}
    result = seed_workspace(add_mode(manifest), workspace)
    assert sorted(result.seeded) == ["README.md", "inbox/ideas.md"]
    assert (workspace / "README.md").read_text() == seed_files["welcome.md"]


def test_a_workspace_path_that_is_a_file_is_an_error(notes, tmp_path):
    path = tmp_path / "file.txt"
    path.write_text("x")
    with pytest.raises(WorkspaceError, match="is not a directory"):
        init_workspace(notes, path)


# --- params ---


def test_defaults_are_used_without_a_prompt(notes, workspace):
    values = resolve_params(notes, workspace)
    assert values == {"title": "Field notes", "width": 800, "theme": "light"}
    assert _config(workspace) == {"params": {"demo": values}}


def test_provided_values_override_and_are_coerced(notes, workspace):
    values = resolve_params(notes, workspace, {"width": "1024", "theme": "dark"})
    assert values == {"title": "Field notes", "width": 1024, "theme": "dark"}
    assert resolve_params(notes, workspace, {"width": "12.5"})["width"] == 12.5


def test_params_are_stored_and_reused(notes, workspace):
    resolve_params(notes, workspace, {"title": "Trip to Lisbon", "width": "640"})
    stored = _config(workspace)["params"]["demo"]
    assert stored == {"title": "Trip to Lisbon", "width": 640, "theme": "light"}

    def refuse(param, default):
        raise AssertionError(f"asked for {param.name} although it was stored")

    again = resolve_params(notes, workspace, prompt=refuse)
    assert again == stored
    assert resolve_params(notes, workspace, {"theme": "dark"})["title"] == "Trip to Lisbon"
    assert _config(workspace)["params"]["demo"]["theme"] == "dark"


def test_the_prompt_is_asked_with_the_default(notes, workspace):
    asked = []

    def prompt(param, default):
        asked.append((param.name, default))
        return {"title": "Asked title", "width": "300", "theme": "dark"}[param.name]

    values = resolve_params(notes, workspace, {"theme": "light"}, prompt=prompt)
    assert asked == [("title", "Field notes"), ("width", 800)]
    assert values == {"title": "Asked title", "width": 300, "theme": "light"}


def test_params_of_other_modes_are_kept(notes, secret_mode, workspace):
    resolve_params(secret_mode, workspace, {"apiKey": SECRET})
    resolve_params(notes, workspace)
    config = _config(workspace)
    assert set(config["params"]) == {"demo", "vault"}
    assert config["params"]["vault"]["apiKey"] == SECRET


def test_other_config_tables_survive(notes, workspace):
    (workspace / ".pneuma").mkdir()
    (workspace / ".pneuma" / "config.toml").write_text('[server]\nport = 17007\n')
    resolve_params(notes, workspace)
    assert _config(workspace)["server"] == {"port": 17007}


def test_save_false_writes_nothing(notes, workspace):
    resolve_params(notes, workspace, save=False)
    assert not (workspace / ".pneuma").exists()


@pytest.mark.parametrize(
    "provided, message",
    [
        ({"theme": "blue"}, "'theme' must be one of light, dark, got 'blue'"),
        ({"width": "wide"}, "'width' must be a number, got 'wide'"),
        ({"colour": "red"}, "unknown param colour for mode 'demo' (its params: title, width, "
                            "theme)"),
    ],
)
def test_invalid_params_are_errors(notes, workspace, provided, message):
    with pytest.raises(WorkspaceError) as info:
        resolve_params(notes, workspace, provided)
    assert message in str(info.value)
    assert not (workspace / ".pneuma" / "config.toml").exists()


def test_a_param_without_default_needs_a_value(secret_mode, workspace):
    with pytest.raises(WorkspaceError, match="param 'apiKey' of mode 'vault' has no default; "
                       "pass --param apiKey=VALUE"):
        resolve_params(secret_mode, workspace)


def test_invalid_config_toml_is_an_error(notes, workspace):
    (workspace / ".pneuma").mkdir()
    (workspace / ".pneuma" / "config.toml").write_text("params = [unclosed\n")
    with pytest.raises(WorkspaceError, match="is not valid TOML"):
        read_config(workspace)


# --- secrets ---


def test_config_toml_is_private(secret_mode, workspace):
    resolve_params(secret_mode, workspace, {"apiKey": SECRET})
    config = workspace / ".pneuma" / "config.toml"
    assert config.stat().st_mode & 0o777 == 0o600
    assert _config(workspace)["params"]["vault"]["apiKey"] == SECRET


def test_redact_params_masks_sensitive_values(secret_mode):
    redacted = redact_params(secret_mode, {"apiKey": SECRET, "region": "eu"})
    assert redacted == {"apiKey": "••••••", "region": "eu"}


def test_secret_is_never_printed_by_the_cli(secret_mode, workspace):
    runner = CliRunner()
    missing = runner.invoke(cli, ["init", "--mode", "vault", "-w", str(workspace), "--no-prompt"])
    assert missing.exit_code == 2
    assert "param 'apiKey' of mode 'vault' has no default" in missing.stderr

    init = runner.invoke(cli, ["init", "--mode", "vault", "-w", str(workspace),
                               "--param", f"apiKey={SECRET}", "--no-prompt"])
    assert init.exit_code == 0, init.output
    assert (workspace / "welcome.md").is_file()
    install = runner.invoke(cli, ["skill", "install", "--mode", "vault", "-w", str(workspace),
                                  "--no-prompt"])
    assert install.exit_code == 0, install.output
    assert "write .claude/skills/pneuma-vault/.env" in install.stdout
    check = runner.invoke(cli, ["skill", "install", "--mode", "vault", "-w", str(workspace),
                                "--check", "--param", f"apiKey={SECRET}"])
    assert check.exit_code == 0, check.output
    for result in (init, install, check):
        assert SECRET not in result.output
    # The secret did arrive where it belongs.
    assert _config(workspace)["params"]["vault"]["apiKey"] == SECRET
    assert (workspace / ".claude/skills/pneuma-vault/.env").read_text() == \
        f"VAULT_API_KEY={SECRET}\n"
    assert (workspace / ".pneuma" / "config.toml").stat().st_mode & 0o777 == 0o600
    assert SECRET not in (workspace / "CLAUDE.md").read_text()


def test_a_rejected_sensitive_value_is_not_echoed(add_mode, minimal_manifest, workspace):
    manifest = minimal_manifest("bank")
    manifest["init"]["params"] = [
        {"name": "pin", "label": "PIN", "type": "number", "sensitive": True}]
    add_mode(manifest)
    result = CliRunner().invoke(cli, ["init", "--mode", "bank", "-w", str(workspace),
                                      "--param", "pin=12x4-secret", "--no-prompt"])
    assert result.exit_code == 2
    assert "'pin' must be a number" in result.stderr
    assert "12x4-secret" not in result.output
