"""A rewind's preview in the page lists a big file the turn added as
staying, and the rewind leaves it (issue 23, item 2), on a real served
session."""

from __future__ import annotations

from tests.checkpoints.test_restore_keeps_what_undo_cannot import MIB, big_file

REL = "slides/01-title.html"
BIG = "assets/recording.mov"


async def test_the_rewind_preview_and_the_rewind_keep_a_big_added_file(make_server):
    server = await make_server()
    target = server.workspace / REL
    original = target.read_text()
    tab = await server.tab()
    await tab.say("add the recording", client_msg_id="c1")
    await tab.wait_for("turn_checkpoint")
    await server.backend.wait_call("send_user_message")
    target.write_text(original + "<video></video>\n")
    big = big_file(server.workspace, BIG, 21 * MIB)
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    await tab.wait_for("turn_changes")

    plan = await (await server.get("/api/checkpoints/1/plan")).json()
    assert plan["delete"] == [] and plan["write"] == [REL]
    assert plan["leftAsIs"] == [{"path": BIG, "reason": "too_big",
                                 "why": "too big for the undo point to keep, so the rewind "
                                        "leaves it"}]
    response = await server.post("/api/checkpoints/1/restore", json={})
    assert response.status == 200, await response.text()
    assert target.read_text() == original
    assert big.stat().st_size == 21 * MIB
