"""POST /api/edits: the person's in-place edit, written through the one
sandbox only over the text it started from (docs/viewer-contract.md,
"Edit in place")."""

from __future__ import annotations

import asyncio
import hashlib
import os

from pneuma.editing.route import MAX_EDIT_BYTES

REL = "slides/01-title.html"


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


async def edit(server, path, content, base):
    response = await server.post("/api/edits", json={"path": path, "content": content,
                                                     "base_sha256": base})
    return response.status, await response.json()


async def test_an_edit_over_the_current_text_is_written(server):
    target = server.workspace / REL
    before = target.read_text()
    after = before.replace("<h1", "<h1 data-x", 1)
    status, body = await edit(server, REL, after, sha(before))
    assert status == 200, body
    assert body["path"] == REL and body["sha256"] == sha(after)
    assert target.read_text() == after


async def test_a_stale_base_is_a_conflict_that_keeps_both_texts(server):
    target = server.workspace / REL
    base = target.read_text()
    theirs = base + "\n<p>the agent wrote this</p>\n"
    target.write_text(theirs)
    mine = base.replace("<h1", "<h1 class=mine", 1)
    status, body = await edit(server, REL, mine, sha(base))
    assert status == 409
    error = body["error"]
    assert error["code"] == "E_CONFLICT"
    assert error["details"]["current"] == theirs
    assert target.read_text() == theirs  # the agent's text stays on disk
    kept = error["details"]["kept"]
    assert kept.startswith(".pneuma/edits/conflicts/")
    assert (server.workspace / kept).read_text() == mine  # the person's is kept
    assert os.stat(server.workspace / kept).st_mode & 0o077 == 0


async def test_a_link_planted_under_pneuma_edits_is_not_followed(server, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    state = server.workspace / ".pneuma"
    state.mkdir(exist_ok=True)
    os.symlink(outside, state / "edits")
    target = server.workspace / REL
    base = target.read_text()
    target.write_text(base + "<!-- agent -->")
    status, body = await edit(server, REL, base + "<!-- mine -->", sha(base))
    assert status == 409 and body["error"]["code"] == "E_CONFLICT"
    assert body["error"]["details"]["kept"] is None
    assert list(outside.rglob("*")) == []
    assert os.path.islink(state / "edits")


async def test_bad_arguments_are_refused_and_nothing_is_written(server):
    target = server.workspace / REL
    before = target.read_text()
    for base in ["", "abc", sha(before).upper(), None, 12]:
        status, body = await edit(server, REL, "x", base)
        assert status == 400 and body["error"]["code"] == "E_BAD_ARGS", base
        assert body["error"]["details"]["field"] == "base_sha256"
    status, body = await edit(server, REL, None, sha(before))
    assert status == 400 and body["error"]["details"]["field"] == "content"
    response = await server.post("/api/edits", data=b'{"path": "%s", "content": "\\ud800", "base_sha256": "%s"}'
                                 % (REL.encode(), sha(before).encode()),
                                 headers={"Content-Type": "application/json"})
    assert response.status == 400 and (await response.json())["error"]["details"]["field"] == "content"
    status, body = await edit(server, "slides/none.html", "x", sha(""))
    assert status == 404 and body["error"]["code"] == "E_NOT_FOUND"
    response = await server.post("/api/edits", data=b"not json",
                                 headers={"Content-Type": "application/json"})
    assert response.status == 400
    assert target.read_text() == before


async def test_a_huge_body_is_refused(server):
    target = server.workspace / REL
    before = target.read_text()
    status, body = await edit(server, REL, "x" * (MAX_EDIT_BYTES + 1), sha(before))
    assert status == 413 and body["error"]["code"] == "E_TOO_LARGE"
    assert target.read_text() == before


async def test_paths_outside_the_workspace_are_denied(server, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, server.workspace / "link-out.txt")
    for path in ["../secret.txt", str(outside), "link-out.txt", ".git/config", ".env"]:
        status, body = await edit(server, path, "pwned", sha("secret"))
        assert status == 403 and body["error"]["code"] == "E_DENY_PATH", (path, body)
    assert outside.read_text() == "secret"


async def test_concurrent_edits_over_one_base_let_exactly_one_win(server):
    target = server.workspace / REL
    base = target.read_text()
    texts = [f"{base}<!-- tab {n} -->" for n in range(8)]
    answers = await asyncio.gather(*(edit(server, REL, text, sha(base)) for text in texts))
    won = [text for text, (status, _) in zip(texts, answers, strict=True) if status == 200]
    assert len(won) == 1 and target.read_text() == won[0]
    lost = [(text, body) for text, (status, body) in zip(texts, answers, strict=True)
            if status != 200]
    for text, body in lost:
        assert body["error"]["code"] == "E_CONFLICT"
        assert (server.workspace / body["error"]["details"]["kept"]).read_text() == text


async def test_undo_is_an_edit_of_its_own_refused_after_the_agent_wrote(server):
    """Undo (edits.js) sends the text before the edit with the edit's result as base."""
    target = server.workspace / REL
    first = target.read_text()
    second = first + "<!-- edited -->"
    assert (await edit(server, REL, second, sha(first)))[0] == 200
    # Undo: back to the first text, over the second.
    assert (await edit(server, REL, first, sha(second)))[0] == 200
    assert target.read_text() == first
    # Redo, then the agent writes, then an undo is a conflict.
    assert (await edit(server, REL, second, sha(first)))[0] == 200
    target.write_text(second + "<!-- agent -->")
    status, body = await edit(server, REL, first, sha(second))
    assert status == 409 and target.read_text() == second + "<!-- agent -->"


async def test_the_agents_next_message_names_the_hand_edited_files(make_server):
    server = await make_server()
    tab = await server.tab()
    for rel in [REL, "theme.css", REL]:
        text = (server.workspace / rel).read_text()
        assert (await edit(server, rel, text + "\n/* by hand */\n", sha(text)))[0] == 200
    await tab.send({"type": "user_message", "content": "go on", "client_msg_id": "c1"})
    calls = await server.backend.wait_call("send_user_message")
    told = calls[0][1]
    assert told.startswith(f'<person-edited files="{REL}, theme.css">'), told
    assert "edited these files by hand" in told and told.rstrip().endswith("go on")
    # Said once: the next message has no note.
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    await tab.send({"type": "user_message", "content": "more", "client_msg_id": "c2"})
    calls = await server.backend.wait_call("send_user_message", 2)
    assert "person-edited" not in calls[1][1]
