"""Which backend to use (docs/backends.md): `pneuma backends` lists every
installed backend and whether it works now, with what is missing and the
fix; `pneuma run` names a usable one when the chosen one cannot work; a
mode's `supportedBackends` refusal says which are supported and usable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pneuma.api import BackendCheckContext, BackendSpec, BackendStatus, hookimpl
from pneuma.cli import cli
from pneuma.host.modes import ModeSource
from pneuma.host.registry import get_mode
from pneuma.startup.start_checks import StartProblem, start_checks
from pneuma.testing import register_plugin
from tests.pneuma_process import PNEUMA, no_server_left  # noqa: F401 (autouse fixture)

CREDENTIAL_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                  "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "PNEUMA_CLAUDE_BIN",
                  "PNEUMA_NATIVE_API_KEY_ENV")


def fake_claude(directory: Path) -> Path:
    """An executable `claude` that only knows its version."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "claude"
    script.write_text('#!/bin/sh\nif [ "$1" = "--version" ]; then echo "9.9.9 (Claude Code)"; fi\n')
    script.chmod(0o755)
    return script


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No credentials anywhere: an empty home, no key variables, no
    `claude` on PATH but the one a test points PNEUMA_CLAUDE_BIN at."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    for name in CREDENTIAL_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("IS_SANDBOX", "1")  # no root note in the listings
    monkeypatch.chdir(tmp_path)
    return home


def listing(*args: str) -> tuple[list[str], Any]:
    result = CliRunner().invoke(cli, ["backends", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    return lines, (json.loads(result.output) if "--json" in args else None)


def row(lines: list[str], name: str) -> str:
    found = [line for line in lines if line.split()[:1] == [name]]
    assert len(found) == 1, lines
    return found[0]


class UnusableBackend:
    """A third-party backend whose tool is not installed, and one whose check breaks."""

    @hookimpl
    def register_backends(self) -> list[BackendSpec]:
        def missing(context: BackendCheckContext) -> BackendStatus:
            return BackendStatus(usable=False, version=None, missing="the frob CLI",
                                 fix="pip install frob-agent")

        def broken(context: BackendCheckContext) -> BackendStatus:
            raise RuntimeError("frob exploded")

        return [BackendSpec(name="frob", description="Frob.", factory=lambda o, s: None,
                            check=missing),
                BackendSpec(name="frob-broken", description="Broken.",
                            factory=lambda o, s: None, check=broken)]


def test_pneuma_backends_lists_the_built_in_ones_with_their_state(pm, clean_env, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setenv("PNEUMA_CLAUDE_BIN", str(fake_claude(tmp_path / "bin")))
    lines, _ = listing()
    claude = row(lines, "claude-code")
    assert "not usable" in claude and "9.9.9 (Claude Code)" in claude
    assert "missing credentials" in claude and "claude login" in claude
    native = row(lines, "native")
    assert "not usable" in native and "ANTHROPIC_API_KEY" in native and "fix: export" in native
    assert "usable" in row(lines, "socket") and "not usable" not in row(lines, "socket")
    assert "/ws/cli/" in row(lines, "socket")
    assert "not usable" not in row(lines, "none")
    if any(name == "pneuma.agents.codex.plugin" for name, _ in pm.list_name_plugin()):
        row(lines, "codex")  # listed, with whatever its own check says

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    lines, _ = listing()
    claude = row(lines, "claude-code")
    assert " usable " in claude and "not usable" not in claude
    assert str(tmp_path / "bin" / "claude") in claude and "credentials: ANTHROPIC_API_KEY" in claude
    assert "not usable" not in row(lines, "native")


def test_a_claude_bin_that_is_not_there_is_named_with_the_fix(pm, clean_env, tmp_path,
                                                              monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("PNEUMA_CLAUDE_BIN", str(tmp_path / "nowhere" / "claude"))
    lines, payload = listing("--json")
    claude = next(b for b in payload["backends"] if b["name"] == "claude-code")
    assert claude["usable"] is False
    assert str(tmp_path / "nowhere" / "claude") in claude["missing"]
    assert "--claude-bin PATH" in claude["fix"] and "claude-agent-sdk" in claude["fix"]
    # --claude-bin names the binary to check instead.
    lines, _ = listing("--claude-bin", str(fake_claude(tmp_path / "bin")))
    assert "9.9.9 (Claude Code)" in row(lines, "claude-code")
    assert "not usable" not in row(lines, "claude-code")


def test_a_plugin_backend_says_why_it_is_not_usable_in_text_and_json(pm, clean_env):
    with register_plugin(UnusableBackend(), "frob-plugin"):
        lines, _ = listing()
        _, payload = listing("--json")
    assert row(lines, "frob").split(None, 1)[1].startswith("not usable")
    assert "missing the frob CLI; fix: pip install frob-agent" in row(lines, "frob")
    assert "frob exploded" in row(lines, "frob-broken")
    frob = next(b for b in payload["backends"] if b["name"] == "frob")
    assert frob == {"name": "frob", "description": "Frob.", "plugin": "frob-plugin",
                    "usable": False, "version": None, "found": None,
                    "missing": "the frob CLI", "fix": "pip install frob-agent", "notes": []}
    names = [b["name"] for b in payload["backends"]]
    assert {"claude-code", "native", "socket", "none"} <= set(names) and names == sorted(names)
    assert next(b for b in payload["backends"] if b["name"] == "frob-broken")["usable"] is False


def _run_until_ready(workspace: Path, backend: str, env: dict[str, str]) -> tuple[list[str], int]:
    """`pneuma run` with stdout and stderr in one pipe (their order kept):
    the lines up to its ready line, then stopped; or all of them and its
    status when it ends by itself."""
    proc = subprocess.Popen(
        [PNEUMA, "run", "--mode", "slide", "--workspace", str(workspace), "--backend", backend,
         "--no-open", "--no-prompt", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        lines = []
        for line in iter(proc.stdout.readline, ""):
            lines.append(line.rstrip("\n"))
            if line.startswith("[pneuma] ready "):
                proc.send_signal(signal.SIGTERM)
                break
        proc.communicate(timeout=20)
        return lines, proc.returncode
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def _process_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_ENV}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), IS_SANDBOX="1",
               PNEUMA_LOAD_PLUGINS="slide", PYTHONUNBUFFERED="1", **extra)
    return env


def test_run_names_what_is_missing_and_a_usable_backend_before_the_ready_line(tmp_path):
    env = _process_env(tmp_path, ANTHROPIC_API_KEY="sk-test",
                       PNEUMA_CLAUDE_BIN=str(tmp_path / "nowhere" / "claude"))
    lines, _ = _run_until_ready(tmp_path / "ws", "claude-code", env)
    ready = next(i for i, line in enumerate(lines) if line.startswith("[pneuma] ready "))
    warnings = [line for line in lines[:ready] if "claude-code backend cannot work now" in line]
    assert len(warnings) == 1, lines
    assert warnings[0].startswith("[pneuma] warning: ")
    assert str(tmp_path / "nowhere" / "claude") in warnings[0] and "--claude-bin" in warnings[0]
    assert "usable now: " in warnings[0] and "--backend native" in warnings[0]
    assert "--backend none" in warnings[0]


def test_run_with_a_usable_backend_says_nothing_about_backends(tmp_path):
    lines, _ = _run_until_ready(tmp_path / "ws", "none", _process_env(tmp_path))
    assert lines[-1].startswith("[pneuma] ready ")
    assert not [line for line in lines if "cannot work now" in line], lines


def test_run_with_an_unknown_backend_lists_the_installed_ones(tmp_path):
    lines, status = _run_until_ready(tmp_path / "ws", "frobnicate", _process_env(tmp_path))
    assert status == 2
    assert lines[-1].startswith("pneuma: error: no backend named 'frobnicate' (installed: ")
    for name in ("claude-code", "native", "socket", "none"):
        assert name in lines[-1]
    assert not (tmp_path / "ws").exists()  # refused before anything was written


def test_supported_backends_refusal_names_the_supported_and_usable_ones(
        pm, clean_env, tmp_path, minimal_manifest, make_mode_package, monkeypatch):
    manifest = minimal_manifest("picky")
    manifest["supportedBackends"] = ["native", "none"]
    package = make_mode_package(tmp_path, manifest)

    class PickyMode:
        @hookimpl
        def register_modes(self):
            return [ModeSource(manifest=package / "manifest.json", package_dir=package)]

    with register_plugin(PickyMode(), "picky-mode"):
        with pytest.raises(StartProblem) as refused:
            start_checks("picky", tmp_path / "ws", "claude-code", {})
        assert str(refused.value) == ("the picky mode does not support --backend claude-code; "
                                      "it supports native, none (usable now: none)")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        with pytest.raises(StartProblem) as refused:
            start_checks("picky", tmp_path / "ws", "socket", {})
        assert "(usable now: native, none)" in str(refused.value)
        assert not (tmp_path / "ws").exists()
        # A supported one starts; a mode that leaves the list out allows every backend.
        start_checks("picky", tmp_path / "ws", "native", {})
        assert get_mode("slide").manifest.model_fields_set.isdisjoint({"supported_backends"})
        with register_plugin(UnusableBackend(), "frob-plugin"):
            notes: list[str] = []
            start_checks("slide", tmp_path / "deck", "frob", {}, notify=notes.append)
    warning = next(line for line in notes if "frob backend" in line)
    assert warning.startswith("warning: the frob backend cannot work now: missing the frob CLI; "
                              "fix: pip install frob-agent; usable now: ")


def test_the_launcher_names_a_usable_backend_when_its_default_cannot_work(tmp_path):
    env = _process_env(tmp_path, PNEUMA_CLAUDE_BIN=str(tmp_path / "nowhere" / "claude"),
                       PNEUMA_HOME=str(tmp_path / "pneuma-home"))
    proc = subprocess.Popen([PNEUMA, "open", "--no-open", "--port", "0"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        lines = []
        for line in iter(proc.stdout.readline, ""):
            lines.append(line.rstrip("\n"))
            if "launcher ready" in line:
                break
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    assert lines and "launcher ready" in lines[-1], lines
    warning = [line for line in lines if "claude-code backend cannot work now" in line]
    assert len(warning) == 1 and "--backend none" in warning[0], lines
