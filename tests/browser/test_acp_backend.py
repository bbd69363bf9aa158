"""`pneuma run --backend acp` in Chromium with the scripted ACP agent
(tests/fakes/acp_peer.py): a streamed reply in the chat, a permission card
clicked, and the agent's own modes offered in the header."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send

PEER = Path(__file__).resolve().parents[1] / "fakes" / "acp_peer.py"
MODES = [{"id": "auto", "name": "Auto"}, {"id": "default", "name": "Ask first"},
         {"id": "plan", "name": "Plan only"}]
ASK = {"permission": {
    "toolCall": {"toolCallId": "w1", "title": "Write slides/03.html", "kind": "edit",
                 "rawInput": {"path": "slides/03.html"}},
    "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}}


def test_a_reply_a_permission_card_and_the_agents_modes(
        pneuma_server: Any, open_page: Any, tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"record": str(record), "modes": MODES, "turns": {
        "[hello]": [{"thought": "Thinking it over"}, {"text": "Hello from "},
                    {"text": "the ACP agent"}],
        "[ask]": [ASK]}}))
    command = shlex.join([sys.executable, str(PEER), str(script)])
    server = pneuma_server("slide", backend="acp",
                           args=["--agent-command", command, "--permission-mode", "default"])
    page = open_page(server)
    send(page, "[hello]")
    expect(page.locator(".msg.assistant", has_text="Hello from the ACP agent")).to_be_visible(
        timeout=15_000)
    send(page, "[ask]")
    card = page.locator(".permission")
    expect(card).to_contain_text("Write slides/03.html", timeout=15_000)
    card.locator("button.allow").click()
    expect(page.locator(".msg.assistant", has_text="permission: yes")).to_be_visible(timeout=15_000)
    # The agent's modes, in the header: its own "default" was chosen for
    # Pneuma's permission mode; choosing another reaches the agent.
    select = page.locator("select[data-agent-mode]")
    expect(select).to_have_value("default")
    assert [o.strip() for o in select.locator("option").all_inner_texts()] == \
        ["Auto", "Ask first", "Plan only"]
    select.select_option("plan")
    expect(select).to_have_value("plan")
    received = [json.loads(line) for line in record.read_text().splitlines()]
    assert [m["params"]["modeId"] for m in received if m.get("method") == "session/set_mode"] \
        == ["default", "plan"]
    assert not page.console_errors
