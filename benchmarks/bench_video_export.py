"""The video mode's MP4 export, in seconds per second of video, beside
ffmpeg encoding the same frames already on disk, in the same run.

    python benchmarks/bench_video_export.py [--runs 2] [--quick]

A 640×360, 30 fps composition of 4 s (2 s with --quick): a scene a CSS
animation moves, and a scene of 24 bars driven by ``pneuma.onFrame``.
Measured, interleaved so that a change of load moves all of them:

- **export**: ``pneuma export --format mp4`` as the Export menu runs it
  (``Exporter.run``: one Chromium, each frame drawn through the runtime's
  ``seek`` and captured, streamed into ffmpeg as PNGs);
- **frames alone**: the same frames drawn and captured, each written to a
  PNG file, no encoding (for reference);
- **baseline, the encode alone**: ffmpeg encoding those PNG files, already
  on disk, with the export's own codec settings — what any MP4 of these
  frames costs at least.

The figure is the export's median per second of video, and its ratio to the
encode alone. Everything stays on this machine (a private origin inside the
browser, no server); exit 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import time
from pathlib import Path

from _common import finish, median, row, temp_dir

TARGET_S_PER_S = 4.0  # two cores, a shared machine: a 10 s video in under 40 s
WIDTH, HEIGHT, FPS = 640, 360, 30
SLIDE = """<style>
.box { position: absolute; top: 120px; width: 120px; height: 120px; border-radius: 16px;
  background: linear-gradient(135deg, #ff8a00, #e52e71); animation: move 2s ease-in-out both; }
@keyframes move { from { left: 20px; transform: rotate(0) } to { left: 500px; transform: rotate(180deg) } }
h1 { position: absolute; left: 20px; top: 10px; color: white; font: 700 40px sans-serif; margin: 0 }
</style><h1>Quarterly numbers</h1><div class="box"></div>
"""
BARS = """<div id="bars" style="position:absolute;inset:40px;display:flex;align-items:flex-end;gap:4px"></div>
<script>
const bars = document.getElementById("bars");
for (let i = 0; i < 24; i++) { const b = document.createElement("div");
  b.style.cssText = "flex:1;background:#4c6fff;height:0"; bars.append(b); }
pneuma.onFrame((t) => [...bars.children].forEach((b, i) =>
  { b.style.height = (50 + 45 * Math.sin(t * 3 + i / 3)) + "%"; }));
</script>
"""


def build_workspace(folder: Path, seconds: int) -> Path:
    workspace = folder / "video"
    (workspace / "scenes").mkdir(parents=True)
    half = seconds / 2
    (workspace / "video.json").write_text(json.dumps({
        "title": "bench", "width": WIDTH, "height": HEIGHT, "fps": FPS, "background": "#0b1020",
        "scenes": [{"id": "slide", "title": "Slide", "file": "scenes/slide.html", "duration": half},
                   {"id": "bars", "title": "Bars", "file": "scenes/bars.html", "duration": half}]}))
    (workspace / "scenes" / "slide.html").write_text(SLIDE)
    (workspace / "scenes" / "bars.html").write_text(BARS)
    return workspace


def export_once(workspace: Path, output: Path) -> float:
    from pneuma.host.exporters import all_exporters
    from pneuma.host.plugins import get_plugin_manager

    exporter = all_exporters(get_plugin_manager())["video"]
    started = time.monotonic()
    exporter.run(workspace, "mp4", output, {})
    return time.monotonic() - started


def frames_once(workspace: Path, folder: Path) -> float:
    from pneuma_video.composition import read_composition
    from pneuma_video.frames import frames_of

    composition = read_composition(workspace)
    folder.mkdir(parents=True, exist_ok=True)

    async def draw() -> None:
        n = 0
        async for png in frames_of(workspace, composition, range(composition.total_frames)):
            (folder / f"f{n:05d}.png").write_bytes(png)
            n += 1

    started = time.monotonic()
    asyncio.run(draw())
    return time.monotonic() - started


def encode_once(frames: Path, output: Path) -> float:
    from pneuma_video.encode import CODECS, rate

    started = time.monotonic()
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-framerate", rate(FPS),
                    "-i", str(frames / "f%05d.png"), *CODECS["mp4"], "-r", rate(FPS), str(output)],
                   check=True, timeout=300)
    return time.monotonic() - started


def frame_count(path: Path) -> str:
    return subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                           "stream=nb_read_frames", "-of", "csv=p=0", str(path)],
                          capture_output=True, text=True, check=True).stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="a 2 s video, one run of each")
    args = parser.parse_args()
    runs = 1 if args.quick else max(1, args.runs)
    seconds = 2 if args.quick else 4
    if shutil.which("ffmpeg") is None:
        print("ffmpeg is not installed: nothing measured (scripts/install installs it)")
        return finish([], "skipped")
    folder = temp_dir("pneuma-bench-video-")
    try:
        workspace = build_workspace(folder, seconds)
        exported, drawn, encoded = [], [], []
        for n in range(runs):
            frames = folder / f"frames{n}"
            drawn.append(frames_once(workspace, frames))
            exported.append(export_once(workspace, folder / f"export{n}.mp4"))
            encoded.append(encode_once(frames, folder / f"encode{n}.mp4"))
            shutil.rmtree(frames)
            print(f"run {n + 1}: export {exported[-1]:.2f} s, frames alone {drawn[-1]:.2f} s, "
                  f"encode alone {encoded[-1]:.2f} s (for {seconds} s of video)", flush=True)
        print(f"frames in each MP4: export {frame_count(folder / 'export0.mp4')}, "
              f"encode alone {frame_count(folder / 'encode0.mp4')} (expected {seconds * FPS})")
        export_s, encode_s = median(exported) / seconds, median(encoded) / seconds
        rows = [
            row(f"video: MP4 export, {WIDTH}×{HEIGHT}@{FPS}, s per s of video", export_s, TARGET_S_PER_S, "s",
                "lower", encode_s, "ffmpeg encoding the same frames from disk"),
            row("video: MP4 export / encode alone", export_s / encode_s, None, "x", "lower", info=True),
            row("video: frames drawn and captured alone, s per s of video", median(drawn) / seconds, None, "s",
                "lower", info=True),
        ]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return finish(rows, f"{runs} run(s) of each, interleaved; medians; {seconds} s of video")


if __name__ == "__main__":
    raise SystemExit(main())
