"""The scenes' timeline runtime (plugins/video/pneuma_video/static/runtime.js)
in headless Chromium, through the export's own page: a frame depends on
the time asked, not on the frames drawn before it — an animation that
finished is found again when the player seeks back, and one a scene starts
later runs from the frame it started on."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pneuma_video.composition import read_composition
from pneuma_video.frames import frame_page

from tests.modes.video_sample import write_sample

SCENE = """<style>
.box { position: absolute; top: 0; left: 0; width: 20px; height: 20px; background: #fff; }
.once { animation: once 0.5s linear; }
@keyframes once { from { left: 0 } to { left: 200px } }
.late { top: 100px; }
.late.go { animation: once 0.5s linear forwards; }
</style>
<div class="box once" id="once"></div>
<div class="box late" id="late"></div>
<script>
const late = document.getElementById("late");
pneuma.onFrame((t) => late.classList.toggle("go", t >= 0.4));
</script>
"""


def lefts(workspace: Path, times: list[float]) -> list[tuple[float, float]]:
    """(left of #once, left of #late) in px after seeking to each time in turn."""
    composition = read_composition(workspace)

    async def run() -> list[tuple[float, float]]:
        found = []
        async with frame_page(workspace, composition) as page:
            await page.show(composition.scenes[0])
            for t in times:
                await page.seek(t)
                found.append(tuple(await page.page.evaluate(
                    "() => ['once', 'late'].map((id) => document.getElementById(id).getBoundingClientRect().left)")))
        return found

    return asyncio.run(run())


def test_a_frame_is_the_time_asked_whatever_came_before(tmp_path: Path) -> None:
    workspace = write_sample(tmp_path / "ws")
    (workspace / "scenes" / "01-slide.html").write_text(SCENE)
    frames = [n / 10 for n in range(10)]  # played frame by frame, then two seeks back
    found = lefts(workspace, [*frames, 0.25, 0.0])
    once = [left for left, _late in found]
    # 0.5 s from 0 to 200 px, then back to its place (no fill): and again when sought back
    assert once == [0, 40, 80, 120, 160, 0, 0, 0, 0, 0, 100, 0]
    late = [left for _once, left in found]
    # started by onFrame at 0.4 s, it runs from that frame and stays at its end
    assert late[:4] == [0, 0, 0, 0] and late[4:9] == [0, 40, 80, 120, 160] and late[9] == 200
