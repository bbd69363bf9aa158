"""The webgal mode describes a turn in scenes and resources (issue 28, item 1)."""

from __future__ import annotations

import time

from pneuma.api import TurnFilesFromMaps
from pneuma.host.turn_changes import describe_turn, revert_contents
from pneuma_webgal.changes import DESCRIBER

START = "changeBg:station_dusk.png -next;\nMio:The last train is late.;\nStationmaster:Again?;\nend;\n"


def _described(before: dict[str, bytes], after: dict[str, bytes]):
    return describe_turn(DESCRIBER, TurnFilesFromMaps(before, after))


def test_lines_added_and_changed_in_a_scene_name_the_first_line_and_its_command() -> None:
    after = START.replace("Stationmaster:Again?;", "Stationmaster:Again, tonight?;") + \
        "changeFigure:mio.png -left;\nMio:Let's walk.;\n"
    turn = _described({"game/scene/start.txt": START.encode()},
                      {"game/scene/start.txt": after.encode()})
    assert turn.source == "mode"
    [change] = turn.changes
    assert change.to_json()["where"] == {"en": "Scene start.txt", "zh-CN": "场景 start.txt"}
    # "end;" moved below the two new lines: they count as added, the retold line as changed
    assert change.to_json()["what"]["en"] == "2 lines added, 1 changed (from line 3, say)"
    assert change.locate == {"file": "game/scene/start.txt", "line": 3}
    assert change.kind == "changed"


def test_scene_added_and_removed_and_resources_grouped_per_folder() -> None:
    before = {"game/scene/old.txt": b"end;\n", "game/background/a.png": b"1"}
    after = {"game/scene/new.txt": b"Mio:Hello.;\nend;\n", "game/background/a.png": b"1",
             "game/background/river.png": b"2", "game/background/sky.png": b"3",
             "game/figure/mio.png": b"4", "game/config.txt": b"Game_name:x;\n"}
    turn = _described(before, after)
    labels = [(c.id, c.to_json()["what"]["en"]) for c in turn.changes]
    assert labels == [
        ("scene:game/scene/new.txt", "added (3 lines)"),
        ("scene:game/scene/old.txt", "removed"),
        ("resources:game/background:added", "2 added: river.png, sky.png"),
        ("resources:game/figure:added", "1 added: mio.png"),
        ("file:game/config.txt", {"en": "added", "zh-CN": "新增"}["en"]),
    ]
    backgrounds = turn.changes[2]
    assert backgrounds.files == ("game/background/river.png", "game/background/sky.png")
    # reverting the group removes exactly its files
    files = TurnFilesFromMaps(before, after)
    assert revert_contents(turn, files, backgrounds, {p: after[p] for p in backgrounds.files}) == {
        "game/background/river.png": None, "game/background/sky.png": None}


def test_a_scene_that_is_not_text_is_still_one_change_and_never_raises() -> None:
    turn = _described({"game/scene/start.txt": b"\xff\xfe broken"}, {"game/scene/start.txt": START.encode()})
    [change] = turn.changes
    assert change.to_json()["what"]["en"] == "changed"
    assert change.files == ("game/scene/start.txt",)


def test_a_two_thousand_line_scene_is_described_in_a_few_milliseconds() -> None:
    lines = [f"Mio:Line number {n}.;" for n in range(2000)]
    changed = list(lines)
    changed[1200] = "Mio:A new line.;"
    changed.insert(1500, "changeBg:river_night.png;")
    before = {"game/scene/long.txt": "\n".join(lines).encode()}
    after = {"game/scene/long.txt": "\n".join(changed).encode()}
    started = time.perf_counter()
    turn = _described(before, after)
    took = time.perf_counter() - started
    assert turn.changes[0].to_json()["what"]["en"] == "1 line added, 1 changed (from line 1201, say)"
    assert took < 0.25, took


def test_the_webgal_mode_registers_its_describer() -> None:
    from pneuma.host.plugins import build_plugin_manager
    from pneuma.host.turn_changes import all_describers

    assert all_describers(build_plugin_manager())["webgal"] is DESCRIBER
