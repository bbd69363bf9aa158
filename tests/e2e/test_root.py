"""`pneuma run` as root (containers, CI): Claude Code refuses
bypassPermissions there, so the terminal says so at start, with the fix,
and the agent runs in a mode that works; IS_SANDBOX in any truthy spelling
keeps bypassPermissions. Missing credentials are one terminal line too."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.e2e.pneuma_run import argv_of, pneuma_command

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="about running as root")


async def _cli(run, timeout: float = 10.0) -> int:
    """The pid of the agent CLI (the slide mode greets at start)."""
    for _ in range(int(timeout / 0.1)):
        for pid in run.note_children():
            argv = argv_of(pid)
            if "--input-format" in argv and "stream-json" in argv:
                return pid
        await asyncio.sleep(0.1)
    raise AssertionError(f"no agent CLI started; stderr:\n{run.stderr()}")


def _permission_mode(pid: int) -> str:
    argv = argv_of(pid)
    return argv[argv.index("--permission-mode") + 1]


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.decode().split("=", 1) for item in raw.split(b"\0") if b"=" in item)


def _root_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "running as root" in line]


async def test_root_without_a_sandbox_gets_one_line_and_a_working_mode(
        start_pneuma, cli_env, fake_claude_bin):
    env = {k: v for k, v in cli_env.items() if k != "IS_SANDBOX"}
    run = await start_pneuma(env=env, claude_bin=fake_claude_bin)
    pid = await _cli(run)
    assert _permission_mode(pid) == "acceptEdits"
    lines = _root_lines(run.stderr())
    assert len(lines) == 1, run.stderr()
    assert "IS_SANDBOX=1" in lines[0] and "acceptEdits" in lines[0]
    assert "no credentials" not in run.stderr()


@pytest.mark.parametrize("value", ["1", "yes", "true", "TRUE"])
async def test_any_truthy_is_sandbox_keeps_bypass_permissions(
        start_pneuma, cli_env, fake_claude_bin, value):
    run = await start_pneuma(env={**cli_env, "IS_SANDBOX": value}, claude_bin=fake_claude_bin)
    pid = await _cli(run)
    assert _permission_mode(pid) == "bypassPermissions"
    assert _environ(pid)["IS_SANDBOX"] == "1"  # the spelling the CLI understands
    assert not _root_lines(run.stderr())


async def test_an_explicit_bypass_as_root_stops_before_the_ready_line(tmp_path, cli_env):
    env = {k: v for k, v in cli_env.items() if k != "IS_SANDBOX"}
    proc = await asyncio.create_subprocess_exec(
        *pneuma_command(), "run", "--mode", "slide", "--workspace", str(tmp_path / "ws"),
        "--no-open", "--no-prompt", "--port", "0", "--permission-mode", "bypassPermissions",
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 2
    assert b"[pneuma] ready" not in out
    assert b"IS_SANDBOX=1" in err and b"acceptEdits" in err


async def test_missing_credentials_are_one_terminal_line(start_pneuma, cli_env, fake_claude_bin):
    env = {k: v for k, v in cli_env.items() if k != "ANTHROPIC_API_KEY"}
    run = await start_pneuma(env=env, claude_bin=fake_claude_bin)
    for _ in range(50):
        if "missing credentials" in run.stderr():
            break
        await asyncio.sleep(0.1)
    lines = [line for line in run.stderr().splitlines() if "missing credentials" in line]
    assert len(lines) == 1, run.stderr()
    assert "ANTHROPIC_API_KEY" in lines[0] and "claude login" in lines[0]
