"""The video mode's agent tools (manifest "tools", served over MCP):

- ``capture_frame {time, output?}``: the frame at ``time`` drawn headlessly
  through the scenes' runtime, the same ``seek`` as the export and the
  player, saved as a PNG under ``exports/`` (the player's capture-frame
  action calls it too);
- ``composition_report``: the scenes with their start, duration and frames,
  the totals, and what is wrong (problems.py), without a browser.

Paths go through the workspace sandbox; the PNG is written by fd inside it.
"""

from __future__ import annotations

import posixpath
from typing import Any

from pneuma.api import ExportError, ToolContext, ToolError, write_in_workspace
from pneuma_video.composition import (
    COMPOSITION_FILE,
    CompositionError,
    read_composition,
)
from pneuma_video.frames import capture_png
from pneuma_video.problems import composition_problems


def _time(args: dict[str, Any]) -> float:
    value = args.get("time", 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ToolError("E_BAD_ARGS", f"time must be a number of seconds ≥ 0, not {value!r}",
                        details={"field": "time"})
    return float(value)


def capture_frame(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    seconds = _time(args)
    try:
        composition = read_composition(ctx.workspace)
    except CompositionError as exc:
        raise ToolError("E_CONFLICT", str(exc), details={"file": COMPOSITION_FILE},
                        hint="Fix video.json (composition_report says what is wrong)") from None
    frame = composition.frame_at(seconds)
    output = ctx.sandbox.normalize(args.get("output") or posixpath.join("exports", f"frame-{frame}.png"))
    if not output.lower().endswith(".png"):
        raise ToolError("E_BAD_ARGS", f"output {output} does not end in .png", details={"field": "output"},
                        hint="Name the file *.png")
    scene, local = composition.scene_at_frame(frame)
    try:
        png = capture_png(ctx.workspace, composition, seconds)
    except ExportError as exc:
        raise ToolError(exc.code, f"cannot capture the frame at {seconds:g} s: {exc}", hint=exc.hint,
                        details={"scene": scene.id, "file": scene.file}) from None
    write_in_workspace(ctx.sandbox, output, png)
    return {"output": output, "time": frame / composition.fps, "frame": frame, "scene": scene.id,
            "sceneTime": round(local, 6), "width": composition.width, "height": composition.height,
            "bytes": len(png)}


def composition_report(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    composition, found = composition_problems(ctx.workspace)
    problems = [f.as_dict() for f in found]
    if composition is None:
        return {"valid": False, "scenes": [], "problems": problems}
    scenes = [{"index": s.index, "id": s.id, "title": s.title, "file": s.file, "start": composition.start_time(s),
               "duration": s.duration, "startFrame": s.start_frame, "frames": s.frames}
              for s in composition.scenes]
    return {"valid": not any(f.severity == "error" for f in found), "title": composition.title,
            "width": composition.width, "height": composition.height, "fps": composition.fps,
            "duration": composition.duration, "totalFrames": composition.total_frames,
            "scenes": scenes, "problems": problems}
