"""The video mode's checks after every turn (docs/checks.md, docs/video.md
"Checks").

- ``composition``: ``video.json`` reads (its fields, each scene's file
  exists); a scene the turn changed that moves by the wall clock is a
  warning naming the file and line (problems.py).
- ``scenes-run``: each scene the turn changed is loaded in headless
  Chromium through the runtime and drawn at its first frame, as the export
  does; what it throws is an error with its line in the scene's file.
"""

from __future__ import annotations

from pneuma.api import CheckRequest, ExportError, Problem, TurnCheck
from pneuma_video.composition import COMPOSITION_FILE, Composition
from pneuma_video.frames import load_errors
from pneuma_video.problems import Found, composition_problems


def _problem(found: Found) -> Problem:
    severity = "warning" if found.severity == "warning" else "error"
    return Problem(found.message, file=found.file, line=found.line, severity=severity,
                   locate=found.locate or None)


def _touched(request: CheckRequest, composition: Composition | None) -> set[str]:
    """The composition's files the turn changed (video.json and scene files)."""
    files = {COMPOSITION_FILE} | ({s.file for s in composition.scenes} if composition else set())
    return files & set(request.changed)


def composition_reads(request: CheckRequest) -> list[Problem]:
    composition, found = composition_problems(request.workspace)
    touched = _touched(request, composition)
    if not touched:
        return []
    # a wall-clock warning is the turn's only when the turn wrote that scene
    return [_problem(f) for f in found if f.severity == "error" or f.file in touched]


def scenes_run(request: CheckRequest) -> list[Problem]:
    composition, found = composition_problems(request.workspace)
    if composition is None:
        return []  # the composition check says why
    missing = {f.locate.get("scene") for f in found if f.severity == "error"}
    scenes = [s for s in composition.scenes if s.file in request.changed and s.id not in missing]
    if not scenes:
        return []
    try:
        errors = load_errors(request.workspace, composition, scenes)
    except ExportError as exc:  # a scene that never finishes loading or drawing
        return [Problem(str(exc), file=scenes[0].file, locate={"scene": scenes[0].id})]
    problems: list[Problem] = []
    for scene in scenes:
        for error in errors.get(scene.index, []):
            where = f"{scene.file} line {error.line}" if error.line else scene.file
            problems.append(Problem(f"{where}: {scene.label()} throws: {error.message}", file=scene.file,
                                    line=error.line,
                                    locate={"scene": scene.id, "time": composition.start_time(scene)}))
    return problems


CHECKS = [
    TurnCheck(mode="video", name="composition", label={"en": "Composition reads", "zh-CN": "视频结构可读"},
              run=composition_reads),
    TurnCheck(mode="video", name="scenes-run", label={"en": "Scenes run", "zh-CN": "场景可运行"},
              run=scenes_run),
]
