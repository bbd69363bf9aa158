"""A small composition for the video mode's tests: 2 s at 30 fps, 320×180,
two scenes: a box a CSS animation moves left to right, then a frame counter
and a bar driven by ``pneuma.onFrame``. Each frame differs from the next,
so a wrong time shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SIZE = (320, 180)
FPS = 30
SCENES = [
    {"id": "slide", "title": "Slide", "file": "scenes/01-slide.html", "duration": 1},
    {"id": "count", "title": "Count", "file": "scenes/02-count.html", "duration": 1},
]
SLIDE = """<style>
.box { position: absolute; top: 60px; width: 60px; height: 60px; background: #f80;
  animation: move 1s linear both; }
@keyframes move { from { left: 0 } to { left: 260px } }
</style>
<div class="box"></div>
"""
COUNT = """<div id="n" style="color: white; font: 40px sans-serif; position: absolute; left: 20px; top: 20px">0</div>
<div id="bar" style="position: absolute; left: 0; bottom: 0; height: 30px; background: #0f8; width: 0"></div>
<script>
const n = document.getElementById("n"), bar = document.getElementById("bar");
pneuma.onFrame((t, info) => { n.textContent = String(info.frame); bar.style.width = (t * 320) + "px"; });
</script>
"""


def composition(**changes: Any) -> dict[str, Any]:
    return {"title": "Sample", "width": SIZE[0], "height": SIZE[1], "fps": FPS,
            "background": "#102030", "scenes": [dict(s) for s in SCENES], **changes}


def write_sample(workspace: Path, **changes: Any) -> Path:
    """The sample composition in ``workspace`` (created); ``changes`` override video.json's fields."""
    (workspace / "scenes").mkdir(parents=True, exist_ok=True)
    (workspace / "video.json").write_text(json.dumps(composition(**changes), indent=2), encoding="utf-8")
    (workspace / "scenes" / "01-slide.html").write_text(SLIDE, encoding="utf-8")
    (workspace / "scenes" / "02-count.html").write_text(COUNT, encoding="utf-8")
    return workspace
