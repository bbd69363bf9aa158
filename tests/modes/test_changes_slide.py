"""The slide mode describes a turn in slides: added, removed, moved, retitled,
text or layout changed on slide N, theme changed; and reverts one of them
while keeping every other change of the turn (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pneuma.api import TurnFilesFromMaps
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_changes import all_describers, describe_turn, revert_contents

SEEDS = Path(__file__).resolve().parents[2] / "plugins" / "slide" / "pneuma_slide" / "seeds"


def _seed_deck() -> dict[str, bytes]:
    return {p.relative_to(SEEDS).as_posix(): p.read_bytes() for p in SEEDS.rglob("*") if p.is_file()}


def _manifest(deck: dict[str, bytes]) -> dict:
    return json.loads(deck["manifest.json"])


def _with_manifest(deck: dict[str, bytes], data: dict) -> dict[str, bytes]:
    return {**deck, "manifest.json": json.dumps(data, indent=2).encode()}


@pytest.fixture(scope="module")
def describer():
    return all_describers(get_plugin_manager())["slide"]


def _summary(turn) -> list[tuple[str, str, str]]:
    return [(_where(c), c.what if isinstance(c.what, str) else c.what["en"], c.kind) for c in turn.changes]


def _where(change) -> str:
    return change.where if isinstance(change.where, str) else change.where["en"]


def test_retitling_slide_3_and_moving_slide_7_after_4_is_exactly_two_changes(describer) -> None:
    before = _seed_deck()
    data = _manifest(before)
    slides = data["slides"]
    slides[2]["title"] = "Point, don't explain"
    slides.insert(4, slides.pop(6))
    after = _with_manifest(before, data)
    files = TurnFilesFromMaps(before, after)

    turn = describe_turn(describer, files)

    assert turn.source == "mode"
    assert [(_where(c), c.kind) for c in turn.changes] == [("Slide 3", "changed"), ("Slide 5", "moved")]
    title, move = turn.changes
    assert "title" in title.what["en"] and "from 7 to 5" in move.what["en"]
    assert move.locate == {"file": "slides/07-workflow.html"}
    assert title.locate == {"file": "slides/03-point.html"}

    written = revert_contents(turn, files, move, {"manifest.json": after["manifest.json"]})

    reverted = json.loads(written["manifest.json"])
    assert [s["file"] for s in reverted["slides"]] == [s["file"] for s in _manifest(before)["slides"]]
    assert reverted["slides"][2]["title"] == "Point, don't explain"
    assert reverted["title"] == data["title"]

    back = revert_contents(turn, files, title, {"manifest.json": after["manifest.json"]})
    kept_order = json.loads(back["manifest.json"])
    assert [s["file"] for s in kept_order["slides"]] == [s["file"] for s in slides]
    assert kept_order["slides"][2]["title"] == _manifest(before)["slides"][2]["title"]


def test_adds_removes_text_layout_and_theme_each_name_their_slide(describer) -> None:
    before = _seed_deck()
    data = _manifest(before)
    removed = data["slides"].pop(1)  # slide 2 of the old order
    data["slides"].append({"file": "slides/09-new.html", "title": "New at the end"})
    after = _with_manifest(before, data)
    del after[removed["file"]]
    after["slides/09-new.html"] = b'<section class="slide"><h1>New at the end</h1></section>\n'
    after["slides/04-loop.html"] = before["slides/04-loop.html"].replace(b'class="figure"', b'class="figure figure--wide"', 1)
    assert after["slides/04-loop.html"] != before["slides/04-loop.html"]
    after["slides/01-title.html"] = before["slides/01-title.html"].replace(b"<strong>Pneuma</strong>", b"<strong>Pneuma, live</strong>", 1)
    after["theme.css"] = before["theme.css"] + b"\n:root { --accent: red; }\n"

    turn = describe_turn(describer, TurnFilesFromMaps(before, after))

    summary = _summary(turn)
    assert ("Theme", "changed", "changed") in summary
    assert ("Slide 1", "text changed", "changed") in summary
    assert ("Slide 2", "removed", "removed") in summary
    assert ("Slide 3", "layout changed", "changed") in summary  # 04-loop is third now
    assert ("Slide 8", "added", "added") in summary
    assert len(summary) == 5 and turn.source == "mode"
    assert not any(c.kind == "moved" for c in turn.changes)  # a removal shifts, it does not move
    added = next(c for c in turn.changes if c.kind == "added")
    assert set(added.files) == {"manifest.json", "slides/09-new.html"}

    # Reverting the addition takes the entry out and deletes the file; the removal stays.
    files = TurnFilesFromMaps(before, after)
    current = {"manifest.json": after["manifest.json"], "slides/09-new.html": after["slides/09-new.html"]}
    written = revert_contents(turn, files, added, current)
    assert written["slides/09-new.html"] is None
    assert [s["file"] for s in json.loads(written["manifest.json"])["slides"]] == \
        [s["file"] for s in data["slides"][:-1]]

    # Reverting the removal puts slide 2 back at its place and its file back.
    gone = next(c for c in turn.changes if c.kind == "removed")
    current = {p: after.get(p) for p in gone.files}
    written = revert_contents(turn, files, gone, current)
    assert written[removed["file"]] == before[removed["file"]]
    order = [s["file"] for s in json.loads(written["manifest.json"])["slides"]]
    assert order[1] == removed["file"] and order[-1] == "slides/09-new.html"


def test_a_heading_retitle_reverts_only_the_heading_and_keeps_other_edits(describer) -> None:
    before = {"manifest.json": json.dumps({"slides": [{"file": "slides/a.html", "title": "Old"}]}).encode(),
              "slides/a.html": b'<section class="slide">\n  <h1>Old</h1>\n  <p>Body one.</p>\n</section>\n'}
    after = {"manifest.json": json.dumps({"slides": [{"file": "slides/a.html", "title": "New"}]}).encode(),
             "slides/a.html": b'<section class="slide">\n  <h1>New</h1>\n  <p>Body two.</p>\n</section>\n'}
    files = TurnFilesFromMaps(before, after)
    turn = describe_turn(describer, files)
    assert _summary(turn) == [("Slide 1", "title changed", "changed"), ("Slide 1", "text changed", "changed")]
    title, text = turn.changes
    assert set(title.files) == {"manifest.json", "slides/a.html"}
    written = revert_contents(turn, files, title, {p: after[p] for p in title.files})
    assert written["slides/a.html"] == b'<section class="slide">\n  <h1>Old</h1>\n  <p>Body two.</p>\n</section>\n'
    assert json.loads(written["manifest.json"])["slides"][0]["title"] == "Old"
    written = revert_contents(turn, files, text, {"slides/a.html": after["slides/a.html"]})
    assert written["slides/a.html"] == b'<section class="slide">\n  <h1>New</h1>\n  <p>Body one.</p>\n</section>\n'


def test_a_broken_manifest_is_described_per_file_without_an_exception(describer) -> None:
    before = _seed_deck()
    after = {**before, "manifest.json": b'{"slides": [', "theme.css": before["theme.css"] + b"/* x */"}
    files = TurnFilesFromMaps(before, after)
    turn = describe_turn(describer, files)
    assert turn.warning is None
    assert sorted(f for c in turn.changes for f in c.files) == ["manifest.json", "theme.css"]
    # And the other way round: the turn repaired a broken manifest; reverting
    # that puts the broken one back, as the per-file fallback would.
    files = TurnFilesFromMaps(after, before)
    turn = describe_turn(describer, files)
    manifest = next(c for c in turn.changes if c.files == ("manifest.json",))
    assert revert_contents(turn, files, manifest, {"manifest.json": before["manifest.json"]}) == \
        {"manifest.json": b'{"slides": ['}


def test_a_50_slide_deck_turn_reads_as_its_moves_and_changes(describer) -> None:
    slides = [{"file": f"slides/{i:02d}.html", "title": f"Slide {i}"} for i in range(50)]
    before = {f"slides/{i:02d}.html": f'<section class="slide"><h1>Slide {i}</h1><p>{"text " * 80}</p></section>'.encode()
              for i in range(50)}
    before["manifest.json"] = json.dumps({"slides": slides}).encode()
    after = {path: content.replace(b"text", b"words") for path, content in before.items()}
    moved = list(reversed(slides))
    after["manifest.json"] = json.dumps({"slides": moved}).encode()
    files = TurnFilesFromMaps(before, after)
    # Its speed is benchmarks/bench_describe.py's.
    turn = describe_turn(describer, files)
    assert sum(c.kind == "moved" for c in turn.changes) == 49
    assert sum(c.kind == "changed" for c in turn.changes) == 50


def test_through_the_checkpoint_store_reverting_the_move_writes_the_old_order_and_keeps_the_title(
        tmp_path: Path) -> None:
    # The same turn on disk, as `pneuma checkpoints revert` and the chat run it.
    from pneuma.checkpoints import Checkpoints
    from pneuma.checkpoints.described_turns import DescribedTurns
    from pneuma.checkpoints.revert_change import revert_change

    for path, content in _seed_deck().items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(content)
    order = [s["file"] for s in _manifest(_seed_deck())["slides"]]
    store = Checkpoints(tmp_path)
    ref = store.record("retitle 3, move 7 after 4").ref
    data = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    data["slides"][2]["title"] = "Point, don't explain"
    data["slides"].insert(4, data["slides"].pop(6))
    (tmp_path / "manifest.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    store.turn_ended()

    turns = DescribedTurns(store, "slide")
    _, turn = turns.describe(ref)
    assert [(c.id, c.kind) for c in turn.changes] == [("slide:slides/03-point.html:title", "changed"),
                                                      ("slide:slides/07-workflow.html:moved", "moved")]
    result = revert_change(store, turns, ref, "slide:slides/07-workflow.html:moved")
    assert result.reverted == ["manifest.json"] and not result.conflicts
    on_disk = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert [s["file"] for s in on_disk["slides"]] == order
    assert on_disk["slides"][2]["title"] == "Point, don't explain"


def test_the_decks_title_and_manifest_settings_revert_on_their_own(describer) -> None:
    before = {"manifest.json": b'{"title": "Old deck", "slides": [{"file": "slides/a.html", "title": "A"}]}'}
    after = {"manifest.json": json.dumps({"title": "New deck", "aspect": "4:3",
                                          "slides": [{"file": "slides/a.html", "title": "A2"}]}).encode()}
    files = TurnFilesFromMaps(before, after)
    turn = describe_turn(describer, files)
    assert _summary(turn) == [("Deck", "title changed", "changed"),
                              ("Theme", "settings changed in manifest.json", "changed"),
                              ("Slide 1", "title changed", "changed")]
    deck, settings, _ = turn.changes
    written = json.loads(revert_contents(turn, files, deck, after)["manifest.json"])
    assert written == {"title": "Old deck", "aspect": "4:3", "slides": [{"file": "slides/a.html", "title": "A2"}]}
    written = json.loads(revert_contents(turn, files, settings, after)["manifest.json"])
    assert written == {"title": "New deck", "slides": [{"file": "slides/a.html", "title": "A2"}]}


def test_a_slide_only_reformatted_is_still_named_by_its_slide(describer) -> None:
    before = _seed_deck()
    after = {**before, "slides/02-problem.html": before["slides/02-problem.html"].replace(b"\n  ", b"\n    ")}
    assert after["slides/02-problem.html"] != before["slides/02-problem.html"]
    turn = describe_turn(describer, TurnFilesFromMaps(before, after))
    assert _summary(turn) == [("Slide 2", "source reformatted", "changed")]
