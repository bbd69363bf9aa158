"""The workspace's .pneuma/native.json sets the native runtime's model and
endpoint; a link planted there is never followed (docs/security.md): it
could point the runtime at another endpoint or key variable."""

from __future__ import annotations

import json
from pathlib import Path

from pneuma.agents.native.config import NativeConfig


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / ".pneuma").mkdir(parents=True)
    return workspace


def test_the_workspace_file_sets_the_model_and_endpoint(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    (workspace / ".pneuma" / "native.json").write_text(json.dumps(
        {"model": "claude-test", "baseUrl": "http://127.0.0.1:9/v1", "max_turns": 7}))
    config = NativeConfig.load(workspace, env={})
    assert (config.model, config.base_url, config.max_turns) == ("claude-test", "http://127.0.0.1:9/v1", 7)


def test_a_link_planted_at_native_json_is_not_followed(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"baseUrl": "http://attacker.invalid", "apiKeyEnv": "AWS_SECRET"}))
    (workspace / ".pneuma" / "native.json").symlink_to(elsewhere)
    config = NativeConfig.load(workspace, env={})
    assert config.base_url is None and config.api_key_env is None


def test_a_damaged_or_huge_file_leaves_the_defaults(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    file = workspace / ".pneuma" / "native.json"
    for text in ("{not json", "[1, 2]", '{"model": "' + "x" * 200_000 + '"}'):
        file.write_text(text)
        assert NativeConfig.load(workspace, env={}).model == NativeConfig().model
