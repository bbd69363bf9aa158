"""The video mode's agent tools (issue 30, video): ``capture_frame`` saves
the frame at a time as a PNG under exports/ (the runtime's picture, which
the export encodes), ``composition_report`` lists the scenes, the totals
and the problems, and wrong arguments are E_* errors, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from pneuma.api import call_mode_tool
from tests.modes.video_sample import SIZE, write_sample

ORANGE = (255, 136, 0)


def test_capture_frame_saves_the_picture_at_that_time(tmp_path: Path) -> None:
    workspace = write_sample(tmp_path / "ws")
    (workspace / "assets").mkdir()
    Image.new("RGB", (40, 40), (0, 0, 255)).save(workspace / "assets" / "blue.png")
    scene = workspace / "scenes" / "01-slide.html"  # an asset named from the workspace's root, as the player does
    scene.write_text(scene.read_text() + '<img src="assets/blue.png" style="position:absolute;left:0;top:0">\n')
    answer = call_mode_tool("video", workspace, "capture_frame", {"time": 0.5})
    assert answer["output"] == "exports/frame-15.png"
    assert (answer["frame"], answer["scene"], answer["time"], answer["sceneTime"]) == (15, "slide", 0.5, 0.5)
    picture = Image.open(workspace / answer["output"]).convert("RGB")
    assert picture.size == SIZE
    assert picture.getpixel((160, 90)) == ORANGE  # the CSS animation's box, half way across
    assert picture.getpixel((10, 10)) == (0, 0, 255)  # the asset loaded
    assert call_mode_tool("video", workspace, "capture_frame", {"time": 1, "output": "a.jpg"})["error"]["code"] == (
        "E_BAD_ARGS")


def test_composition_report_lists_scenes_totals_and_problems(tmp_path: Path) -> None:
    workspace = write_sample(tmp_path / "ws")
    report = call_mode_tool("video", workspace, "composition_report", {})
    assert (report["valid"], report["duration"], report["totalFrames"], report["problems"]) == (True, 2.0, 60, [])
    assert [(s["id"], s["start"], s["startFrame"], s["frames"]) for s in report["scenes"]] == [
        ("slide", 0.0, 0, 30), ("count", 1.0, 30, 30)]
    data = json.loads((workspace / "video.json").read_text())
    data["scenes"][0]["file"] = "scenes/missing.html"
    (workspace / "video.json").write_text(json.dumps(data))
    report = call_mode_tool("video", workspace, "composition_report", {})
    assert report["valid"] is False
    assert report["problems"][0]["message"] == "Scene 1 “Slide”: its file scenes/missing.html does not exist"
    error = call_mode_tool("video", workspace, "capture_frame", {"time": 0.5})["error"]
    assert error["code"] == "E_CONFLICT" and "cannot read scenes/missing.html" in error["message"]
    (workspace / "video.json").write_text("{")
    error = call_mode_tool("video", workspace, "capture_frame", {"time": 0.5})["error"]
    assert (error["code"], error["message"]) == (
        "E_CONFLICT", "video.json is not valid JSON: Expecting property name enclosed in double quotes "
                      "(line 1, column 2)")


def test_the_format_chosen_at_init_is_the_seeded_video_s_size_and_rate(tmp_path: Path) -> None:
    from pneuma.testing import make_workspace

    workspace = make_workspace("video", tmp_path / "vertical", {"format": "1080x1920@30"})
    report = call_mode_tool("video", workspace, "composition_report", {})
    assert (report["valid"], report["width"], report["height"], report["fps"]) == (True, 1080, 1920, 30), report
    # a format that is not one is said, naming the field, never read as the default size
    video_json = workspace / "video.json"
    video_json.write_text(video_json.read_text().replace("1080x1920@30", "big"))
    report = call_mode_tool("video", workspace, "composition_report", {})
    assert report["valid"] is False and "format" in report["problems"][0]["message"], report


def test_a_scene_out_of_any_range_or_a_scene_file_linked_outside_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    workspace = write_sample(tmp_path / "ws")
    video_json = workspace / "video.json"
    sample = json.loads(video_json.read_text())
    for duration, said in (("1e308", "at most 3600"), ("NaN", "must be a number > 0, not NaN")):
        video_json.write_text(json.dumps(sample).replace('"duration": 1', f'"duration": {duration}', 1))
        report = call_mode_tool("video", workspace, "composition_report", {})
        assert report["valid"] is False and said in report["problems"][0]["message"], report
        assert "scenes[0].duration" in report["problems"][0]["message"]
    # a scene file that is a link to a file outside the workspace is never read into a frame
    video_json.write_text(json.dumps(sample))
    secret = tmp_path / "secret.html"
    secret.write_text("<h1>outside</h1>")
    scene = workspace / sample["scenes"][0]["file"]
    scene.unlink()
    scene.symlink_to(secret)
    report = call_mode_tool("video", workspace, "composition_report", {})
    assert report["valid"] is False and "outside the workspace" in report["problems"][0]["message"], report
    answer = call_mode_tool("video", workspace, "capture_frame", {"time": 0})
    assert answer["error"]["code"] in ("E_CONFLICT", "E_BAD_ARGS") and "outside" in answer["error"]["message"], answer
