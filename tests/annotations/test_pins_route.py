"""GET/PUT /api/review/pins: the workspace's review pins, kept in
.pneuma/review-pins.json, the same in every tab (docs/viewer-contract.md,
"Annotate")."""

from __future__ import annotations

import json
import os

from pneuma.annotations.store import MAX_COMMENT_CHARS, MAX_PINS, PinStore

PINS = ".pneuma/review-pins.json"


def pin(n: int, comment: str = "shorter", **extra):
    return {"id": f"p{n}", "selection": {"file": "slides/01-title.html", "selector": "h1"},
            "comment": comment, "status": "open", "place": f"place-{n}", **extra}


async def put(server, body):
    response = await server.put("/api/review/pins", json=body)
    return response.status, await response.json()


async def get(server):
    response = await server.get("/api/review/pins")
    assert response.status == 200
    return await response.json()


async def test_pins_are_stored_numbered_and_broadcast_to_every_tab(server):
    tab = await server.tab()
    status, body = await put(server, {"pins": [pin(1), pin(2, "wrong year")]})
    assert status == 200, body
    assert [p["number"] for p in body["pins"]] == [1, 2]
    assert body["revision"] == 1
    seen = await tab.wait_for("review_pins")
    assert [p["comment"] for p in seen["pins"]] == ["shorter", "wrong year"]
    assert seen["revision"] == 1
    on_disk = json.loads((server.workspace / PINS).read_text())
    assert [p["id"] for p in on_disk["pins"]] == ["p1", "p2"]
    assert (await get(server))["pins"] == body["pins"]


async def test_pins_survive_a_new_store_as_after_a_restart(server):
    await put(server, {"pins": [pin(1, "keep me")]})
    again = PinStore(server.workspace).load()
    assert [p["comment"] for p in again.pins] == ["keep me"]
    assert again.revision == 1


async def test_no_file_is_no_pins(server):
    assert await get(server) == {"pins": [], "revision": 0}


async def test_a_link_planted_at_the_pins_file_is_never_followed(server, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("the person's own file")
    (server.workspace / ".pneuma").mkdir(exist_ok=True)
    os.symlink(outside, server.workspace / PINS)
    assert (await get(server))["pins"] == []  # not read through the link
    status, body = await put(server, {"pins": [pin(1)]})
    assert status == 200, body
    assert outside.read_text() == "the person's own file"
    assert not (server.workspace / PINS).is_symlink()
    assert json.loads((server.workspace / PINS).read_text())["pins"][0]["id"] == "p1"


async def test_a_damaged_file_reads_as_no_pins_and_is_kept_aside(make_server, tmp_path):
    first = await make_server()
    state = first.workspace / ".pneuma"
    state.mkdir(exist_ok=True)
    (state / "review-pins.json").write_text('{"pins": [{"id": ')
    fresh = PinStore(first.workspace).load()
    assert fresh.pins == []
    kept = [p for p in state.iterdir() if p.name.startswith("review-pins.json.damaged-")]
    assert len(kept) == 1 and kept[0].read_text() == '{"pins": [{"id": '


async def test_a_body_over_the_bound_is_too_large(server):
    response = await server.put("/api/review/pins", data=b"[" + b" " * (9 * 1024 * 1024) + b"]",
                                headers={"Content-Type": "application/json"})
    assert response.status == 413
    assert (await response.json())["error"]["code"] == "E_TOO_LARGE"


async def test_too_many_pins_or_a_huge_comment_are_refused(server):
    status, body = await put(server, {"pins": [pin(n) for n in range(MAX_PINS + 1)]})
    assert status == 413 and body["error"]["code"] == "E_TOO_LARGE"
    status, body = await put(server, {"pins": [pin(1, "x" * (MAX_COMMENT_CHARS + 1))]})
    assert status == 413 and body["error"]["code"] == "E_TOO_LARGE"
    assert (await get(server))["pins"] == []


async def test_malformed_pins_are_bad_args(server):
    for bad in ({"pins": "nope"}, {"pins": [{"comment": "no id"}]}, {"pins": [pin(1), pin(1)]},
                {"pins": [pin(1, status="done")]}, {"nothing": []}, [1, 2]):
        status, body = await put(server, bad)
        assert status == 400, bad
        assert body["error"]["code"] == "E_BAD_ARGS"
    response = await server.put("/api/review/pins", data=b"{not json",
                                headers={"Content-Type": "application/json"})
    assert response.status == 400
