"""The Done-when test of the headless viewer with the REAL Claude Code CLI:
no tab of the person's is open at any time, and the agent's `curl` to
describe-view and capture-screenshot (the command CLAUDE.md teaches) gets a
real answer, which the CLI sends back to the model as the tool's result.

`pneuma run --mode slide` starts the CLI (the binary bundled in
claude-agent-sdk==0.2.187) for the mode's greeting turn, against the fake
Anthropic API of tests/fakes/anthropic_api.py; nobody opens the page. The
scripted model answers the greeting with the two curls.
"""

from __future__ import annotations

import io
import json
import shlex
from typing import Any

from PIL import Image

from tests.browser.test_agent_viewer_actions import (  # noqa: F401 (fixtures)
    TAUGHT_PREFIX,
    ThreadedFakeAPI,
    answer_read_by_agent,
    bash,
    fake_api,
    loopback_only_network,
    pytestmark,
    start_with_real_cli,
    taught_curl,
    text,
)
from tests.headless_viewer.test_headless_viewer import status_of, wait_until


def taught_command(action_id: str) -> str:
    payload = json.dumps({"actionId": action_id, "params": {}}, separators=(",", ":"))
    return f"{TAUGHT_PREFIX} -d {shlex.quote(payload)}"


def test_with_every_tab_closed_the_agents_curl_reads_the_view_and_a_screenshot(
        pneuma_server: Any, fake_api: ThreadedFakeAPI) -> None:
    # The greeting turn, scripted before the CLI asks: the model looks, then
    # says what it saw. The commands are CLAUDE.md's (checked below).
    describe = bash(taught_command("describe-view"), "Look at the deck")
    capture = bash(taught_command("capture-screenshot"), "Capture the slide")
    fake_api.push(describe)
    fake_api.push(capture)
    fake_api.push(text("Hi! Your deck has eight slides; I looked at the first one."))
    server = start_with_real_cli(pneuma_server, fake_api, "slide")

    def greeted() -> bool:
        return fake_api.pending() == 0 and len(
            [r for r in fake_api.tool_results() if r["tool_use_id"] == capture.id]) == 1
    wait_until(greeted, 90, "the CLI ran both curls and sent their output back")

    assert describe.input["command"] == taught_curl(server.workspace, "describe-view", {})
    assert capture.input["command"] == taught_curl(server.workspace, "capture-screenshot", {})
    described = answer_read_by_agent(fake_api, describe)
    assert described["viewer"] == "headless", described
    assert described["data"]["current"]["file"] == "slides/01-title.html"
    assert described["data"]["total"] == 8

    shot = answer_read_by_agent(fake_api, capture)
    assert shot["viewer"] == "headless", shot
    image = Image.open(io.BytesIO((server.workspace / shot["data"]["path"]).read_bytes()))
    assert image.format == "PNG" and image.size == (1280, 720)
    colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the screenshot is (nearly) one colour"
    assert status_of(server)["starts"] == 1
