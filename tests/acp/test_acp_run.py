"""`pneuma run --backend acp --agent-command "CMD ARGS"` as a person runs it:
a real `pneuma run` process with the scripted ACP agent; the workspace
remembers the command, so a later run without the option starts the same
agent and resumes its session."""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pneuma.cli import cli
from tests.acp.conftest import PEER
from tests.agent_cli_e2e import PneumaRuns, connect  # noqa: F401  (connect: a fixture)
from tests.e2e.pneuma_run import base_env, wait_greeting


@pytest.fixture
async def runs(tmp_path: Path) -> AsyncIterator[PneumaRuns]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    started = PneumaRuns(tmp_path, workspace)
    yield started
    await started.kill_all()


async def test_the_agent_command_is_remembered_and_the_session_resumed(
        runs: PneumaRuns, connect: Callable[..., Any], tmp_path: Path) -> None:
    sessions = tmp_path / "peer-sessions"
    sessions.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"load_session": True, "sessions": str(sessions),
                                  "record": str(tmp_path / "received.jsonl"),
                                  "turns": {"[recall]": [{"recall": True}]}}))
    command = shlex.join([sys.executable, str(PEER), str(script)])
    env = base_env(tmp_path / "home")
    env.pop("PNEUMA_ACP_COMMAND", None)
    first = await runs.start("acp", "--agent-command", command, env=env)
    page = await connect(first)
    await wait_greeting(page)
    since = page.mark()
    await page.send({"type": "user_message", "content": "pineapple"})
    assert (await page.wait_turn_done(since=since))["data"]["result"] == "echo: pineapple"
    await page.close()
    await first.stop()
    stored = json.loads((runs.workspace / ".pneuma" / "acp.json").read_text())
    assert stored == {"command": shlex.split(command)}

    second = await runs.start("acp", env=env)  # no --agent-command this time
    page = await connect(second)
    since = page.mark()
    await page.send({"type": "user_message", "content": "[recall]"})
    result = await page.wait_turn_done(since=since)
    assert result["data"]["result"].startswith("recall: ") and "pineapple" in result["data"]["result"]
    received = [json.loads(line) for line in (tmp_path / "received.jsonl").read_text().splitlines()]
    assert [m["method"] for m in received if m.get("method") in ("session/new", "session/load")] \
        == ["session/new", "session/load"]
    await page.close()
    await second.stop()


@pytest.mark.parametrize(("args", "said"), [
    (["--backend", "codex", "--agent-command", "x"],
     "pneuma: error: --agent-command is for --backend acp, not --backend codex\n"),
    (["--backend", "acp", "--agent-command", "'open"],
     "pneuma: error: --agent-command \"'open\" cannot be split: No closing quotation\n"),
])
def test_a_bad_agent_command_is_one_terminal_line(tmp_path: Path, args: list[str], said: str) -> None:
    result = CliRunner().invoke(cli, ["run", "--mode", "slide", "--workspace", str(tmp_path),
                                      "--no-open", "--no-prompt", *args])
    assert result.exit_code == 2 and result.stderr == said
    assert not (tmp_path / ".pneuma").exists()  # nothing written


def test_pneuma_backends_says_what_acp_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PNEUMA_ACP_COMMAND", raising=False)
    monkeypatch.chdir(os.path.dirname(PEER))
    rows = json.loads(CliRunner().invoke(cli, ["backends", "--json"]).stdout)["backends"]
    acp = next(r for r in rows if r["name"] == "acp")
    assert not acp["usable"] and acp["missing"] == "an ACP agent command"
    assert "--agent-command" in acp["fix"]
    monkeypatch.setenv("PNEUMA_ACP_COMMAND", f"{sys.executable} {PEER} script.json")
    rows = json.loads(CliRunner().invoke(cli, ["backends", "--json"]).stdout)["backends"]
    acp = next(r for r in rows if r["name"] == "acp")
    assert acp["usable"] and acp["found"] == f"{sys.executable} {PEER} script.json"
