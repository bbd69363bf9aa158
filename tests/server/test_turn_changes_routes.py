"""A turn in the mode's terms and reverting one of its changes, on a real
served session (issue 28, items 1 and 2): when a turn ends the chat gets
``turn_described``; ``GET /api/checkpoints/{ref}/changes`` answers the same;
reverting one change keeps the turn's other changes (the mode's own revert
splits manifest.json), refuses to overwrite a hand edit unless told to,
leaves an undo point the chat lists, and tells the agent.

The describer here is a small one of this test's own, registered for the
slide mode (a plugin registered later is asked first), so the host's rules
are tested whatever the slide mode's own describer says."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from pneuma import hookimpl
from pneuma.api import Change, ChangeDescriber, TurnFiles
from pneuma.testing import register_plugin

MANIFEST = "manifest.json"
SLIDE3 = "slides/03-point.html"


def _deck(content: bytes | None) -> dict[str, Any]:
    return json.loads(content or b"{}")


def _describe(files: TurnFiles) -> list[Change]:
    old, new = _deck(files.before(MANIFEST)), _deck(files.after(MANIFEST))
    if not old or not new:
        return []
    titles = {s["file"]: s["title"] for s in old["slides"]}
    changes = [Change(f"title:{s['file']}", f"Slide {n}", "title changed", "changed",
                      (MANIFEST,), locate={"file": s["file"]})
               for n, s in enumerate(new["slides"], 1) if titles.get(s["file"]) != s["title"]]
    if [s["file"] for s in old["slides"]] != [s["file"] for s in new["slides"]]:
        changes.append(Change("order", "Deck", "slides reordered", "moved", (MANIFEST,)))
    return changes


def _revert(files: TurnFiles, change: Change,
            current: Mapping[str, bytes | None]) -> dict[str, bytes | None]:
    old, live = _deck(files.before(MANIFEST)), _deck(current[MANIFEST])
    if change.id == "order":
        place = {s["file"]: i for i, s in enumerate(old["slides"])}
        live["slides"].sort(key=lambda s: place.get(s["file"], len(place)))
    else:
        file = change.id.split(":", 1)[1]
        title = next(s["title"] for s in old["slides"] if s["file"] == file)
        next(s for s in live["slides"] if s["file"] == file)["title"] = title
    return {MANIFEST: json.dumps(live, indent=2).encode()}


class DeckDescriber:
    @hookimpl
    def register_change_describers(self) -> list[ChangeDescriber]:
        return [ChangeDescriber("slide", _describe, revert=_revert)]


@pytest.fixture
def deck_describer() -> Iterator[None]:
    with register_plugin(DeckDescriber(), "test-deck-describer"):
        yield


def _order(deck: dict[str, Any]) -> list[str]:
    return [s["file"].split("/")[1][:2] for s in deck["slides"]]


async def _error(response: Any) -> dict[str, Any]:
    return (await response.json())["error"]


async def test_a_turn_is_described_and_one_change_reverted_with_its_undo(
        make_server, deck_describer):
    server = await make_server()
    manifest, slide3 = server.workspace / MANIFEST, server.workspace / SLIDE3
    original_slide3 = slide3.read_text()
    tab = await server.tab()
    await tab.say("retitle slide 3, move slide 7 after 4", client_msg_id="c1")
    await tab.wait_for("turn_checkpoint")
    await server.backend.wait_call("send_user_message")

    # Mid-turn: nothing to describe yet, and nothing to revert.
    running = await server.get("/api/checkpoints/1/changes")
    assert running.status == 409 and (await _error(running))["details"]["reason"] == \
        "turn_running"
    refused = await server.post("/api/checkpoints/1/changes/order/revert", json={})
    assert refused.status == 409 and (await _error(refused))["details"]["reason"] == \
        "agent_running"

    # The agent's turn: slide 3 retitled (manifest and heading), slide 7 moved after 4.
    deck = json.loads(manifest.read_text())
    deck["slides"][2]["title"] = "Point, don't describe"
    deck["slides"].insert(4, deck["slides"].pop(6))
    manifest.write_text(json.dumps(deck, indent=2))
    slide3.write_text(original_slide3.replace("<h1", "<h1 data-new", 1) + "<!-- new -->\n")
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    described = await tab.wait_for("turn_described")
    assert described["ref"] == "1" and described["source"] == "mode"
    assert [(c["id"], c["where"], c["what"]) for c in described["changes"]] == [
        ("title:slides/03-point.html", "Slide 3", "title changed"),
        ("order", "Deck", "slides reordered"),
        # The file the describer did not account for, per file.
        ("file:slides/03-point.html", SLIDE3, {"en": "changed", "zh-CN": "修改"}),
    ]
    answer = await (await server.get("/api/checkpoints/1/changes")).json()
    assert answer == {k: described[k] for k in ("ref", "source", "changes")}

    # A hand edit of manifest.json since the turn: a conflict, nothing written.
    deck["title"] = "My own deck title"
    manifest.write_text(json.dumps(deck, indent=2))
    conflict = await server.post("/api/checkpoints/1/changes/order/revert", json={})
    assert conflict.status == 409
    error = await _error(conflict)
    assert error["code"] == "E_CONFLICT"
    assert error["details"]["conflicts"] == [{"path": MANIFEST, "reason": "edited_by_hand"}]
    assert json.loads(manifest.read_text()) == deck

    # Overwriting it by name: the order goes back, the new title and the
    # hand edit stay (the mode's revert works on the file as it is now).
    done = await server.post("/api/checkpoints/1/changes/order/revert",
                             json={"overwrite": [MANIFEST]})
    assert done.status == 200, await done.text()
    result = await done.json()
    assert (result["reverted"], result["undoRef"]) == ([MANIFEST], "u1")
    assert result["conflicts"] == [{"path": MANIFEST, "reason": "edited_by_hand"}]
    now = json.loads(manifest.read_text())
    assert _order(now) == ["01", "02", "03", "04", "05", "06", "07", "08"]
    assert now["slides"][2]["title"] == "Point, don't describe"
    assert now["title"] == "My own deck title"
    note = await tab.wait_for("workspace_restored")
    assert (note["target"], note["undo"], note["restored"]) == ("1", "u1", [MANIFEST])
    assert note["reverted_change"]["id"] == "order"

    # A per-file change reverts its file to before the turn.
    per_file = await server.post(
        "/api/checkpoints/1/changes/file:slides%2F03-point.html/revert", json={})
    assert per_file.status == 200, await per_file.text()
    assert slide3.read_text() == original_slide3
    assert (await tab.wait_for("workspace_restored"))["undo"] == "u2"

    # Undo of the first revert (the chat's Undo restores its undo point):
    # the move and the hand edit are back.
    undo = await server.post("/api/checkpoints/u1/restore", json={})
    assert undo.status == 200, await undo.text()
    assert json.loads(manifest.read_text()) == deck

    # The agent's next message says which files the reverts changed.
    await tab.say("go on", client_msg_id="c2")
    await server.backend.wait_call("send_user_message", count=2)
    sent = server.backend.calls_named("send_user_message")[-1][1]
    assert "reverted one change of turn 1 (Deck: slides reordered)" in sent
    assert SLIDE3 in sent

    # A reloaded tab has the description in the conversation.
    history = await (await server.tab(subscribe=False)).full_history()
    assert [m["ref"] for m in history if m["type"] == "turn_described"] == ["1"]


async def test_unknown_turns_and_changes_and_bad_bodies_get_the_one_error_shape(
        make_server, deck_describer):
    server = await make_server()
    tab = await server.tab()
    await tab.say("a turn", client_msg_id="c1")
    await tab.wait_for("turn_checkpoint")
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    described = await tab.wait_for("turn_described")
    assert described["changes"] == []

    for path in ("/api/checkpoints/7/changes", "/api/checkpoints/1/changes/order/revert",
                 "/api/checkpoints/9/changes/order/revert"):
        response = await (server.get(path) if path.endswith("changes") else
                          server.post(path, json={}))
        assert response.status == 404, path
        assert (await _error(response))["code"] == "E_NOT_FOUND"
    bad = await server.get("/api/checkpoints/abc/changes")
    assert bad.status == 400 and (await _error(bad))["code"] == "E_BAD_ARGS"
    bad_body = await server.post("/api/checkpoints/1/changes/order/revert",
                                 json={"overwrite": "all"})
    assert bad_body.status == 400 and (await _error(bad_body))["details"]["field"] == \
        "overwrite"
    unauthorized = await server.request("GET", "/api/checkpoints/1/changes", token=False)
    assert unauthorized.status == 401
