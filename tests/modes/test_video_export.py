"""The video mode's exports (issue 30, video): MP4 and WebM through Debian's
ffmpeg, frame-exact (ffprobe reads the composition's size, rate and frame
count), a frame of the video is the picture the runtime draws at that time,
progress is printed frame by frame, and a stopped export leaves no half
file and no ffmpeg behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageStat

from pneuma.host.exporters import exporter_for
from pneuma.host.plugins import get_plugin_manager
from tests.modes.video_sample import FPS, SIZE, write_sample

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
                                reason="needs Debian's ffmpeg (scripts/install installs it)")
PNEUMA = shutil.which("pneuma", path=str(Path(sys.executable).parent))
FRAMES = 2 * FPS


def export(workspace: Path, fmt: str, *extra: str) -> subprocess.CompletedProcess[str]:
    assert PNEUMA
    return subprocess.run([PNEUMA, "export", "-w", str(workspace), "--mode", "video", "--format", fmt, *extra],
                          capture_output=True, text=True, timeout=240, check=False)


def probe(path: Path) -> dict[str, str]:
    done = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
                           "stream=codec_name,width,height,r_frame_rate,nb_read_frames,pix_fmt:format=duration",
                           "-of", "json", str(path)], capture_output=True, text=True, check=True)
    data = json.loads(done.stdout)
    return {**data["streams"][0], "duration": data["format"]["duration"]}


def decoded_frame(video: Path, number: int, target: Path) -> Image.Image:
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(video), "-vf", f"select=eq(n\\,{number})",
                    "-frames:v", "1", str(target)], check=True)
    return Image.open(target).convert("RGB")


def mean_difference(a: Image.Image, b: Image.Image) -> float:
    return sum(ImageStat.Stat(ImageChops.difference(a, b)).mean) / 3


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample(tmp_path_factory.mktemp("video") / "ws")


@pytest.fixture(scope="module")
def mp4(sample: Path) -> tuple[Path, str]:
    done = export(sample, "mp4")
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip()), done.stderr


def test_the_mp4_has_the_compositions_size_rate_and_frames(mp4: tuple[Path, str]) -> None:
    path, stderr = mp4
    assert path.name == "Sample.mp4" and path.parent.name == "exports"
    stream = probe(path)
    assert (stream["codec_name"], stream["pix_fmt"]) == ("h264", "yuv420p")
    assert (stream["width"], stream["height"]) == SIZE
    assert stream["r_frame_rate"] == f"{FPS}/1"
    assert int(stream["nb_read_frames"]) == FRAMES
    assert float(stream["duration"]) == pytest.approx(2.0, abs=0.001)
    progress = [line for line in stderr.splitlines() if line.startswith("[pneuma] frame ")]
    assert progress[0] == f"[pneuma] frame 1/{FRAMES}" and progress[-1] == f"[pneuma] frame {FRAMES}/{FRAMES}"
    assert 5 <= len(progress) <= 12, progress  # about ten lines, not one per frame
    assert "60 frames, 2 s at 30 fps, 320×180" in stderr


def test_a_frame_of_the_mp4_is_the_runtimes_picture_at_that_time(sample: Path, mp4: tuple[Path, str],
                                                                  tmp_path: Path) -> None:
    done = export(sample, "png", "--param", "time=0.5", "-o", str(tmp_path / "capture.png"))
    assert done.returncode == 0, done.stderr
    capture = Image.open(tmp_path / "capture.png").convert("RGB")
    assert capture.size == SIZE
    # the box a CSS animation moves: at 0.5 s of 1 s it is half way (left 130 px of 260)
    assert capture.getpixel((160, 90))[:3] == (255, 136, 0)
    assert capture.getpixel((20, 90))[:3] != (255, 136, 0)
    same = decoded_frame(mp4[0], 15, tmp_path / "f15.png")
    later = decoded_frame(mp4[0], 45, tmp_path / "f45.png")  # a second away: the counter scene
    assert mean_difference(capture, same) < 3, "within H.264's loss"
    assert mean_difference(capture, later) > 10


def test_the_webm_is_vp9_with_every_frame_and_reports_progress(sample: Path, tmp_path: Path) -> None:
    exporter = exporter_for(get_plugin_manager(), "video")
    assert exporter is not None
    seen: list[tuple[int, int, str]] = []
    result = exporter.run(sample, "webm", tmp_path / "out.webm", progress=lambda *p: seen.append(p))
    stream = probe(result.files[0])
    assert (stream["codec_name"], stream["width"], stream["height"]) == ("vp9", *SIZE)
    assert int(stream["nb_read_frames"]) == FRAMES
    assert [done for done, _total, _what in seen] == list(range(1, FRAMES + 1))
    assert seen[-1] == (FRAMES, FRAMES, f"frame {FRAMES}/{FRAMES}")


def _ffmpeg_writing(part_name: str) -> bool:
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if part_name.encode() in cmdline.read_bytes():
                return True
        except OSError:
            continue
    return False


def _group_members(group: int) -> list[int]:
    """Processes still in process group ``group`` (pneuma's, Chromium's, ffmpeg's)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def test_ctrl_c_stops_ffmpeg_and_leaves_no_half_file(sample: Path, tmp_path: Path) -> None:
    assert PNEUMA
    target = tmp_path / "stopped.mp4"
    process = subprocess.Popen([PNEUMA, "export", "-w", str(sample), "--mode", "video", "--format", "mp4",
                                "-o", str(target)], stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stderr is not None
    part = f".{target.name}.{process.pid}.part"
    for line in process.stderr:  # a few frames in: ffmpeg is encoding into its partial file
        if line.startswith("[pneuma] frame 6/"):
            break
    assert _ffmpeg_writing(part)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to pneuma, Chromium and ffmpeg alike
    process.stderr.read()
    assert process.wait(timeout=60) != 0
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    deadline = time.monotonic() + 10
    while (_ffmpeg_writing(part) or _group_members(process.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _ffmpeg_writing(part) and _group_members(process.pid) == []  # no Chromium, no ffmpeg left


def test_a_broken_composition_is_one_line_saying_what_to_fix(tmp_path: Path) -> None:
    workspace = write_sample(tmp_path / "ws", fps=0)
    done = export(workspace, "mp4")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "pneuma: error: fps must be a number > 0, not 0 (Fix video.json, then export again)")
