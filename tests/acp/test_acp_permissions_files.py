"""Permission requests as the page's permission card, and the agent's file
reads and writes through the workspace sandbox (ACP's fs methods)."""

from __future__ import annotations

from pathlib import Path

from tests.acp.conftest import MakeAcp
from tests.server.harness import seeded_slide_workspace

ASK = {"permission": {
    "toolCall": {"toolCallId": "w1", "title": "Write notes.md", "kind": "edit",
                 "rawInput": {"path": "notes.md"}},
    "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "always", "name": "Always", "kind": "allow_always"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}}


async def test_a_permission_card_answered_both_ways(make_acp: MakeAcp) -> None:
    acp = await make_acp({"turns": {"[ask]": [ASK]}}, permission_mode="default")
    tab = acp.tab
    for behavior, chosen in (("allow", "yes"), ("deny", "no")):
        await tab.say("[ask] me")
        card = (await tab.wait_for("permission_request", 15))["request"]
        assert card["tool_name"] == "Write notes.md"
        assert card["input"]["path"] == "notes.md" and card["tool_use_id"] == "w1"
        await tab.send({"type": "permission_response", "request_id": card["request_id"],
                        "behavior": behavior})
        assert (await acp.result())["result"] == f"permission: {chosen}"
    await acp.close()


async def test_bypass_permissions_answers_without_a_card(make_acp: MakeAcp) -> None:
    acp = await make_acp({"turns": {"[ask]": [ASK]}}, permission_mode="bypassPermissions")
    await acp.tab.say("[ask] me")
    assert (await acp.result())["result"] == "permission: yes"
    assert not [m for m in acp.tab.received if m.get("type") == "permission_request"]
    await acp.close()


async def test_files_inside_are_read_and_written_and_outside_refused(
        make_acp: MakeAcp, tmp_path: Path) -> None:
    _mode, ws = seeded_slide_workspace(tmp_path)
    (ws / "notes.md").write_text("one\ntwo\nthree\n", encoding="utf-8")
    script = {"turns": {
        "[write]": [{"write": {"path": str(ws / "slides" / "03-acp.html"),
                               "content": "<section>ACP</section>\n"}}],
        "[read]": [{"read": {"path": str(ws / "notes.md"), "line": 2, "limit": 1}}],
        "[escape]": [{"write": {"path": "/etc/pneuma-acp-test", "content": "x"}}],
        "[dotdot]": [{"read": {"path": str(ws / ".." / "outside.md")}}],
        "[hidden]": [{"write": {"path": str(ws / ".pneuma" / "session.json"), "content": "{}"}}],
        "[missing]": [{"read": {"path": str(ws / "nope.md")}}],
    }}
    acp = await make_acp(script, workspace=ws, watch=True)
    said = {}
    for word in script["turns"]:
        await acp.tab.say(word)
        said[word] = (await acp.result())["result"]
    # The write reached the page as any change of the agent's does.
    shown = [f["content"] for m in acp.tab.received if m.get("type") == "content_update"
             for f in m["files"] if f.get("path") == "slides/03-acp.html"]
    assert shown == ["<section>ACP</section>\n"]
    assert said["[write]"] == "write ok"
    assert (ws / "slides" / "03-acp.html").read_text(encoding="utf-8") == "<section>ACP</section>\n"
    assert said["[read]"] == "read: two\n"
    assert said["[escape]"].startswith("write error: E_DENY_PATH: Path '/etc/pneuma-acp-test' is outside")
    assert said["[dotdot]"].startswith("read error: E_DENY_PATH")
    assert said["[hidden]"].startswith("write error: E_DENY_PATH") and "forbidden" in said["[hidden]"]
    assert said["[missing]"].startswith("read error: E_NOT_FOUND")
    assert not (ws.parent / "outside.md").exists()
    assert '"{}"' not in (ws / ".pneuma" / "session.json").read_text(encoding="utf-8")
    await acp.close()
