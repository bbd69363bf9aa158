"""A shared file dropped on the launcher's page (issue 29, item 2): its
bytes sent to POST /api/workspaces/from-share make a new workspace of the
last turn's files, served at once and holding the conversation as history;
a folder with files, a hostile file and a file that is no share are refused
with their E_* code and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

from pneuma.server.config import SESSION
from pneuma.share.model import fill_template
from tests.share.test_open import DECK_2, TEMPLATE, shared_deck


def _share_bytes(data=None) -> bytes:
    return fill_template(TEMPLATE, data or shared_deck()).encode("utf-8")


async def test_a_dropped_share_becomes_a_served_workspace(launcher) -> None:
    status, answer = await launcher.call("POST", "/api/workspaces/from-share?name=deck.html",
                                         data=_share_bytes(),
                                         headers={"Content-Type": "text/html"})
    assert status == 200, answer
    workspace = launcher.home / "Pneuma" / "Launch deck"  # named after the title
    assert answer["servedBy"] == "launcher" and answer["path"] == str(workspace)
    assert (workspace / "slides" / "01-deck.html").read_bytes() == DECK_2
    session = launcher.state.hosting.sessions()[0].runner.app[SESSION]
    assert session.conversation is not None
    rows = session.conversation.tail(session.conversation_id, 1 << 20).messages
    shown = [json.loads(r.text).get("content") for r in rows
             if json.loads(r.text).get("type") == "user_message"]
    assert shown == ["make a deck", "retitle and add a slide"]

    # Dropped again: a folder of its own, never the first one.
    status, again = await launcher.call("POST", "/api/workspaces/from-share?name=deck.html",
                                        data=_share_bytes(), headers={"Content-Type": "text/html"})
    assert status == 200, again
    assert again["path"] == str(launcher.home / "Pneuma" / "Launch deck-2")


async def test_a_dropped_file_is_refused_as_pneuma_open_refuses_it(launcher, tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "mine.txt").write_text("keep")
    status, answer = await launcher.call(
        "POST", f"/api/workspaces/from-share?name=deck.html&path={taken}", data=_share_bytes())
    assert (status, answer["error"]["code"]) == (409, "E_CONFLICT")
    assert sorted(p.name for p in taken.iterdir()) == ["mine.txt"]

    hostile = shared_deck()
    hostile.turns[-1].tree["../../escaped.txt"] = hostile.add_content(b"x")
    target = tmp_path / "hostile"
    status, answer = await launcher.call(
        "POST", f"/api/workspaces/from-share?name=h.html&path={target}", data=_share_bytes(hostile))
    assert (status, answer["error"]["code"]) == (400, "E_BAD_ARGS")
    assert not target.exists() and not (tmp_path / "escaped.txt").exists()

    status, answer = await launcher.call("POST", "/api/workspaces/from-share?name=page.html",
                                         data=b"<!doctype html><p>a page</p>")
    assert (status, answer["error"]["code"]) == (422, "E_PARSE_FAIL")
    assert launcher.state.hosting.sessions() == []
