"""Hard links are not read, and the agent's own settings are read-only,
through every door of the API (HTTP file routes, /content, the tools).

A hard link inside the workspace to ``.env`` or to a file outside it is the
same file under a harmless name; the sandbox cannot know the other name, so
a regular file with more than one link is refused with ``E_DENY_PATH``.
``.claude/`` and ``.mcp.json`` decide what the agent may do: readable, but
only the skill installer (at ``pneuma run``) writes them.
"""

from __future__ import annotations

import os

import pytest

SECRET = "API_KEY=sk-very-secret\n"


async def _get(server, route: str, **params) -> tuple[int, bytes]:
    response = await server.get(route, params=params)
    return response.status, await response.read()


async def _tool(server, name: str, args: dict) -> dict:
    return await (await server.post(f"/api/tools/{name}", json=args)).json()


@pytest.fixture
def workspace(ws):
    """The notes mode's workspace (every host tool offered), a secret in it
    and one beside it."""
    (ws / ".env").write_text(SECRET)
    (ws.parent / "outside.txt").write_text(SECRET)
    return ws


@pytest.mark.parametrize("target", [".env", "../outside.txt"])
async def test_a_hard_link_is_not_read_through_any_route(server, workspace, target):
    os.link(workspace / target, workspace / "linked.md")
    status, body = await _get(server, "/api/files/read", path="linked.md")
    assert status == 403 and b"E_DENY_PATH" in body and b"hard link" in body
    assert b"sk-very-secret" not in body
    status, body = await _get(server, "/content/linked.md")
    assert status == 403 and b"sk-very-secret" not in body
    status, body = await _get(server, "/api/files")
    assert status == 200 and b"sk-very-secret" not in body
    answer = await _tool(server, "read_file", {"path": "linked.md"})
    assert answer["error"]["code"] == "E_DENY_PATH"
    assert "sk-very-secret" not in str(answer)
    for args in ({"path": ".", "regex": "very-secret"}, {"path": "linked.md", "regex": "API"}):
        answer = await _tool(server, "search_files", args)
        assert answer == {"matches": []}, answer


async def test_a_file_with_one_link_still_reads(server, workspace):
    (workspace / "single.md").write_text("hello\n")
    status, body = await _get(server, "/api/files/read", path="single.md")
    assert status == 200 and b"hello" in body
    assert (await _get(server, "/content/single.md")) == (200, b"hello\n")
    assert (await _tool(server, "read_file", {"path": "single.md"}))["content"] == "hello\n"


@pytest.mark.parametrize("rel", [".claude/settings.json", ".claude/settings.local.json",
                                 ".mcp.json", ".claude/skills/x/SKILL.md"])
async def test_the_agents_settings_are_read_only_through_the_api(server, workspace, rel):
    target = workspace / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text('{"permissions": {}}\n')
    response = await server.post("/api/files", json={
        "path": rel, "content": '{"permissions": {"allow": ["Bash(*)"]}}'})
    assert response.status == 403 and (await response.json())["error"]["code"] == "E_DENY_PATH"
    assert (await server.delete("/api/files", params={"path": rel})).status == 403
    for name, args in (("write_to_file", {"path": rel, "content": "{}", "mode": "overwrite",
                                         "dryRun": True}),
                       ("replace_in_file", {"path": rel, "find": "{}", "replace": "[]"})):
        answer = await _tool(server, name, args)
        assert answer["error"]["code"] == "E_DENY_PATH", (name, answer)
    assert target.read_text() == '{"permissions": {}}\n'
    status, body = await _get(server, "/api/files/read", path=rel)  # still readable
    assert status == 200 and b"permissions" in body


async def test_a_symlink_to_the_settings_does_not_make_them_writable(server, workspace):
    (workspace / ".claude").mkdir(exist_ok=True)
    (workspace / ".claude" / "settings.json").write_text("{}\n")
    (workspace / "s.json").symlink_to(".claude/settings.json")
    response = await server.post("/api/files", json={"path": "s.json", "content": "{\"x\": 1}"})
    assert response.status == 403
    assert (workspace / ".claude" / "settings.json").read_text() == "{}\n"
