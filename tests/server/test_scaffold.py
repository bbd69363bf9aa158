"""``POST /api/workspace/scaffold``: start the workspace over, only with the
person's confirmation, never touching protected paths."""

from __future__ import annotations

import asyncio

import pytest

PROTECTED = {
    "CLAUDE.md": "# keep\n",
    ".gitignore": "node_modules\n",
    ".mcp.json": "{}",
    ".claude/settings.json": "{}",
    ".claude/skills/x/SKILL.md": "---\n",
    "slides/CLAUDE.md": "nested is not protected",
}

NEW_MANIFEST = '{"title": "New deck", "slides": ["slides/01-hello.html"]}'
NEW_SLIDE = "<section><h1>Hello</h1></section>"


def snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def protected(server):
    for rel, text in PROTECTED.items():
        path = server.workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return server


async def scaffold(server, body):
    response = await server.post("/api/workspace/scaffold", json=body)
    return response.status, await response.json()


BODY = {
    # Everything, on purpose: protected paths must survive even this.
    "clear": ["**", "*", ".*", "**/*.html", "manifest.json", "CLAUDE.md", ".claude/**"],
    "files": [{"path": "manifest.json", "content": NEW_MANIFEST},
              {"path": "slides/01-hello.html", "content": NEW_SLIDE}],
}


async def test_approved_scaffold_clears_and_writes_but_spares_protected_paths(protected):
    server = protected
    tab = await server.tab()
    pneuma_state = {k: v for k, v in snapshot(server.workspace).items()
                    if k.startswith(".pneuma/")}
    assert pneuma_state  # init_workspace stored the params there
    call = asyncio.ensure_future(scaffold(server, BODY))
    request = await tab.wait_for("confirmation_request")
    assert request["kind"] == "scaffold"
    assert "delete" in request["summary"] and "write" in request["summary"]
    doomed = request["details"]["delete"]
    assert "theme.css" in doomed and "slides/01-title.html" in doomed
    for rel in doomed:
        assert rel not in ("CLAUDE.md", ".gitignore", ".mcp.json"), rel
        assert not rel.startswith((".claude/", ".pneuma/", ".git/")), rel
    assert request["details"]["write"] == ["manifest.json", "slides/01-hello.html"]
    await tab.send({"type": "confirmation_response", "request_id": request["request_id"],
                    "approved": True})
    status, body = await asyncio.wait_for(call, 3)
    assert status == 200 and body["success"] is True
    after = snapshot(server.workspace)
    for rel, text in PROTECTED.items():
        if rel != "slides/CLAUDE.md":
            assert after[rel] == text.encode(), rel
    assert "slides/CLAUDE.md" not in after  # only the root CLAUDE.md is protected
    for rel, data in pneuma_state.items():
        assert after[rel] == data
    assert after["manifest.json"] == NEW_MANIFEST.encode()
    assert after["slides/01-hello.html"] == NEW_SLIDE.encode()
    assert "theme.css" not in after and "slides/01-title.html" not in after
    assert sorted(body["deleted"]) == sorted(doomed)


async def test_clear_only_removes_what_the_globs_match(server):
    tab = await server.tab()
    call = asyncio.ensure_future(scaffold(server, {"clear": ["slides/**/*.html"],
                                                   "files": []}))
    request = await tab.wait_for("confirmation_request")
    await tab.send({"type": "confirmation_response", "request_id": request["request_id"],
                    "approved": True})
    status, _ = await asyncio.wait_for(call, 3)
    assert status == 200
    after = snapshot(server.workspace)
    assert not [p for p in after if p.startswith("slides/")]
    assert "manifest.json" in after and "theme.css" in after


async def test_declined_scaffold_is_a_policy_refusal_and_changes_nothing(protected):
    server = protected
    tab = await server.tab()
    before = snapshot(server.workspace)
    call = asyncio.ensure_future(scaffold(server, BODY))
    request = await tab.wait_for("confirmation_request")
    await tab.send({"type": "confirmation_response", "request_id": request["request_id"],
                    "approved": False, "message": "not today"})
    status, body = await asyncio.wait_for(call, 3)
    # The same refusal a rejected write dry run gets (pneuma/tools/confirm.py).
    assert status == 403 and body["error"]["code"] == "E_POLICY_VIOLATION"
    assert body["error"]["details"] == {"decision": "declined", "message": "not today"}
    assert body["success"] is False and "declined" in body["message"]
    assert "not today" in body["message"]
    assert snapshot(server.workspace) == before


@pytest.mark.parametrize("path", ["CLAUDE.md", ".claude/settings.json", ".gitignore",
                                  ".mcp.json", ".pneuma/session.json", ".git/config",
                                  "../outside.txt", "/etc/x"])
async def test_writing_a_protected_path_is_403_without_asking(protected, path):
    server = protected
    tab = await server.tab()
    before = snapshot(server.workspace)
    status, body = await scaffold(server, {"clear": [], "files": [
        {"path": "manifest.json", "content": "{}"}, {"path": path, "content": "pwned"}]})
    assert status == 403, body
    assert body["error"]["code"] == "E_DENY_PATH"
    assert snapshot(server.workspace) == before
    assert await tab.drain() == []  # the person was never asked


async def test_scaffold_bad_input_and_no_browser(server):
    for body in ({"clear": "**"}, {"files": {"path": "x"}}, {"clear": [1]}):
        status, reply = await scaffold(server, body)
        assert status == 400, body
    status, reply = await scaffold(server, {"clear": [], "files": [{"path": "a.html",
                                                                   "content": 1}]})
    assert status == 400
    before = snapshot(server.workspace)
    status, reply = await scaffold(server, BODY)
    assert status == 503 and reply["error"]["code"] == "E_UNAVAILABLE"
    assert "no browser connected" in reply["message"].lower()
    assert snapshot(server.workspace) == before


async def test_a_tab_opened_later_still_gets_the_open_confirmation(server):
    first = await server.tab()
    call = asyncio.ensure_future(scaffold(server, {"clear": [], "files": [
        {"path": "notes.md", "content": "# hi\n"}]}))
    request = await first.wait_for("confirmation_request")
    # A reload: the new tab's history carries the question still waiting.
    second = await server.tab(subscribe=False)
    history = await second.subscribe(0)
    assert [c["request_id"] for c in history["pending_confirmations"]] == [request["request_id"]]
    await second.send({"type": "confirmation_response", "request_id": request["request_id"],
                       "approved": True})
    status, body = await call
    assert status == 200 and body["success"] is True
    # Every tab is told the question is settled, so no dialog lingers.
    closed = await first.wait_for("confirmation_cancelled")
    assert closed["request_id"] == request["request_id"]
    third = await server.tab(subscribe=False)
    assert (await third.subscribe(0))["pending_confirmations"] == []
