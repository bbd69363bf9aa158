"""The launcher's backends (docs/backends.md): its API reports every
installed backend with whether it works now, each mode's allowed ones,
and a new workspace runs the backend the dialog picked."""

from __future__ import annotations

import dataclasses

import pytest

CREDENTIAL_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                  "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "PNEUMA_CLAUDE_BIN")


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CREDENTIAL_ENV:
        monkeypatch.delenv(name, raising=False)


async def test_the_launcher_reports_each_backend_and_whether_it_works_now(
        launcher, no_credentials, monkeypatch) -> None:
    status, info = await launcher.call("GET", "/api/launcher")
    assert status == 200 and info["backend"] == "claude-code"
    backends = {b["name"]: b for b in info["backends"]}
    assert {"claude-code", "native", "socket", "none"} <= set(backends)
    claude = backends["claude-code"]
    # The launcher's --claude-bin is the binary checked; no key in its environment.
    assert claude["usable"] is False and claude["found"].endswith("fake-claude/claude")
    assert "credentials" in claude["missing"] and "claude login" in claude["fix"]
    assert backends["native"]["usable"] is False and "ANTHROPIC_API_KEY" in backends["native"]["missing"]
    assert backends["none"]["usable"] is True and backends["socket"]["usable"] is True

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    status, info = await launcher.call("GET", "/api/launcher")
    backends = {b["name"]: b for b in info["backends"]}
    assert backends["claude-code"]["usable"] is True and backends["native"]["usable"] is True

    status, gallery = await launcher.call("GET", "/api/modes")
    doc = next(m for m in gallery["modes"] if m["name"] == "doc")
    assert {"claude-code", "native", "socket", "none"} <= set(doc["supportedBackends"])


async def test_the_backends_are_checked_with_the_environment_the_agents_get(
        launcher, no_credentials) -> None:
    # Credentials given to the workspaces' agents only (as an embedding
    # program would): the launcher must not call claude-code unusable.
    hosting = launcher.state.hosting
    hosting.defaults = dataclasses.replace(hosting.defaults, agent_env={"ANTHROPIC_API_KEY": "sk-agent"})
    status, info = await launcher.call("GET", "/api/launcher")
    backends = {b["name"]: b for b in info["backends"]}
    assert status == 200 and backends["claude-code"]["usable"] is True, backends["claude-code"]
    assert backends["native"]["usable"] is True


async def test_a_new_workspace_runs_the_backend_the_dialog_picked(launcher, tmp_path) -> None:
    status, refused = await launcher.call("POST", "/api/workspaces/new", json={
        "mode": "doc", "path": str(tmp_path / "odd"), "backend": "frobnicate"})
    assert (status, refused["error"]["code"]) == (400, "E_BAD_ARGS")
    assert refused["error"]["details"]["field"] == "backend"
    assert "none" in refused["error"]["details"]["allowed"]
    assert not (tmp_path / "odd").exists()

    status, answer = await launcher.call("POST", "/api/workspaces/new", json={
        "mode": "doc", "path": str(tmp_path / "quiet"), "backend": "none"})
    assert status == 200, answer
    base, token = answer["url"].split("/?")[0], answer["url"].rsplit("token=", 1)[1]
    async with launcher.http.get(f"{base}/api/config",
                                 headers={"Authorization": f"Bearer {token}"}) as r:
        config = await r.json()
    assert config["backend"] == "none"
