"""A turn in the mode's terms and reverting one of its changes, on a real
served slide session with the slide mode's own describer (issue 28, items 1
and 2): when a turn ends the chat gets ``turn_described``; ``GET
/api/checkpoints/{ref}/changes`` answers the same; reverting one change
keeps the turn's other changes (the mode's revert splits manifest.json),
refuses to overwrite a hand edit unless told to, leaves an undo point the
chat lists, and tells the agent; a file the mode does not describe is
reverted per file. Describing never holds the next message, and is done
once per turn."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from pneuma import hookimpl
from pneuma.api import Change, ChangeDescriber, TurnFiles, describe_files
from pneuma.testing import register_plugin

MANIFEST = "manifest.json"
ASSET = "assets/chart.svg"
TITLE = "slide:slides/03-point.html:title"
MOVE = "slide:slides/07-workflow.html:moved"
NEW_TITLE = "Point, don't describe"


def _order(deck: dict[str, Any]) -> list[str]:
    return [s["file"].split("/")[1][:2] for s in deck["slides"]]


async def _error(response: Any) -> dict[str, Any]:
    return (await response.json())["error"]


async def test_a_turn_is_described_and_one_change_reverted_with_its_undo(
        make_server):
    server = await make_server()
    manifest, asset = server.workspace / MANIFEST, server.workspace / ASSET
    tab = await server.tab()
    await tab.say("retitle slide 3, move slide 7 after 4", client_msg_id="c1")
    await tab.wait_for("turn_checkpoint")
    await server.backend.wait_call("send_user_message")

    # Mid-turn: nothing to describe yet, and nothing to revert.
    running = await server.get("/api/checkpoints/1/changes")
    assert running.status == 409 and (await _error(running))["details"]["reason"] == \
        "turn_running"
    refused = await server.post(f"/api/checkpoints/1/changes/{MOVE}/revert", json={})
    assert refused.status == 409 and (await _error(refused))["details"]["reason"] == \
        "agent_running"

    # The agent's turn: slide 3 retitled, slide 7 moved after 4, a picture added.
    deck = json.loads(manifest.read_text())
    deck["slides"][2]["title"] = NEW_TITLE
    deck["slides"].insert(4, deck["slides"].pop(6))
    manifest.write_text(json.dumps(deck, indent=2))
    asset.write_text("<svg/>")
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    described = await tab.wait_for("turn_described")
    assert described["ref"] == "1" and described["source"] == "mode"
    assert [(c["id"], c["where"], c["what"]["en"]) for c in described["changes"]] == [
        (TITLE, {"en": "Slide 3", "zh-CN": "第 3 页"}, "title changed"),
        (MOVE, {"en": "Slide 5", "zh-CN": "第 5 页"}, "moved from 7 to 5"),
        # The file the mode does not describe, per file.
        (f"file:{ASSET}", ASSET, "added"),
    ]
    answer = await (await server.get("/api/checkpoints/1/changes")).json()
    assert answer == {k: described[k] for k in ("ref", "source", "changes")}

    # A hand edit of manifest.json since the turn: a conflict, nothing written.
    deck["title"] = "My own deck title"
    manifest.write_text(json.dumps(deck, indent=2))
    conflict = await server.post(f"/api/checkpoints/1/changes/{MOVE}/revert", json={})
    assert conflict.status == 409
    error = await _error(conflict)
    assert error["code"] == "E_CONFLICT"
    assert error["details"]["conflicts"] == [{"path": MANIFEST, "reason": "edited_by_hand"}]
    assert json.loads(manifest.read_text()) == deck

    # Overwriting it by name: the order goes back, the new title and the
    # hand edit stay (the mode's revert works on the file as it is now).
    done = await server.post(f"/api/checkpoints/1/changes/{MOVE}/revert",
                             json={"overwrite": [MANIFEST]})
    assert done.status == 200, await done.text()
    result = await done.json()
    assert (result["reverted"], result["undoRef"]) == ([MANIFEST], "u1")
    assert result["conflicts"] == [{"path": MANIFEST, "reason": "edited_by_hand"}]
    now = json.loads(manifest.read_text())
    assert _order(now) == ["01", "02", "03", "04", "05", "06", "07", "08"]
    assert now["slides"][2]["title"] == NEW_TITLE
    assert now["title"] == "My own deck title"
    note = await tab.wait_for("workspace_restored")
    assert (note["target"], note["undo"], note["restored"]) == ("1", "u1", [MANIFEST])
    assert note["reverted_change"]["id"] == MOVE

    # A per-file change reverts its file to before the turn: the picture goes.
    # (The id's "/" as the page's encodeURIComponent sends it.)
    per_file = await server.post("/api/checkpoints/1/changes/file:assets%2Fchart.svg/revert",
                                 json={})
    assert per_file.status == 200, await per_file.text()
    assert not asset.exists()
    assert (await tab.wait_for("workspace_restored"))["undo"] == "u2"

    # The chat's Undo restores a revert's undo point: newest first, the
    # picture is back, then the move and the hand edit.
    undo = await server.post("/api/checkpoints/u2/restore", json={})
    assert undo.status == 200, await undo.text()
    assert asset.read_text() == "<svg/>" and _order(json.loads(manifest.read_text()))[4] == "05"
    undo = await server.post("/api/checkpoints/u1/restore", json={})
    assert undo.status == 200, await undo.text()
    assert json.loads(manifest.read_text()) == deck

    # The agent's next message says which files the reverts changed.
    await tab.say("go on", client_msg_id="c2")
    await server.backend.wait_call("send_user_message", count=2)
    sent = server.backend.calls_named("send_user_message")[-1][1]
    assert "reverted one change of turn 1 (Slide 5: moved from 7 to 5)" in sent
    assert ASSET in sent

    # A reloaded tab has the description in the conversation.
    history = await (await server.tab(subscribe=False)).full_history()
    assert [m["ref"] for m in history if m["type"] == "turn_described"] == ["1"]


async def test_unknown_turns_and_changes_and_bad_bodies_get_the_one_error_shape(
        make_server):
    server = await make_server()
    tab = await server.tab()
    await tab.say("a turn", client_msg_id="c1")
    await tab.wait_for("turn_checkpoint")
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    described = await tab.wait_for("turn_described")
    assert described["changes"] == []

    for path in ("/api/checkpoints/7/changes", f"/api/checkpoints/1/changes/{MOVE}/revert",
                 f"/api/checkpoints/9/changes/{MOVE}/revert"):
        response = await (server.get(path) if path.endswith("changes") else
                          server.post(path, json={}))
        assert response.status == 404, path
        assert (await _error(response))["code"] == "E_NOT_FOUND"
    bad = await server.get("/api/checkpoints/abc/changes")
    assert bad.status == 400 and (await _error(bad))["code"] == "E_BAD_ARGS"
    bad_body = await server.post(f"/api/checkpoints/1/changes/{MOVE}/revert",
                                 json={"overwrite": "all"})
    assert bad_body.status == 400 and (await _error(bad_body))["details"]["field"] == \
        "overwrite"
    unauthorized = await server.request("GET", "/api/checkpoints/1/changes", token=False)
    assert unauthorized.status == 401


async def test_a_slow_describer_never_holds_the_next_message_and_describes_once(make_server):
    release, calls, released = threading.Event(), [], []

    def slow(files: TurnFiles) -> list[Change]:
        calls.append(1)
        # True only if the test got to release it while this still waited
        # (a describer run on the event loop would block the test too).
        released.append(release.wait(5))
        return describe_files(files)

    class SlowDescriber:
        @hookimpl
        def register_change_describers(self) -> list[ChangeDescriber]:
            return [ChangeDescriber("slide", slow)]

    with register_plugin(SlowDescriber(), "test-slow-describer"):
        server = await make_server()
        tab = await server.tab()
        await tab.say("first", client_msg_id="c1")
        await tab.wait_for("turn_checkpoint")
        (server.workspace / ASSET).write_text("<svg/>")
        server.backend.emit({"type": "result", "data": {"subtype": "success",
                                                        "is_error": False}})
        await tab.wait_for("turn_changes")
        try:
            async with asyncio.timeout(10):
                while not calls:
                    await asyncio.sleep(0.01)
            # The describer is at work, blocked: the next message reaches the agent.
            await tab.say("second", client_msg_id="c2")
            await server.backend.wait_call("send_user_message", count=2)
            assert calls == [1]
        finally:
            release.set()
        described = await tab.wait_for("turn_described")
        assert [c["id"] for c in described["changes"]] == [f"file:{ASSET}"]
        answer = await (await server.get("/api/checkpoints/1/changes")).json()
        assert answer["changes"] == described["changes"] and calls == [1]  # kept, not redone
        assert released == [True]
