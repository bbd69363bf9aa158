"""The video mode describes a turn in scenes (issue 30, video): a scene's
file changed, a scene added, removed or moved, its duration, the video's
size, each with ``locate`` {scene, time} for Show; and one change reverted
alone leaves the others in video.json as they are."""

from __future__ import annotations

import json

from pneuma_video.changes import DESCRIBER

from pneuma.api import TurnFilesFromMaps
from pneuma.host.turn_changes import describe_turn, revert_contents
from tests.modes.video_sample import COUNT, SLIDE, composition

INTRO = "<h1>Intro</h1>\n"


def state(doc: dict[str, object], **scenes: str) -> dict[str, bytes]:
    files = {"video.json": json.dumps(doc).encode()}
    files.update({f"scenes/{name}.html": text.encode() for name, text in scenes.items()})
    return files


BEFORE_DOC = composition()
AFTER_DOC = composition(width=640, height=360, scenes=[
    {"id": "intro", "title": "Intro", "file": "scenes/00-intro.html", "duration": 0.5},
    {**BEFORE_DOC["scenes"][1], "duration": 1.5},
    {**BEFORE_DOC["scenes"][0]},
])
BEFORE = state(BEFORE_DOC, **{"01-slide": SLIDE, "02-count": COUNT})
AFTER = state(AFTER_DOC, **{"00-intro": INTRO, "01-slide": SLIDE.replace("#f80", "#08f"), "02-count": COUNT})


def test_a_turn_is_described_scene_by_scene_with_where_to_look() -> None:
    files = TurnFilesFromMaps(BEFORE, AFTER)
    changes = DESCRIBER.describe(files)
    said = [(c.id, c.where["en"], c.what["en"], c.kind, c.files, c.locate) for c in changes]
    assert said == [
        ("video:size", "Video", "size 320×180 → 640×360", "changed", ("video.json",), {"time": 0}),
        ("video:scene:intro", "Scene 1 “Intro”", "added (0.5 s)", "added",
         ("video.json", "scenes/00-intro.html"), {"scene": "intro", "time": 0.0}),
        ("video:scene:count", "Scene 2 “Count”", "duration 1 s → 1.5 s", "changed", ("video.json",),
         {"scene": "count", "time": 0.5}),
        ("video:scene:slide", "Scene 3 “Slide”", "changed · moved 1 → 3", "changed",
         ("video.json", "scenes/01-slide.html"), {"scene": "slide", "time": 2.0}),
    ]
    assert changes[1].what["zh-CN"] == "新增（0.5 s）" and changes[1].where["zh-CN"] == "第 1 个场景“Intro”"


def test_a_removed_scene_and_a_broken_video_json_are_said() -> None:
    after = composition(scenes=[BEFORE_DOC["scenes"][0]])
    changes = DESCRIBER.describe(TurnFilesFromMaps(BEFORE, state(after, **{"01-slide": SLIDE})))
    assert [(c.id, c.what["en"], c.kind, c.files) for c in changes] == [
        ("video:scene:count", "removed", "removed", ("video.json", "scenes/02-count.html"))]
    broken = {**BEFORE, "video.json": b'{"scenes": ['}
    [change] = DESCRIBER.describe(TurnFilesFromMaps(BEFORE, broken))
    assert change.what["en"].startswith("changed (video.json does not read: video.json is not valid JSON")


def test_one_change_reverted_keeps_the_others_in_video_json() -> None:
    files = TurnFilesFromMaps(BEFORE, AFTER)
    turn = describe_turn(DESCRIBER, files)
    by_id = {c.id: c for c in turn.changes}
    current = {path: AFTER.get(path) for path in ("video.json", "scenes/00-intro.html", "scenes/01-slide.html")}
    # the size back to 320×180; the scenes stay as the turn left them
    reverted = revert_contents(turn, files, by_id["video:size"], current)
    doc = json.loads(reverted["video.json"] or b"")
    assert (doc["width"], doc["height"]) == (320, 180) and doc["scenes"] == AFTER_DOC["scenes"]
    # the added scene goes: out of video.json, and its file with it
    reverted = revert_contents(turn, files, by_id["video:scene:intro"], current)
    doc = json.loads(reverted["video.json"] or b"")
    assert [s["id"] for s in doc["scenes"]] == ["count", "slide"] and doc["width"] == 640
    assert reverted["scenes/00-intro.html"] is None
    moved_only = composition(scenes=[BEFORE_DOC["scenes"][1], BEFORE_DOC["scenes"][0]])
    changes = DESCRIBER.describe(TurnFilesFromMaps(BEFORE, state(moved_only, **{"01-slide": SLIDE, "02-count": COUNT})))
    assert [(c.id, c.what["en"], c.kind) for c in changes] == [
        ("video:scene:count", "moved 2 → 1", "moved"), ("video:scene:slide", "moved 1 → 2", "moved")]
    # the moved and recoloured scene: back to its place and its colour
    reverted = revert_contents(turn, files, by_id["video:scene:slide"], current)
    doc = json.loads(reverted["video.json"] or b"")
    assert [s["id"] for s in doc["scenes"]] == ["slide", "intro", "count"]
    assert reverted["scenes/01-slide.html"] == SLIDE.encode()


def test_a_size_given_as_format_is_described_and_reverted() -> None:
    """The seed says the size as "format" (the init choice): the agent's new format is undone by Revert."""
    before_doc = {k: v for k, v in BEFORE_DOC.items() if k not in ("width", "height", "fps")}
    before = state({**before_doc, "format": "1280x720@30"}, **{"01-slide": SLIDE, "02-count": COUNT})
    after = state({**before_doc, "format": "1080x1920@30"}, **{"01-slide": SLIDE, "02-count": COUNT})
    files = TurnFilesFromMaps(before, after)
    turn = describe_turn(DESCRIBER, files)
    [change] = turn.changes
    assert (change.id, change.what["en"]) == ("video:size", "size 1280×720 → 1080×1920")
    reverted = revert_contents(turn, files, change, {"video.json": after["video.json"]})
    assert json.loads(reverted["video.json"] or b"")["format"] == "1280x720@30"
